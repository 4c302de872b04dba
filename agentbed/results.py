"""Results: per-unit metric values that the gate compares, and the generic suite summary.

``results.json`` (format ``agentbed.results/1``) lists metrics, each with its values per unit
(``"task/seed"`` for episodes), so a baseline and a new run can be paired unit by unit::

    {"format": "agentbed.results/1", "episodes": 30, "seeds": [0, 1, 2],
     "metrics": [{"suite": "vault", "agent": "oracle", "metric": "success", "higher_is_better": true,
                  "tolerance": 0.05, "values": {"open-fast/0": 1.0, ...}}]}

Workloads whose unit is not an episode (a checkpoint, a question, a repository and seed)
write the same structure with their own unit keys; the part before the first ``/`` is the
group that the bootstrap resamples.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.stats import bootstrap_ci, pass_hat_k_ci
from agentbed.summary import fmt, headline, table
from agentbed.validate import RESULTS_SCHEMA, check, finite, read_json

FORMAT = "agentbed.results/1"


def metric_agent(record: Mapping[str, Any]) -> str:
    """The agent of a record as results.json names it: with its options, if any."""
    opts = ",".join(f"{k}={v}" for k, v in sorted((record.get("options") or {}).items()))
    return str(record["agent"]) + (f"[{opts}]" if opts else "")


def episode_metrics(records: list[dict[str, Any]], tolerance: float = 0.05) -> list[dict[str, Any]]:
    """One ``success`` metric per (suite, agent, options) over episodes keyed ``task/seed``."""
    grouped: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in records:
        grouped[(r["suite"], metric_agent(r))][f"{r['task']}/{r['seed']}"] = 1.0 if r["success"] else 0.0
    return [{"suite": s, "agent": a, "metric": "success", "higher_is_better": True, "tolerance": tolerance,
             "values": dict(sorted(v.items()))} for (s, a), v in sorted(grouped.items())]


def errored_units(records: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``"suite/agent"`` -> the ``task/seed`` units of its errored episodes
    (:func:`agentbed.problems.is_errored`): results.json's ``errored_units``, which the gate
    leaves out of the baseline under ``--allow-errors``, so both sides compare only what both scored."""
    from agentbed.problems import errored

    grouped: dict[str, set[str]] = defaultdict(set)
    for r in errored(records):
        grouped[f"{r['suite']}/{metric_agent(r)}"].add(f"{r['task']}/{r['seed']}")
    return {key: sorted(units) for key, units in sorted(grouped.items())}


def without_units(baseline: dict[str, Any], units: Mapping[str, list[str]]) -> tuple[dict[str, Any], int]:
    """``baseline`` without, for each metric, the units ``units`` lists for its ``suite/agent``
    (the results' errored episodes), and how many distinct episodes that left out."""
    left_out: set[tuple[str, str]] = set()
    metrics = []
    for m in baseline.get("metrics", []):
        drop = set(units.get(f"{m['suite']}/{m['agent']}", ()))
        gone = drop & set(m["values"])
        left_out |= {(f"{m['suite']}/{m['agent']}", u) for u in gone}
        metrics.append({**m, "values": {u: v for u, v in m["values"].items() if u not in gone}} if gone else m)
    return {**baseline, "metrics": metrics}, len(left_out)


def write_results(path: str | Path, metrics: list[dict[str, Any]], **extra: Any) -> Path:
    """Write results.json; it records the provenance of the code that made it (agentbed.provenance:
    version, commit, the metrics' suites' origins) unless ``extra`` gives one, so a baseline copied
    from it says what made it and ``gate`` prints that."""
    from agentbed.provenance import provenance

    path = Path(path)
    suites = sorted({str(m["suite"]) for m in metrics if isinstance(m, dict) and m.get("suite")})
    doc = {"format": FORMAT, "provenance": provenance(suites), **extra, "metrics": metrics}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> dict[str, Any]:
    """Read results.json (validated: every value a finite number), or build it from a run
    directory's index."""
    path = Path(path)
    if path.is_dir():
        if (path / "results.json").exists():
            return load_results(path / "results.json")
        from agentbed.problems import errored, problems_of, scored
        from agentbed.store import read_index

        records = read_index(path / "index.jsonl")
        if not records:
            raise UsageError(f"{path}: no results.json and no finished episodes in index.jsonl")
        return {"format": FORMAT, "metrics": episode_metrics(scored(records)), "episodes": len(records),
                "errored_episodes": len(errored(records)), "errored_units": errored_units(records),
                "problems": problems_of(records)}
    doc = read_json(path, what="results file")
    if isinstance(doc, dict) and doc.get("format") != FORMAT:  # another kind of file: say so first
        raise UsageError(f"{path}: field 'format' must be {FORMAT!r}")
    check(doc, RESULTS_SCHEMA, str(path))
    for i, m in enumerate(doc["metrics"]):
        if "tolerance" in m and not finite(m["tolerance"]):
            raise UsageError(f"{path}: field 'metrics[{i}].tolerance' is {m['tolerance']}, expected a finite number")
        for unit, value in m["values"].items():
            if not finite(value):
                raise UsageError(f"{path}: field 'metrics[{i}].values.{unit}' is {value}, expected a finite number")
    return doc


def suite_summary(suite: str, records: list[dict[str, Any]], command: str) -> dict[str, Any]:
    """Pass rate per agent (bootstrap over tasks), pass^k, per-task and per-label tables."""
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_agent[r["agent"]].append(r)
    seeds = sorted({r["seed"] for r in records})
    heads, agent_rows, task_rows, label_rows = [], [], [], []
    for agent, recs in sorted(by_agent.items()):
        values = [1.0 if r["success"] else 0.0 for r in recs]
        ci = bootstrap_ci(values, groups=[r["task"] for r in recs])
        heads.append(headline("pass_rate", ci, agent=agent, seeds=len(seeds)))
        per_task: dict[str, list[bool]] = defaultdict(list)
        for r in recs:
            per_task[r["task"]].append(bool(r["success"]))
        k = min(len(v) for v in per_task.values())
        pk = pass_hat_k_ci(per_task, k)
        statuses = Counter(r["status"] for r in recs)
        agent_rows.append([agent, len(recs), len(seeds), fmt(ci), f"pass^{k} {fmt(pk)}",
                           ", ".join(f"{s}={n}" for s, n in sorted(statuses.items()))])
        for task, outcomes in sorted(per_task.items()):
            task_rows.append([agent, task, f"{sum(outcomes)}/{len(outcomes)}"])
        for label, n in Counter(lb for r in recs for lb in r.get("labels", [])).most_common():
            label_rows.append([agent, label, n])
    return {
        "suite": suite, "title": f"{suite}: pass rates", "episodes": len(records), "seeds": len(seeds),
        "headline": heads, "command": command, "figures": [],
        "tables": [
            table("Pass rate per agent (95% bootstrap CI over tasks)",
                  ["agent", "episodes", "seeds", "pass rate", "pass^k", "status"], agent_rows),
            table("Per task", ["agent", "task", "passed"], task_rows),
            table("Labels", ["agent", "label", "episodes"], label_rows),
        ],
    }
