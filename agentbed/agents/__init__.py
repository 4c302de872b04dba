"""Agents: anything with ``act(observation, tools) -> Action``."""

from agentbed.agents.base import Action, Agent, Usage

__all__ = ["Action", "Agent", "Usage"]
