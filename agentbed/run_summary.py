"""What ``agentbed run`` adds to a workload's summary: the errored episodes it excluded, and each
agent's paired difference from the reference agent.

A workload summarises only the episodes that did not error (:func:`agentbed.problems.scored`);
this module then says, in the summary itself, how many it left out and why: an ``errors`` block
(count, per agent, the problems list), ``errors_excluded`` on every headline, and a table of
problems. With more than one agent, a table (and headline entries ``success_minus_reference``)
gives each agent's success minus the reference's over the (task, seed) pairs both scored, with a
paired bootstrap interval resampling tasks (Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 16: paired comparisons), the McNemar exact p beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentbed.problems import errored, errors_by_agent, excluded_note, is_errored, problems_of
from agentbed.results import EpisodeMetrics, PassRates, Seeds
from agentbed.stats import mcnemar_exact, paired_difference_ci
from agentbed.summary import fmt, headline, table


def annotate_errors(summary: dict[str, Any], records: Sequence[Mapping[str, Any]], total: int | None = None,
                    ) -> dict[str, Any]:
    """Record in ``summary`` the errored episodes among ``records`` (all of the run's; or, with
    ``total`` the run's count, only those with status ``error``: all this reads)."""
    by_agent = errors_by_agent(records)
    problems = problems_of(records)
    errors = sum(by_agent.values())
    summary["errors"] = {"episodes": errors, "of": len(records) if total is None else total, "by_agent": by_agent,
                         "problems": problems}
    for h in summary.get("headline", []) or []:
        if isinstance(h, dict):
            agent = h.get("agent")
            h["errors_excluded"] = by_agent.get(agent, 0) if isinstance(agent, str) and agent in by_agent \
                else (0 if isinstance(agent, str) else errors)
    if problems:
        rows = [[p["kind"], p["count"], "yes" if p["excluded"] else "no (failed attempts)", ", ".join(p["agents"]),
                 p["title"], p["check"], p["example_error"]] for p in problems]
        summary.setdefault("tables", []).insert(0, table(
            "Episodes with status error", ["kind", "episodes", "excluded from rates", "agents", "what", "check",
                                           "example"], rows, note=excluded_note(list(records))))
    return summary


class Pairs:
    """Each agent's success per (task, seed) among scored episodes, folded one record at a time."""

    def __init__(self) -> None:
        self.by_agent: dict[str, dict[tuple[str, int], float]] = {}
        self.agents: set[str] = set()

    def add(self, r: Mapping[str, Any]) -> None:
        self.agents.add(str(r["agent"]))
        if not is_errored(r):
            self.by_agent.setdefault(str(r["agent"]), {})[(str(r["task"]), int(r["seed"]))] = \
                1.0 if r.get("success") else 0.0

    def rows(self, reference: str) -> list[dict[str, Any]]:
        """Each other agent's success minus the reference's, paired on (task, seed)."""
        base = self.by_agent.get(reference, {})
        out = []
        for agent in sorted(a for a in self.agents if a != reference):
            mine = self.by_agent.get(agent, {})
            units = sorted(set(mine) & set(base))
            if not units:
                out.append({"agent": agent, "reference": reference, "pairs": 0, "interval": None, "p": None})
                continue
            a, b = [mine[u] for u in units], [base[u] for u in units]
            ci = paired_difference_ci(a, b, groups=[u[0] for u in units])
            p = mcnemar_exact([x == 1.0 for x in a], [y == 1.0 for y in b])
            out.append({"agent": agent, "reference": reference, "pairs": len(units), "interval": ci, "p": p})
        return out


def paired_rows(records: Iterable[Mapping[str, Any]], reference: str) -> list[dict[str, Any]]:
    """Each other agent's success minus the reference's, paired on (task, seed) among scored episodes."""
    pairs = Pairs()
    for r in records:
        pairs.add(r)
    return pairs.rows(reference)


def add_paired_differences(summary: dict[str, Any], rows: list[dict[str, Any]], reference: str,
                           excluded: int) -> None:
    """A table and headline entries of each agent's paired difference from ``reference``
    (:func:`paired_rows`; ``excluded``: the run's errored episodes)."""
    if not rows:
        return
    cells = []
    for row in rows:
        ci = row["interval"]
        cells.append([row["agent"], reference, row["pairs"], fmt(ci) if ci is not None else "no pair scored by both",
                      f"{row['p']:.3g}" if row["p"] is not None else ""])
        if ci is not None:
            summary.setdefault("headline", []).append(headline(
                "success_minus_reference", ci, agent=row["agent"], reference=reference))
    note = ("success (1/0) minus the reference's on the same task and seed; 95% paired bootstrap over tasks"
            + (f"; pairs with an errored episode ({excluded} episodes) are left out" if excluded else ""))
    summary.setdefault("tables", []).insert(0, table(
        f"Paired difference from the reference ({reference})", ["agent", "reference", "pairs",
                                                                 "difference [95% CI]", "McNemar p"], cells, note))


_COST_FIELDS = ("agent", "suite", "task", "seed", "options", "usage")  # what agentbed.cost reads of a record


class RunTally:
    """A run's index records folded one at a time, in the order :meth:`agentbed.store.RunStore.stream_records`
    gives them (that of ``records()``, so every figure is the same to the byte), into what its
    summary and results.json need. Per episode it keeps a float and a task number (the pass-rate
    bootstrap; a ``task/seed`` value, which results.json lists one per unit, is kept on disk) and, with several agents,
    the paired outcome; whole records only of episodes with status ``error``, and the usage of
    model episodes (their cost). A workload with a summary of its own (``suite.summarize``) is
    handed its scored records as a list: ``keep_scored``."""

    def __init__(self, *, keep_scored: bool, paired: bool) -> None:
        self.total = 0
        self.seeds = Seeds()
        self.errors: list[Mapping[str, Any]] = []  # status error: errored (left out) or raised in the agent
        self.scored: list[dict[str, Any]] | None = [] if keep_scored else None
        self.rates = PassRates()
        self.pairs = Pairs() if paired else None
        self.metrics = EpisodeMetrics()
        self.usage: list[dict[str, Any]] = []

    def add(self, r: Mapping[str, Any]) -> None:
        self.total += 1
        self.seeds.add(r["seed"])
        if r.get("status") == "error":
            self.errors.append(r)
        if self.pairs is not None:
            self.pairs.add(r)
        if r.get("usage"):
            self.usage.append({k: r[k] for k in _COST_FIELDS if k in r})
        if is_errored(r):
            return
        self.metrics.add(r)
        if self.scored is not None:
            self.scored.append(dict(r))
        else:
            self.rates.add(r)

    @property
    def errored(self) -> list[Mapping[str, Any]]:
        return errored(self.errors)
