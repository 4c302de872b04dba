"""The report's episodes folded as they are read: what its sections show of them (counts per
workload and agent, the heat-maps, the oversight decisions, the episodes to read first), kept
without holding the episodes, so a run of 100,000 is reported in flat memory.

Every figure is the one the sections computed from the list of every episode, in the same order
(tests/report/test_report_tally.py holds them equal): only the episodes a table may show are kept.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed.decisions import Decision
from agentbed.diskmap import DiskMap
from agentbed.files import resolved
from agentbed.report.plots import SuccessCells
from agentbed.rundir import INDEX

FULL_LIST = 100  # up to this many episodes, the table lists every one
TOP_EPISODES = 40  # beyond it, at most this many: the ones to read first


@dataclass
class Episode:
    record: dict[str, Any]
    index: str  # the index file it came from, relative to the run directory, or "<dir>/episodes (no index)"
    log: str  # its trajectory log, relative to the run directory ("" when unknown)
    log_check: str  # "verified", "missing", or why verification failed
    decisions: list[Decision] = field(default_factory=list)  # its overseers' decisions (a verified log's)


def priority(ep: Episode) -> int:
    """0 = read first: a log that does not verify; then errors; then stopped or budget-cut; then failed."""
    status = ep.record.get("status")
    if ep.log_check != "verified":
        return 0
    if status == "error":
        return 1
    if status in ("stopped", "budget"):
        return 2
    return 3 if not ep.record.get("success") else 4


@dataclass
class AgentTally:
    """One (suite, agent)'s row of the aggregates table."""
    episodes: int = 0
    status: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    steps: float = 0  # the sum of the numeric ``steps``, added in index order as sum() would
    with_steps: int = 0
    tokens: float = 0
    succeeded: int = 0
    not_verified: int = 0

    def add(self, ep: Episode) -> None:
        r = ep.record
        self.episodes += 1
        self.status[str(r.get("status", "?"))] += 1
        self.labels.update(str(x) for x in (r.get("labels") or []))
        if isinstance(r.get("steps"), int | float):
            self.steps += r["steps"]
            self.with_steps += 1
        if isinstance(r.get("tokens"), int | float):
            self.tokens += r["tokens"]
        self.succeeded += bool(r.get("success"))
        self.not_verified += ep.log_check != "verified"


class FirstToRead:
    """Per urgency class (:func:`priority` 0-3) and (suite, agent), the ``n`` episodes that class's
    queue would give first: each task once before any task's second seed, otherwise index order."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seq = 0
        # level -> (suite, agent), in first-seen order -> (times each task was seen, heap of the n first)
        self.levels: list[dict[tuple[str, str], tuple[Counter[str], list[tuple[int, int, Episode]]]]] = \
            [{} for _ in range(4)]

    def add(self, ep: Episode) -> None:
        level = priority(ep)
        if level > 3:
            return
        key = (str(ep.record.get("suite", "")), str(ep.record.get("agent", "")))
        seen, kept = self.levels[level].setdefault(key, (Counter(), []))
        task = str(ep.record.get("task", ""))
        self.seq += 1
        heapq.heappush(kept, (-seen[task], -self.seq, ep))  # the heap's top is the last of those kept
        seen[task] += 1
        if len(kept) > self.n:
            heapq.heappop(kept)

    def chosen(self) -> list[Episode]:
        """The ``n`` to read first, most urgent class first, round-robin over (suite, agent)."""
        chosen: list[Episode] = []
        for level in self.levels:
            queues = {key: [ep for _, _, ep in sorted(kept, reverse=True)] for key, (_, kept) in level.items()}
            while queues and len(chosen) < self.n:
                for key in list(queues):
                    chosen.append(queues[key].pop(0))
                    if not queues[key]:
                        del queues[key]
                    if len(chosen) == self.n:
                        break
        return chosen


class EpisodeTally:
    """The run's episodes as the report shows them (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.first: list[Episode] | None = []  # every episode while there are at most FULL_LIST
        self.to_read = FirstToRead(TOP_EPISODES)
        self.sources: set[str] = set()
        self.flagged = 0  # failed, cut short, errored or with a log that does not verify
        self.verified = 0
        self.heatmaps: dict[str, SuccessCells] = {}  # suite -> its cells
        self.agents: dict[tuple[str, str], AgentTally] = {}
        self.suites: dict[str, Counter[str]] = {}  # suite -> statuses, "success" and "total"
        self.decided: list[tuple[Episode, Decision]] = []  # the first TOP_EPISODES decisions
        self.decisions: Counter[str] = Counter()  # every decision, by verb
        self.decided_episodes = 0
        self.indexed_suites: dict[str, None] = {}  # the suites the run's own index names, in order
        self._known = DiskMap(0)  # the resolved paths of the episodes' logs

    def add(self, ep: Episode) -> None:
        r = ep.record
        self.count += 1
        if self.first is not None:
            self.first.append(ep)
            if len(self.first) > FULL_LIST:
                self.first = None
        self.to_read.add(ep)
        self.sources.add(ep.index)
        self.flagged += priority(ep) < 4
        self.verified += ep.log_check == "verified"
        self.heatmaps.setdefault(str(r.get("suite", "?")), SuccessCells()).add(r)
        self.agents.setdefault((str(r.get("suite", "?")), str(r.get("agent", "?"))), AgentTally()).add(ep)
        counts = self.suites.setdefault(str(r.get("suite", "?")), Counter())
        counts[str(r.get("status", "?"))] += 1
        counts["success"] += bool(r.get("success"))
        counts["total"] += 1
        for d in ep.decisions:
            self.decisions[d.verb] += 1
            if len(self.decided) < TOP_EPISODES:
                self.decided.append((ep, d))
        self.decided_episodes += bool(ep.decisions)
        if ep.index == INDEX and isinstance(r.get("suite"), str) and r["suite"]:
            self.indexed_suites.setdefault(r["suite"])
        if ep.log:
            self._known.add(str(resolved(self.root / ep.log)))

    def __len__(self) -> int:
        return self.count

    def shown(self) -> list[Episode]:
        """The episodes table's rows: every episode up to FULL_LIST, else the first to read."""
        return list(self.first) if self.first is not None else self.to_read.chosen()

    @property
    def known(self) -> KnownLogs:
        return KnownLogs(self._known)

    @property
    def logs_bad(self) -> bool:
        return self.verified < self.count


class KnownLogs:
    """The resolved logs the run's episodes name, as ``path in known`` asks (kept on disk)."""

    def __init__(self, paths: DiskMap) -> None:
        self.paths = paths

    def __contains__(self, path: object) -> bool:
        return str(path) in self.paths
