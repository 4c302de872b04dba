"""The oversight controllers on live runs (issue 54 item 7): a policy fitted offline on a branching
dataset (the action-conditioned controller, a band router, the cost-derived rule, any
``fit``/``choose`` controller of :mod:`controllers.oversight.policies`) deciding at the checkpoints
of an episode (the build's fixed steps, or where the target places them, e.g. AgentDojo's injection) through the engine's controller chain (:class:`agentbed.control.Controller`).

At a checkpoint step, before the proposed action is executed, it computes the same prefix features
the dataset builder records (:func:`controllers.oversight.dataset.checkpoint_features`, from the
executed steps and the risks the agent stated so far) and asks the policy, exactly as offline
evaluation does, for one checkpoint. ``continue`` lets the action through; an intervention hands
the episode to the intervention's agent, built (like a branch's) from the environment and a copy of
the base agent taken before it proposed, and stopped when it has used the step budget the target gives
it (``BranchTarget.budgets``, as its branches were capped); ``quit`` stops the episode. Every decision is recorded in
the step's ``control`` member (so into the log's hash chain), ``continue`` included. With
``shadow`` it only records what it would do (every checkpoint of the base trajectory is then
decided, as offline); otherwise it decides nothing after its first handover or stop.

Entry point: :func:`live_controller` (a fitted policy, its dataset's provenance and a target);
``agentbed control`` and ``--controller`` factories build it per episode from an EpisodeSetup.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentbed.agents.base import Action, Agent
from agentbed.control import CONTINUE, Controller, StepContext, Verdict, handover, stop
from agentbed.env import ToolEnv
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.dataset import checkpoint_features, stated_risk
from controllers.oversight.features import feature_matrix
from controllers.oversight.target import BranchTarget
from controllers.oversight.utility import CONTINUE as CONTINUE_ACTION
from controllers.oversight.utility import QUIT, Costs


@dataclass
class Decision:
    """One checkpoint's decision, as the controller recorded it."""

    step: int
    choice: str
    risk: float
    features: dict[str, float] = field(default_factory=dict)


class OversightController(Controller):
    """A fitted oversight policy deciding live at ``steps`` (see the module's docstring)."""

    name = "oversight"

    def __init__(self, policy: Any, costs: Costs, target: BranchTarget, env: ToolEnv, steps: Collection[int],
                 feature_names: Sequence[str], actions: Sequence[str], primary: str, shadow: bool = False,
                 most: int = 1) -> None:
        self.policy, self.costs, self.target, self.env = policy, costs, target, env
        self.steps, self.feature_names, self.actions = frozenset(steps), tuple(feature_names), list(actions)
        self.most = most  # checkpoints at most, where the target places them (checkpoint_when)
        self.primary, self.shadow = primary, shadow
        self.decisions: list[Decision] = []
        self._first_observation: str | None = None
        self._risks: list[float] = []
        self._before: Agent | None = None
        self._acted = False  # after a handover or a stop the policy has had its say
        self._cap: tuple[int, str] | None = None  # (step, intervention): where a handover's step budget ends it

    def observe(self, ctx: StepContext) -> None:
        """Before the agent proposes: keep the first observation, and at a checkpoint a copy of the
        agent as it was (an intervention takes over from it, as in a branch)."""
        if ctx.step == 0:
            self._first_observation = ctx.observation
        self._before = ctx.agent.fork() if self._at_checkpoint(ctx) and not self._acted else None
        return None

    def _at_checkpoint(self, ctx: StepContext) -> bool:
        """A checkpoint as the build placed them: its fixed steps, or where the target says (at
        most as many as the build took)."""
        when = self.target.checkpoint_when
        if when is None:
            return ctx.step in self.steps
        return len(self.decisions) < self.most and when(ctx.history)

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        self._risks.append(stated_risk(proposed.risk, self._risks))
        if self._cap is not None and ctx.step >= self._cap[0]:
            # the intervention gives up after its budget, as its branches did (BranchTarget.budgets)
            reason = f"{self._cap[1]} gave up after its budget of {self.target.budgets[self._cap[1]]} steps"
            return _recorded(stop(reason), {"budget": self._cap[1], "step": ctx.step})
        if self._before is None:
            return CONTINUE
        features = checkpoint_features(self.target, self._first_observation or "", ctx.history, self._risks)
        choice = str(self.policy.choose(self._checkpoint(ctx, features), self.costs)[0])
        self.decisions.append(Decision(ctx.step, choice, self._risks[-1], features))
        record = {"checkpoint": ctx.step, "choice": choice, "risk": self._risks[-1], "shadow": self.shadow,
                  "policy": getattr(self.policy, "name", type(self.policy).__name__)}
        reason = f"oversight policy at step {ctx.step}: {choice}"
        if self.shadow or choice == CONTINUE_ACTION:
            return Verdict("continue", reason=reason, record=record)
        self._acted = True
        if choice == QUIT:
            return _recorded(stop(reason), record)
        agent = self.target.interventions[choice](self.env, self._before.fork())
        if choice in self.target.budgets:  # it acts at once, at this step: the budget counts this one
            self._cap = (ctx.step + self.target.budgets[choice], choice)
        return _recorded(handover(agent, reason), record)

    def _checkpoint(self, ctx: StepContext, features: dict[str, float]) -> Checkpoints:
        """One checkpoint, shaped as offline evaluation hands it to ``choose`` (no outcomes)."""
        return Checkpoints(keys=[(ctx.task, ctx.step)], games=np.asarray([ctx.task], dtype=object),
                           X=feature_matrix([features], self.feature_names), risk=np.asarray([self._risks[-1]]),
                           actions=self.actions, outcomes={a: [[]] for a in self.actions}, primary=self.primary,
                           feature_names=self.feature_names)


def _recorded(verdict: Verdict, record: dict[str, Any]) -> Verdict:
    return Verdict(verdict.kind, verdict.action, verdict.agent, verdict.reason, record, verdict.by)


def live_controller(policy: Any, provenance: dict[str, Any], target: BranchTarget, env: ToolEnv,
                    costs: Costs, primary: str, shadow: bool = False) -> OversightController:
    """The stable entry point: ``policy`` (fitted on a dataset with this ``provenance``) deciding
    at the checkpoint steps that dataset's build used, on ``target``'s environment ``env``."""
    from controllers.oversight.dataset import BuildConfig

    config = provenance["config"]
    steps = BuildConfig(**{k: config[k] for k in ("benchmark", "first", "every", "checkpoints")}
                        ).checkpoint_steps(target.max_steps)
    actions = [a for a in provenance["actions"] if a != QUIT]
    return OversightController(policy, costs, target, env, steps, provenance["feature_names"], actions, primary,
                               shadow, most=int(config["checkpoints"]))
