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

from collections.abc import Mapping, Sequence
from typing import Any

from agentbed.problems import errored, errors_by_agent, excluded_note, problems_of, scored
from agentbed.stats import mcnemar_exact, paired_difference_ci
from agentbed.summary import fmt, headline, table


def annotate_errors(summary: dict[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Record in ``summary`` the errored episodes among ``records`` (all of the run's)."""
    by_agent = errors_by_agent(records)
    problems = problems_of(records)
    total = sum(by_agent.values())
    summary["errors"] = {"episodes": total, "of": len(records), "by_agent": by_agent, "problems": problems}
    for h in summary.get("headline", []) or []:
        if isinstance(h, dict):
            agent = h.get("agent")
            h["errors_excluded"] = by_agent.get(agent, 0) if isinstance(agent, str) and agent in by_agent \
                else (0 if isinstance(agent, str) else total)
    if problems:
        rows = [[p["kind"], p["count"], "yes" if p["excluded"] else "no (failed attempts)", ", ".join(p["agents"]),
                 p["title"], p["check"], p["example_error"]] for p in problems]
        summary.setdefault("tables", []).insert(0, table(
            "Episodes with status error", ["kind", "episodes", "excluded from rates", "agents", "what", "check",
                                           "example"], rows, note=excluded_note(list(records))))
    return summary


def paired_rows(records: Sequence[Mapping[str, Any]], reference: str) -> list[dict[str, Any]]:
    """Each other agent's success minus the reference's, paired on (task, seed) among scored episodes."""
    by_agent: dict[str, dict[tuple[str, int], float]] = {}
    for r in scored(records):
        by_agent.setdefault(str(r["agent"]), {})[(str(r["task"]), int(r["seed"]))] = 1.0 if r.get("success") else 0.0
    base = by_agent.get(reference, {})
    out = []
    for agent in sorted(a for a in {str(r["agent"]) for r in records} if a != reference):
        mine = by_agent.get(agent, {})
        units = sorted(set(mine) & set(base))
        if not units:
            out.append({"agent": agent, "reference": reference, "pairs": 0, "interval": None, "p": None})
            continue
        a, b = [mine[u] for u in units], [base[u] for u in units]
        ci = paired_difference_ci(a, b, groups=[u[0] for u in units])
        p = mcnemar_exact([x == 1.0 for x in a], [y == 1.0 for y in b])
        out.append({"agent": agent, "reference": reference, "pairs": len(units), "interval": ci, "p": p})
    return out


def add_paired_differences(summary: dict[str, Any], records: Sequence[Mapping[str, Any]], reference: str) -> None:
    """A table and headline entries of each agent's paired difference from ``reference``."""
    rows = paired_rows(records, reference)
    if not rows:
        return
    excluded = len(errored(records))
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
