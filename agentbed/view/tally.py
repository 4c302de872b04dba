"""The runs list's figures of a run, folded one episode row at a time: the list of 100,000-episode
runs is built without holding their rows (the run page, which filters and pages the rows, still
reads them: :meth:`agentbed.view.catalog.RunView.refresh`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentbed.diskmap import DiskMap
from agentbed.files import resolved


class RowTally:
    """What :func:`agentbed.view.api.run_summary` counts of a run's episode rows."""

    def __init__(self) -> None:
        self.rows = 0
        self.counts: Counter[str] = Counter()  # by status
        self.errors = 0
        self.successes = 0
        self.cost: float = 0  # the sum of the rows' costs, added in row order as sum() would
        self.costed = False  # whether any row has a cost
        self.suites: set[str] = set()
        self.agents: set[str] = set()

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        self.counts[row["status"]] += 1
        self.errors += bool(row.get("errored"))
        self.successes += row["success"]
        if row["cost"] is not None:
            self.cost += row["cost"]
            self.costed = True
        self.suites.add(row["suite"])
        self.agents.add(row["agent"])

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> RowTally:
        tally = cls()
        for row in rows:
            tally.add(row)
        return tally

    def plus(self, rows: Iterable[dict[str, Any]]) -> RowTally:
        """A copy with ``rows`` added (the episodes still running, listed afresh at each look)."""
        tally = RowTally()
        tally.rows, tally.counts, tally.errors, tally.successes = self.rows, Counter(self.counts), self.errors, \
            self.successes
        tally.cost, tally.costed, tally.suites, tally.agents = self.cost, self.costed, set(self.suites), set(self.agents)
        for row in rows:
            tally.add(row)
        return tally


class IndexedRows:
    """The index's rows as the runs list keeps them: their tally, and on disk their ids (a log
    in ``episodes/`` the index does not list is running) and their logs, resolved (anything
    else in the run directory is shown apart)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tally = RowTally()
        self.ids = DiskMap(0)
        self.logs = DiskMap(0)

    def add(self, row: dict[str, Any]) -> None:
        self.tally.add(row)
        self.ids.add(row["id"])
        self.logs.add(str(resolved(self.root / row["log"])))


class Known:
    """``path in known``: a log the index names, or one of ``running``."""

    def __init__(self, indexed: IndexedRows, running: Iterable[dict[str, Any]]) -> None:
        self.indexed = indexed
        self.running = {resolved(indexed.root / r["log"]) for r in running}

    def __contains__(self, path: object) -> bool:
        return path in self.running or str(path) in self.indexed.logs
