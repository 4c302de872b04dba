"""A controller for the vault suite: no vault is opened with a token fetched before slow chores.

Run it on any vault run (the naive agent fetches its token first, then reads the logs):

    agentbed run vault --agent naive --controller examples/controller/stale_token.py:StaleTokenGuard
    agentbed run vault --agent naive --controller examples/controller/stale_token.py:hand_to_oracle

``StaleTokenGuard`` stops such an episode; ``hand_to_oracle`` (a factory: it is given the
episode's setup) hands it to the suite's oracle instead. Each decision, who made it and why is
in the step's ``control`` member of the log (``agentbed replay LOG`` shows it).
"""

from __future__ import annotations

import json

from agentbed.agents.base import Action
from agentbed.control import CONTINUE, Controller, StepContext, Verdict, handover, stop
from agentbed.factories import EpisodeSetup


def _tool(text: str | bytes) -> str:
    try:
        call = json.loads(text)
    except ValueError:
        return ""
    return str(call.get("tool", "")) if isinstance(call, dict) else ""


def chores_since_token(ctx: StepContext) -> int:
    """Log pages read since the last token was fetched (each costs 15 virtual seconds)."""
    chores = 0
    for step in ctx.history:
        name = _tool(step.action)
        if name == "get_token":
            chores = 0
        elif name == "read_logs":
            chores += 1
    return chores


class StaleTokenGuard(Controller):
    """Stops an ``open_vault`` that follows chores done after its token was fetched."""

    name = "stale-token-guard"

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        if _tool(proposed.text) != "open_vault" or chores_since_token(ctx) == 0:
            return CONTINUE
        return stop(f"the token was fetched before {chores_since_token(ctx)} slow chores: it has likely expired")


class HandToOracle(StaleTokenGuard):
    """The same check; instead of stopping, the suite's oracle finishes the episode."""

    name = "hand-to-oracle"

    def __init__(self, setup: EpisodeSetup) -> None:
        self.setup = setup

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        verdict = super().before_action(ctx, proposed)
        if verdict.kind != "stop":
            return verdict
        return handover(self.setup.make_agent("oracle"), verdict.reason + "; the oracle takes over")


def hand_to_oracle(setup: EpisodeSetup) -> Controller:
    return HandToOracle(setup)
