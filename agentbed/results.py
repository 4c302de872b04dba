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
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from agentbed.stats import bootstrap_ci, pass_hat_k_ci_of_counts
from agentbed.summary import fmt, headline, table
from agentbed.validate import RESULTS_SCHEMA, check, finite, read_json

FORMAT = "agentbed.results/1"


def metric_agent(record: Mapping[str, Any]) -> str:
    """The agent of a record as results.json names it: with its options, if any."""
    opts = ",".join(f"{k}={v}" for k, v in sorted((record.get("options") or {}).items()))
    return str(record["agent"]) + (f"[{opts}]" if opts else "")


def episode_metrics(records: Iterable[Mapping[str, Any]], tolerance: float = 0.05) -> list[dict[str, Any]]:
    """One ``success`` metric per (suite, agent, options) over episodes keyed ``task/seed``."""
    fold = EpisodeMetrics()
    for r in records:
        fold.add(r)
    return fold.metrics(tolerance)


class EpisodeMetrics:
    """:func:`episode_metrics` folded one record at a time (what results.json lists: a value per unit)."""

    def __init__(self) -> None:
        self.grouped: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)

    def add(self, r: Mapping[str, Any]) -> None:
        self.grouped[(r["suite"], metric_agent(r))][f"{r['task']}/{r['seed']}"] = 1.0 if r["success"] else 0.0

    def metrics(self, tolerance: float = 0.05) -> list[dict[str, Any]]:
        return [{"suite": s, "agent": a, "metric": "success", "higher_is_better": True, "tolerance": tolerance,
                 "values": dict(sorted(v.items()))} for (s, a), v in sorted(self.grouped.items())]


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
    with open(tmp, "w", encoding="utf-8") as fh:
        # json.dump writes the encoder's pieces as they come: the bytes of json.dumps without its
        # whole text (and the list of pieces it joins: tens of MiB for 100,000 units) in memory
        json.dump(doc, fh, indent=1, sort_keys=True)
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


def suite_summary(suite: str, records: Iterable[Mapping[str, Any]], command: str) -> dict[str, Any]:
    """Pass rate per agent (bootstrap over tasks), pass^k, per-task and per-label tables."""
    fold = PassRates()
    for r in records:
        fold.add(r)
    return fold.summary(suite, command)


class _AgentRates:
    """One agent's episodes as :class:`PassRates` keeps them: a float and a task number each."""

    def __init__(self) -> None:
        self.values = array("d")  # success as 1.0/0.0, in record order
        self.groups = array("I")  # the task of each value, as its number in ``tasks``
        self.tasks: dict[str, list[int]] = {}  # task -> [its number, successes, trials], in first-seen order
        self.statuses: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()

    def add(self, r: Mapping[str, Any]) -> None:
        task = self.tasks.setdefault(r["task"], [len(self.tasks), 0, 0])
        self.values.append(1.0 if r["success"] else 0.0)
        self.groups.append(task[0])
        task[1] += bool(r["success"])
        task[2] += 1
        self.statuses[r["status"]] += 1
        self.labels.update(r.get("labels", []))


class PassRates:
    """:func:`suite_summary` folded one record at a time, in flat memory but for a float and a task
    number per episode (for the bootstrap over tasks): a run of 100,000 episodes summarises without
    holding its records."""

    def __init__(self) -> None:
        self.agents: dict[str, _AgentRates] = defaultdict(_AgentRates)
        self.seeds: set[int] = set()
        self.episodes = 0

    def add(self, r: Mapping[str, Any]) -> None:
        self.episodes += 1
        self.seeds.add(r["seed"])
        self.agents[r["agent"]].add(r)

    def summary(self, suite: str, command: str) -> dict[str, Any]:
        seeds = sorted(self.seeds)
        heads, agent_rows, task_rows, label_rows = [], [], [], []
        for agent, rates in sorted(self.agents.items()):
            names = list(rates.tasks)
            ci = bootstrap_ci(rates.values, groups=[names[g] for g in rates.groups])
            heads.append(headline("pass_rate", ci, agent=agent, seeds=len(seeds)))
            k = min(n for _, _, n in rates.tasks.values())
            pk = pass_hat_k_ci_of_counts([(c, n) for _, c, n in rates.tasks.values()], k)
            agent_rows.append([agent, len(rates.values), len(seeds), fmt(ci), f"pass^{k} {fmt(pk)}",
                               ", ".join(f"{s}={n}" for s, n in sorted(rates.statuses.items()))])
            for task, (_, c, n) in sorted(rates.tasks.items()):
                task_rows.append([agent, task, f"{c}/{n}"])
            for label, n in rates.labels.most_common():
                label_rows.append([agent, label, n])
        return {
            "suite": suite, "title": f"{suite}: pass rates", "episodes": self.episodes, "seeds": len(seeds),
            "headline": heads, "command": command, "figures": [],
            "tables": [
                table("Pass rate per agent (95% bootstrap CI over tasks)",
                      ["agent", "episodes", "seeds", "pass rate", "pass^k", "status"], agent_rows),
                table("Per task", ["agent", "task", "passed"], task_rows),
                table("Labels", ["agent", "label", "episodes"], label_rows),
            ],
        }
