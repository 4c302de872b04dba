"""The regression gate: compare a run's results with a baseline, metric by metric.

For each baseline metric the units present in both files are paired and the mean difference
(current - baseline, signed so that positive is better) gets a paired bootstrap interval,
resampling whole groups (tasks). A metric regresses only when the interval lies entirely
below zero (significant) *and* the estimated loss exceeds the metric's tolerance. For 0/1
metrics the exact McNemar test and pass^k are printed beside it.

The gate refuses what it cannot judge: a result that covers fewer units (tasks, seeds) than
the baseline is ``subset`` and fails unless the caller allows subsets (the verdict names what
is missing), and a comparison in which no unit was compared at all fails (:func:`judge`).
What the results have and the baseline lacks (an agent or metric: :func:`unbaselined`; units
of a compared metric: ``GateRow.extra_units``) has nothing to regress from: it is named, not
judged, and does not fail the gate (docs/cli.md says why).
Before that, :func:`check_judgeable` refuses inputs no verdict could be drawn from: a metric
listed twice, a value outside its metric's range (``range`` in the file, else
:data:`METRIC_RANGES`, and never beyond :data:`MAX_MAGNITUDE`), and a baseline of another
suite or task set.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from agentbed.stats import Interval, mcnemar_exact, paired_difference_ci, pass_hat_k


@dataclass
class GateRow:
    suite: str
    agent: str
    metric: str
    units: int
    current: float
    baseline: float
    diff: Interval | None
    tolerance: float
    verdict: str  # ok | regressed | missing | improved | subset | underpowered
    detail: str = ""
    missing_units: tuple[str, ...] = ()  # baseline units absent from the results
    mde: float | None = None  # the smallest loss this comparison detects (minimum_detectable_effect)
    underpowered: bool = False  # it passed, yet could not see a loss of its tolerance (a subset too)
    extra_units: tuple[str, ...] = ()  # results units the baseline lacks: named, not compared


ABSENT = "metric absent from the results"
MAX_MAGNITUDE = 1e12  # no metric value is larger; beyond it sums overflow and intervals stop meaning anything
# the ranges of the metrics agentbed's workloads write (a results file's own "range" wins)
METRIC_RANGES: dict[str, tuple[float | None, float | None]] = {
    "success": (0.0, 1.0), "pass_rate": (0.0, 1.0), "accuracy": (0.0, 1.0), "attack_success": (0.0, 1.0),
    "cost_usd": (0.0, None), "makespan": (0.0, None), "regret": (None, None),
}


class Unjudgeable(ValueError):
    """The results or the baseline cannot be compared; ``side`` says which file is at fault."""

    def __init__(self, side: str, message: str) -> None:
        super().__init__(message)
        self.side = side


def metric_range(m: dict[str, Any]) -> tuple[float, float]:
    low, high = m.get("range") or METRIC_RANGES.get(m["metric"], (None, None))
    return (-MAX_MAGNITUDE if low is None else low, MAX_MAGNITUDE if high is None else high)


def check_judgeable(current: dict[str, Any], baseline: dict[str, Any]) -> None:
    """Refuse (:class:`Unjudgeable`) what no verdict can be drawn from: a metric twice in a
    file, a value outside its metric's range (the baseline's range: the results cannot widen
    it), a baseline of another suite, or results whose units span tasks (groups) the baseline
    never had (another task set)."""
    base: dict[tuple[str, str, str], dict[str, Any]] = {}
    for side, doc in (("baseline", baseline), ("results", current)):
        seen: set[tuple[str, str, str]] = set()
        for i, m in enumerate(doc.get("metrics", [])):
            if _key(m) in seen:
                raise Unjudgeable(side, f"field 'metrics[{i}]': {'/'.join(_key(m))} is listed twice")
            seen.add(_key(m))
            reference = base.get(_key(m), m) if side == "results" else m
            low, high = metric_range(reference)
            if m.get("range") is not None and metric_range(m) != (low, high):
                raise Unjudgeable(side, f"field 'metrics[{i}].range' is {m['range']}, but metric {m['metric']!r} "
                                        f"ranges over [{low:g}, {high:g}]")
            for unit, value in m["values"].items():
                if not low <= value <= high:
                    raise Unjudgeable(side, f"field 'metrics[{i}].values.{unit}' is {value}, outside the range "
                                            f"[{low:g}, {high:g}] of metric {m['metric']!r}")
            if side == "baseline":
                base[_key(m)] = m
    mine = {m["suite"] for m in current.get("metrics", [])}
    theirs = {m["suite"] for m in baseline.get("metrics", [])}
    if mine and theirs and not mine & theirs:
        raise Unjudgeable("baseline", f"is of suite {', '.join(sorted(theirs))}, the results of "
                                      f"{', '.join(sorted(mine))}: a baseline of another suite")
    for m in current.get("metrics", []):
        if _key(m) not in base:
            continue
        groups = {u.split("/", 1)[0] for u in base[_key(m)]["values"]}
        extra = sorted({u.split("/", 1)[0] for u in m["values"]} - groups)
        if extra:
            raise Unjudgeable("baseline", f"{'/'.join(_key(m))}: the results have tasks the baseline does not "
                                          f"({', '.join(extra[:5])}{', ...' if len(extra) > 5 else ''}): a "
                                          "baseline of another task set")


# z(1 - 0.05/2) + z(0.80): a two-sided 95% interval, detected four times in five
POWER_Z = 1.959964 + 0.841621


def minimum_detectable_effect(differences: list[float], binary: bool) -> float:
    """The smallest mean loss a paired comparison over these groups detects with 80% power at a 95%
    interval, by the normal approximation (Cohen, "Statistical Power Analysis for the Behavioral
    Sciences", 1988, ch. 2): ``(z_0.975 + z_0.8) * sd / sqrt(n)`` over the ``n`` per-group differences.

    For a 0/1 metric the spread is the one a regression brings: a loss ``d`` is a share ``d`` of
    the groups failing that passed, so ``sd = sqrt(d (1 - d))`` and ``d = c / (n + c)`` with ``c``
    the squared z sum (identical results have no spread, yet a changed one would). For other
    metrics the observed differences' spread is used."""
    n = len(differences)
    if n == 0:
        return math.inf
    if binary:
        c = POWER_Z ** 2
        return c / (n + c)
    if n < 2:
        return math.inf
    mean = sum(differences) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    return POWER_Z * sd / math.sqrt(n)


def _group_differences(groups: list[str], a: list[float], b: list[float]) -> list[float]:
    per: dict[str, list[float]] = defaultdict(list)
    for g, x, y in zip(groups, a, b, strict=True):
        per[g].append(x - y)
    return [sum(v) / len(v) for v in per.values()]


def _key(m: dict[str, Any]) -> tuple[str, str, str]:
    return (m["suite"], m["agent"], m["metric"])


def _binary(values: list[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def compare(current: dict[str, Any], baseline: dict[str, Any], *, tolerance: float | None = None,
            seed: int = 0) -> list[GateRow]:
    now = {_key(m): m for m in current.get("metrics", [])}
    rows = []
    for base in baseline.get("metrics", []):
        suite, agent, metric = _key(base)
        tol = float(tolerance if tolerance is not None else base.get("tolerance", 0.05))
        if not (math.isfinite(tol) and tol >= 0):  # nan would make every comparison "ok"
            raise ValueError(f"tolerance of {suite}/{agent}/{metric} is {tol}, expected a finite number >= 0")
        cur = now.get(_key(base))
        if cur is None:
            rows.append(GateRow(suite, agent, metric, 0, float("nan"), float("nan"), None, tol, "missing",
                                ABSENT, tuple(sorted(base["values"]))))
            continue
        units = sorted(set(base["values"]) & set(cur["values"]))
        absent = tuple(sorted(set(base["values"]) - set(cur["values"])))
        extra = tuple(sorted(set(cur["values"]) - set(base["values"])))
        if not units:
            rows.append(GateRow(suite, agent, metric, 0, float("nan"), float("nan"), None, tol, "missing",
                                "no unit in common with the baseline", absent))
            continue
        sign = 1.0 if base.get("higher_is_better", True) else -1.0
        a = [float(cur["values"][u]) for u in units]
        b = [float(base["values"][u]) for u in units]
        groups = [u.split("/", 1)[0] for u in units]
        diff = paired_difference_ci([sign * x for x in a], [sign * y for y in b], groups=groups, seed=seed)
        if not all(math.isfinite(v) for v in (diff.estimate, diff.low, diff.high)):  # never "ok" by NaN
            raise Unjudgeable("results", f"{suite}/{agent}/{metric}: the difference is not a finite number")
        regressed = diff.high < 0 and diff.estimate < -tol
        improved = diff.low > 0
        detail = f"paired bootstrap over {len(set(groups))} groups, {len(units)} units"
        if _binary(a + b):
            p = mcnemar_exact([x == 1.0 for x in a], [y == 1.0 for y in b])
            detail += f"; McNemar exact p={p:.3g}"
            k = _pass_k(units, a, b)
            if k:
                detail += f"; {k}"
        mde = minimum_detectable_effect(_group_differences(groups, a, b), _binary(a + b))
        detail += f"; detects a loss of {mde:.3g} or more (80% power)"
        verdict = "regressed" if regressed else ("improved" if improved else "ok")
        weak = verdict == "ok" and mde > tol  # a pass that says nothing: the loss it allows is below what it sees
        if weak:
            verdict = "underpowered"
            detail += f", more than the tolerance {tol:g}"
        if absent and verdict != "regressed":
            verdict = "subset"
            detail = f"{describe_missing(absent, base['values'])}; on the {len(units)} units in common: " + detail
        if extra:
            detail += (f"; {len(extra)} results units not in the baseline, not compared "
                       f"({', '.join(extra[:5])}{', ...' if len(extra) > 5 else ''})")
        rows.append(GateRow(suite, agent, metric, len(units), sum(a) / len(a), sum(b) / len(b), diff, tol,
                            verdict, detail, absent, mde, weak, extra))
    return rows


def unbaselined(current: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """The results' metrics (``suite/agent/metric``) the baseline has no entry for: a new agent,
    or a metric it never measured. Nothing to compare them with, so the gate names them."""
    known = {_key(m) for m in baseline.get("metrics", [])}
    return sorted({"/".join(_key(m)) for m in current.get("metrics", []) if _key(m) not in known})


def describe_missing(absent: tuple[str, ...], baseline_units: dict[str, Any]) -> str:
    """What a subset lacks: whole tasks (groups) and, within covered tasks, seeds."""
    def split(unit: str) -> tuple[str, str]:
        group, _, rest = unit.partition("/")
        return group, rest

    all_groups = {split(u)[0] for u in baseline_units}
    missing_groups = all_groups - {split(u)[0] for u in baseline_units if u not in set(absent)}
    partial = sorted({split(u)[1] for u in absent if split(u)[0] not in missing_groups and split(u)[1]})
    parts = [f"missing {len(absent)} of {len(baseline_units)} baseline units"]
    if missing_groups:
        shown = sorted(missing_groups)
        parts.append(f"{len(shown)} of {len(all_groups)} tasks absent ({', '.join(shown[:5])}"
                     f"{', ...' if len(shown) > 5 else ''})")
    if partial:
        parts.append(f"seeds absent in covered tasks: {', '.join(partial[:10])}{', ...' if len(partial) > 10 else ''}")
    return "; ".join(parts)


def judge(rows: list[GateRow], *, allow_missing: bool = False, allow_subset: bool = False,
          allow_underpowered: bool = False) -> tuple[list[GateRow], str]:
    """The rows that fail the gate, and why the gate as a whole cannot pass ("" if it can).
    An underpowered row fails unless ``allow_underpowered`` (its verdict says so either way).

    A missing metric fails unless ``allow_missing`` (or, for an agent the results lack
    entirely, ``allow_subset``); a subset fails unless ``allow_subset``; and when no unit of
    any metric was compared the gate fails whatever is allowed: it has judged nothing."""
    agents_present = {(r.suite, r.agent) for r in rows if r.verdict != "missing" or r.detail != ABSENT}
    failed = []
    for r in rows:
        if r.verdict == "regressed" or (r.underpowered and not allow_underpowered and r.verdict != "subset"):
            failed.append(r)
        elif r.verdict == "subset" and not (allow_subset and (allow_underpowered or not r.underpowered)):
            failed.append(r)
        elif r.verdict == "missing":
            whole_agent = (r.suite, r.agent) not in agents_present
            if not (allow_missing or (allow_subset and whole_agent)):
                failed.append(r)
    nothing = "" if any(r.units > 0 for r in rows) else "nothing was compared (no unit in common with the baseline)"
    return failed, nothing


def _pass_k(units: list[str], a: list[float], b: list[float]) -> str:
    per_task_a: dict[str, list[bool]] = defaultdict(list)
    per_task_b: dict[str, list[bool]] = defaultdict(list)
    for u, x, y in zip(units, a, b, strict=True):
        per_task_a[u.split("/", 1)[0]].append(x == 1.0)
        per_task_b[u.split("/", 1)[0]].append(y == 1.0)
    k = min(len(v) for v in per_task_a.values())
    if k < 2:
        return ""
    return f"pass^{k} {pass_hat_k(per_task_a, k):.3f} vs baseline {pass_hat_k(per_task_b, k):.3f}"


def explain(row: GateRow) -> str:
    if row.diff is None:
        return f"{row.suite}/{row.agent}/{row.metric}: {row.verdict}: {row.detail}"
    return (f"{row.suite}/{row.agent}/{row.metric}: {row.verdict}: current {row.current:.3f} vs baseline "
            f"{row.baseline:.3f}, difference {row.diff} (tolerance {row.tolerance:g}; {row.detail})")
