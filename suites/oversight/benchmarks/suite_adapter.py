"""Any installed suite as a branching benchmark (``suite:NAME``), from its own agents.

Base agents are named suite agents; an intervention is another named suite agent handed the
episode at the checkpoint, reset and starting from the current observation (a handover, as
the engine's controller hook does it). Agents that give no ``Action.risk`` report 0.5, so
scalar routing degenerates to a fixed policy there: that is a property of the benchmark's
agents, reported as such, not hidden.
"""

from __future__ import annotations

from typing import Any

from agentbed.agents.base import Agent
from agentbed.env import ToolEnv
from agentbed.errors import UsageError
from agentbed.runner import EpisodeSpec
from agentbed.suite import SuiteError, get_suite
from controllers.oversight.target import BranchTarget


def suite_target(name: str, base: str = "", interventions: str = "", **options: Any) -> BranchTarget:
    try:
        suite = get_suite(name)
    except SuiteError as exc:
        raise UsageError(str(exc)) from None
    opts = suite.resolve_options({})
    bases = [b for b in base.split(",") if b] or [suite.default_agent]
    helpers = [h for h in interventions.split(",") if h]
    if not helpers:
        raise UsageError(f"suite:{name}: name the intervention agents (--interventions AGENT[,AGENT])")
    for agent in [*bases, *helpers]:
        if not suite.has_agent(agent):
            raise UsageError(f"suite:{name}: no agent {agent!r} (agents: {', '.join(suite.agent_names())})")

    def base_factory(agent: str) -> Any:
        return lambda seed: suite.make_agent(EpisodeSpec(name, "", agent, seed, opts))

    def handover(agent: str) -> Any:
        def make(env: ToolEnv, _base: Agent) -> Agent:
            helper = suite.make_agent(EpisodeSpec(name, env.task.id, agent, 0, opts), env)
            helper.reset(seed=0, task=env.task)
            return helper

        return make

    return BranchTarget(
        name=f"suite-{name}", games=suite.task_ids(opts), make_env=lambda game: suite.make_env(game, opts),
        base_agents={b: base_factory(b) for b in bases}, interventions={h: handover(h) for h in helpers},
        max_steps=suite.budget.max_steps, notes={"suite": name, "handover": "fresh suite agent at the checkpoint"})
