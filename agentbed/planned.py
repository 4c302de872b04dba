"""A plan's episodes made on demand: every (agent, task, seed), in that order, as a sequence.

``agentbed run --seeds 100000`` plans 100,000 episodes; as a list of :class:`EpisodeSpec` they
held about 330 bytes each before the first one ran (twice over once each got its run binding
and provenance). A :class:`Planned` holds the three axes and one template, and makes the spec at
an index when it is asked for: the executors iterate, slice and count it like the list it replaces.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

from agentbed.runner import EpisodeSpec


@dataclass(frozen=True)
class Planned(Sequence[EpisodeSpec]):
    """``[replace(template, agent=a, task=t, seed=s) for a in agents for t in tasks for s in seeds]``, lazily."""

    template: EpisodeSpec  # everything but agent, task and seed
    agents: tuple[str, ...]
    tasks: tuple[str, ...]
    seeds: Sequence[int]  # a range (a new plan's, or a recorded one's one step apart) or a tuple

    def __len__(self) -> int:
        return len(self.agents) * len(self.tasks) * len(self.seeds)

    @overload
    def __getitem__(self, i: int) -> EpisodeSpec: ...

    @overload
    def __getitem__(self, i: slice) -> list[EpisodeSpec]: ...

    def __getitem__(self, i: int | slice) -> EpisodeSpec | list[EpisodeSpec]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"episode {i} of a plan of {n}")
        a, rest = divmod(i % n, len(self.tasks) * len(self.seeds))
        t, s = divmod(rest, len(self.seeds))
        return self._spec(self.agents[a], self.tasks[t], self.seeds[s])

    def __iter__(self) -> Iterator[EpisodeSpec]:
        for a in self.agents:
            for t in self.tasks:
                for s in self.seeds:
                    yield self._spec(a, t, s)

    def _spec(self, agent: str, task: str, seed: int) -> EpisodeSpec:
        return replace(self.template, agent=agent, task=task, seed=seed)

    def with_fields(self, **changes: Any) -> Planned:
        """Every episode with ``changes`` made (as ``dataclasses.replace`` on each)."""
        return replace(self, template=replace(self.template, **changes))
