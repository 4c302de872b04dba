"""The runner's controller step: what the controllers of one episode decide, and its record.

:func:`agentbed.runner.run_episode` asks an :class:`Oversight` three things: how to set the
episode up (``brief``, once, before a fresh episode's first action), what the agent reads at
each step (``show``) and what becomes of each proposed action (``review``). The record of every
decision (who decided, the verdict, why, what was proposed when it was not what ran) is what
the log keeps in the step's ``control`` member, or in a ``control`` record when the episode is
stopped, so it is inside the hash chain and every surface that reads logs can show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentbed.control import StepContext, begin_of, decide, observe_of
from agentbed.log import encode_action

if TYPE_CHECKING:
    from agentbed.agents.base import Action, Agent
    from agentbed.env import ToolEnv
    from agentbed.tools import Tool


@dataclass
class Reviewed:
    """What became of one proposed action: ``action`` (by ``agent``) runs, unless ``stopped``."""

    action: Action
    agent: Agent
    record: dict[str, Any] | None
    stopped: bool = False
    reason: str = ""


class Oversight:
    """The controllers of one episode (a :class:`agentbed.control.Controller` or a chain of them)."""

    def __init__(self, controller: Any, env: ToolEnv, seed: int) -> None:
        self.controller, self.env, self.seed = controller, env, seed
        self._briefed: dict[str, Any] | None = None  # recorded on the first step
        self._shown: dict[str, Any] | None = None

    def brief(self, ctx: StepContext, tools: list[Tool]) -> list[Tool]:
        """The tools to offer after the controllers' ``begin``; their instruction goes to the agent."""
        briefing = begin_of(self.controller, ctx, tools)
        if briefing is None:
            return tools
        if briefing.tools is not None:
            self.env.restrict_tools(list(briefing.tools))
            tools = self.env.tool_specs()
        self._briefed = dict(briefing.record)
        if briefing.instruction:  # only an agent with a prompt can take it (a chat model's system prompt)
            instruct = getattr(ctx.agent, "add_instruction", None)
            if instruct is not None:
                instruct(briefing.instruction)
            self._briefed["instruction_taken"] = instruct is not None
        return tools

    def show(self, ctx: StepContext) -> str:
        """What the agent reads at this step (the true observation unless a controller changed it)."""
        shown = observe_of(self.controller, ctx)
        self._shown = None if shown is None else shown.record
        return ctx.observation if shown is None else shown.observation

    def review(self, ctx: StepContext, proposed: Action, shown: str, tools: Sequence[Tool]) -> Reviewed:
        """The controllers' verdict on ``proposed``; a handover's agent acts at once on ``shown``."""
        verdict = decide(self.controller, ctx, proposed)
        record = None
        if verdict.kind != "continue" or verdict.record or self._shown is not None or self._briefed is not None:
            record = verdict.to_dict()
            if self._briefed is not None:
                record["begin"], self._briefed = self._briefed, None
            if self._shown is not None:
                record["shown"] = self._shown
        if verdict.kind == "stop":
            return Reviewed(proposed, ctx.agent, record, stopped=True, reason=verdict.reason or "controller")
        if verdict.kind == "replace" and verdict.action is not None:
            assert record is not None
            record["proposed"] = encode_action(proposed.text)
            return Reviewed(verdict.action, ctx.agent, record)
        if verdict.kind == "handover" and verdict.agent is not None:
            assert record is not None
            record["proposed"] = encode_action(proposed.text)
            agent = verdict.agent
            agent.reset(seed=self.seed, task=self.env.task)
            return Reviewed(agent.act(shown, tools), agent, record)
        return Reviewed(proposed, ctx.agent, record)
