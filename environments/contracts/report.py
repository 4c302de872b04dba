"""The contracts summary: per-agent pass rates with bootstrap intervals, pass^k over seeds, per-axis,
per-label and per-task tables, the feedback-mode paired difference and the corruption check.

Input is a list of episode records as the run store keeps them (dicts). An agent run with
``--feedback on`` is reported as ``<agent>+feedback``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from agentbed.stats import bootstrap_ci, paired_difference_ci, pass_hat_k_ci
from agentbed.summary import fmt, headline, table
from environments.contracts.labels import LABELS

AXES = ("integrity_strict", "integrity_issuer", "validity", "goal")


def who(record: dict[str, Any]) -> str:
    feedback = (record.get("options") or {}).get("feedback") == "on"
    return record["agent"] + ("+feedback" if feedback else "")


def by_agent(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        grouped[who(r)].append(r)
    return dict(sorted(grouped.items()))


def per_task_passes(recs: list[dict[str, Any]]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = defaultdict(list)
    for r in sorted(recs, key=lambda r: (r["task"], r["seed"])):
        out[r["task"]].append(bool(r["success"]))
    return dict(out)


def rate(recs: list[dict[str, Any]], key: str) -> Any:
    values = [1.0 if (r.get("metrics") or {}).get(key) else 0.0 for r in recs]
    return bootstrap_ci(values, groups=[r["task"] for r in recs])


def feedback_pairs(records: list[dict[str, Any]]) -> dict[str, tuple[list[float], list[float], list[str]]]:
    """For each agent run both ways: (pass with feedback, pass without, task) per (task, seed)."""
    index = {(r["agent"], (r.get("options") or {}).get("feedback", "off"), r["task"], r["seed"]): r for r in records}
    out: dict[str, tuple[list[float], list[float], list[str]]] = {}
    for (agent, mode, task, seed), r in sorted(index.items()):
        off = index.get((agent, "off", task, seed))
        if mode != "on" or off is None:
            continue
        on_vals, off_vals, groups = out.setdefault(agent, ([], [], []))
        on_vals.append(float(r["success"]))
        off_vals.append(float(off["success"]))
        groups.append(task)
    return out


def build_summary(records: list[dict[str, Any]], command: str, *,
                  corruption_checks: list[list[Any]] | None = None, figures: list[dict[str, Any]] | None = None
                  ) -> dict[str, Any]:
    groups = by_agent(records)
    seeds = sorted({r["seed"] for r in records})
    heads, agent_rows, axis_rows, label_rows, catch_all_rows = [], [], [], [], []
    task_table: dict[str, dict[str, str]] = defaultdict(dict)
    for agent, recs in groups.items():
        passes = rate(recs, "pass")
        per_task = per_task_passes(recs)
        k = min(len(v) for v in per_task.values())
        pk = pass_hat_k_ci(per_task, k)
        heads.append(headline("pass_rate", passes, agent=agent, seeds=len(seeds)))
        heads.append(headline(f"pass^{k}", pk, agent=agent, seeds=len(seeds)))
        errors = sum(1 for r in recs if r["status"] == "error")
        agent_rows.append([agent, len(recs), len({r["seed"] for r in recs}), fmt(passes), f"pass^{k} {fmt(pk)}",
                           errors])
        axis_rows.append([agent, *(fmt(rate(recs, axis)) for axis in AXES), fmt(rate(recs, "recovered"))])
        counts = Counter((r.get("metrics") or {}).get("headline", "ERROR") for r in recs)
        for label, n in counts.most_common():
            axis = LABELS[label].axis if label in LABELS else "error"
            label_rows.append([agent, label, axis, n, f"{n / len(recs):.3f}"])
        integrity = [c for c in counts.elements() if c in LABELS and LABELS[c].axis == "integrity"]
        wrong = integrity.count("WRONG_VALUE")
        catch_all_rows.append([agent, len(integrity), len(integrity) - wrong, wrong,
                               f"{wrong / len(integrity):.3f}" if integrity else "-"])
        for task, outcomes in per_task.items():
            task_table[task][agent] = f"{sum(outcomes)}/{len(outcomes)}"
    agents = list(groups)
    task_rows = [[task, *(row.get(a, "-") for a in agents)] for task, row in sorted(task_table.items())]
    tables = [
        table("Pass rate per agent (95% cluster-bootstrap CI over tasks; pass^k unbiased over seeds)",
              ["agent", "episodes", "seeds", "pass rate", "pass^k", "errors"], agent_rows),
        table("Per axis: share of episodes passing each axis (95% CI)",
              ["agent", "integrity (byte-strict)", "integrity (issuer)", "validity", "goal", "recovered"], axis_rows,
              note="byte-strict: SHA-256 of the sent artifact equals an issued one; issuer: the real verifier "
                   "accepted it; recovered: goal reached after a failed use."),
        table("Headline label per episode", ["agent", "label", "axis", "episodes", "share"], label_rows),
        table("Integrity failures: specific label vs the WRONG_VALUE catch-all",
              ["agent", "integrity failures", "specific label", "WRONG_VALUE", "WRONG_VALUE share"], catch_all_rows,
              note="WRONG_VALUE is the last resort: the sent value has no structural relation to any issued "
                   "version (no truncation, extension, parameter, encoding, inserted-character, substitution or "
                   "edit relation)."),
        table("Per task: passed / episodes", ["task", *agents], task_rows),
    ]
    for agent, (on, off, tasks) in feedback_pairs(records).items():
        diff = paired_difference_ci(on, off, groups=tasks)
        heads.append(headline("feedback_gain", diff, agent=agent, pairs=len(on)))
        failures = sum(1 for x in off if x == 0.0)
        fixed = sum(1 for a, b in zip(on, off, strict=True) if a == 1.0 and b == 0.0)
        tables.append(table(f"Feedback mode, {agent}: paired difference (on - off) over the same task and seed",
                            ["pairs", "failures without feedback", "fixed by feedback", "pass off", "pass on",
                             "difference (95% CI)"],
                            [[len(on), failures, fixed, f"{sum(off) / len(off):.3f}", f"{sum(on) / len(on):.3f}",
                              fmt(diff)]],
                            note="An attempt ends at its first failed use; with feedback the agent gets the label "
                                 "and its explanation and the task restarts once (2 attempts at most)."))
    if corruption_checks:
        tables.append(table("Corruption pipelines (oracle wrapped): label assigned vs expected",
                            ["corruption", "expected label", "episodes applied", "label as expected", "passes"],
                            corruption_checks))
    return {"suite": "contracts", "title": "Observation contracts (ContractBench)", "episodes": len(records),
            "seeds": len(seeds), "headline": heads, "tables": tables, "figures": figures or [], "command": command}
