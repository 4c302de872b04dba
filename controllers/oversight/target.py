"""What the branching protocol needs from a benchmark: a :class:`BranchTarget`.

The benchmarks that provide one are put together in the composition layer
(suites/oversight/benchmarks); the dataset builder receives a loader for them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentbed.agents.base import Agent
from agentbed.control import StepView
from agentbed.env import ToolEnv

Intervention = Callable[[ToolEnv, Agent], Agent]
ProgressFeatures = Callable[[str, Sequence[StepView]], dict[str, float]]


@dataclass
class BranchTarget:
    """A benchmark the dataset builder can branch.

    ``games`` are the task ids (the unit held out by cross-validation); ``base_agents`` maps a
    flaw name to ``factory(seed) -> Agent``; ``interventions`` maps an action name to
    ``factory(env, agent) -> Agent`` called at the checkpoint (``env`` is the branch's own
    environment in the checkpoint state, ``agent`` a private copy of the base agent);
    ``uses_global_random`` seeds Python's ``random`` before every replay and rollout.
    ``progress_features(first_observation, history)`` adds benchmark-specific prefix features
    (named ``progress_feature_names``) to the generic ones; it must read only the prefix.
    ``budgets[action]`` caps the steps that intervention may take from the checkpoint.
    ``checkpoint_when(history)``, if set, replaces the build's fixed checkpoint steps: a
    checkpoint is any step whose executed prefix satisfies it (AgentDojo: the injection was just
    read), at most the build's ``checkpoints`` of them.
    """

    name: str
    games: list[str]
    make_env: Callable[[str], ToolEnv]
    base_agents: dict[str, Callable[[int], Agent]]
    interventions: dict[str, Intervention]
    max_steps: int = 50
    uses_global_random: bool = False
    primary_intervention: str = ""
    notes: dict[str, Any] = field(default_factory=dict)
    progress_features: ProgressFeatures | None = None
    progress_feature_names: tuple[str, ...] = ()
    # The unit held out and resampled: games of one group share what makes them alike (GraphRAG:
    # one question under several attacks). None: every game is its own group.
    group: Callable[[str], str] | None = None
    # Steps an intervention may take before it gives up: its branch ends there, failed (an expert
    # with a budget finishes only where the remaining plan is short).
    budgets: dict[str, int] = field(default_factory=dict)
    checkpoint_when: Callable[[Sequence[StepView]], bool] | None = None

    def group_of(self, game: str) -> str:
        return self.group(game) if self.group is not None else game

    def __post_init__(self) -> None:
        if not self.primary_intervention:
            self.primary_intervention = next(iter(self.interventions))


def reseed_agent(agent: Agent, seed: int) -> None:
    """Give a stochastic agent fresh randomness for one rollout.

    Agents offer ``reseed(seed)``; failing that, an ``rng`` attribute holding a
    ``random.Random`` is replaced. Deterministic agents are left as they are.
    """
    if hasattr(agent, "reseed"):
        agent.reseed(seed)
    elif isinstance(getattr(agent, "rng", None), random.Random):
        agent.rng = random.Random(seed)


TargetLoader = Callable[..., BranchTarget]
"""``loader(name, **options) -> BranchTarget``; a module-level function, so worker processes can
receive it."""
