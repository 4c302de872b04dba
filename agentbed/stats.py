"""Statistics for results: bootstrap intervals, paired differences, pass^k.

Intervals are percentile bootstrap intervals (Efron & Tibshirani, *An Introduction to the
Bootstrap*, 1993), computed over the values in a canonical order (sorted, by group), so the
same observations give the same interval in whatever order they arrive. Where episodes are grouped (seeds within tasks), resampling is by group
(the cluster bootstrap) so that correlated seeds of one task are not counted as independent.
pass^k is the probability that all k i.i.d. trials of a task succeed, estimated without bias
from n >= k trials with c successes as C(c, k) / C(n, k) (Yao et al., tau-bench, 2024).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    def to_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n,
                "confidence": self.confidence}

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha])
    return float(lo), float(hi)


def bootstrap_ci(values: Sequence[float], statistic: Callable[[np.ndarray], float] = np.mean, *,
                 groups: Sequence[Hashable] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                 confidence: float = 0.95, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of ``statistic`` (the mean by default).

    With ``groups``, whole groups are resampled (cluster bootstrap) and the statistic is
    computed on the pooled values of the drawn groups.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, confidence)
    # Canonical order first: the interval is a function of the values (and their groups), not
    # of the order they came in, so it does not depend on which episode finished first.
    if groups is None:
        data = np.sort(data)
    else:
        if len(groups) != data.size:
            raise ValueError(f"{len(groups)} groups for {data.size} values")
        data, group_ids = _canonical_order(data, groups)
    estimate = float(statistic(data))
    if data.size == 1:
        return Interval(estimate, estimate, estimate, 1, confidence)
    rng = np.random.default_rng(seed)
    if groups is None:
        idx = rng.integers(0, data.size, size=(n_resamples, data.size))
        samples = np.apply_along_axis(statistic, 1, data[idx]) if statistic is not np.mean else data[idx].mean(axis=1)
    else:
        _, first = np.unique(group_ids, return_index=True)
        keys = group_ids[np.sort(first)]  # in order of first appearance: canonical order (sorted above)
        members = [np.flatnonzero(group_ids == k) for k in keys]
        draws = rng.integers(0, len(keys), size=(n_resamples, len(keys)))
        samples = _pooled_means(data, members, draws) if statistic is np.mean else \
            _each_draw(statistic, data, members, draws)
    lo, hi = _percentiles(samples, confidence)
    return Interval(estimate, lo, hi, int(data.size), confidence)


POOLED_CHUNK = 1 << 20  # values gathered at once by _pooled_means: 8 MiB, whatever the run's size
LOOP_ABOVE = 64  # unequal groups averaging more values than this: one np.mean per draw, as before


def _each_draw(statistic: Callable[[np.ndarray], float], data: np.ndarray, members: list[np.ndarray],
               draws: np.ndarray) -> np.ndarray:
    """``statistic`` of each draw's pooled values, one call per draw (the definition)."""
    return np.array([statistic(data[np.concatenate([members[j] for j in row])]) for row in draws])


def _pooled_means(data: np.ndarray, members: list[np.ndarray], draws: np.ndarray) -> np.ndarray:
    """``np.mean`` of each draw's pooled values (its groups' members, concatenated in the draw's
    order), to the bit, without a Python call per draw: rows of one pooled length are averaged
    together as a 2-D array, whose ``mean(axis=1)`` sums each row as ``np.mean`` sums a 1-D array
    (the same pairwise summation over the same values in the same order, then one division).
    A chunk of rows at a time, so memory stays bounded for a large run. Groups of unequal sizes
    holding more than ``LOOP_ABOVE`` values on average keep :func:`_each_draw` (as fast there)."""
    sizes = np.fromiter((m.size for m in members), dtype=np.int64, count=len(members))
    equal = bool((sizes == sizes[0]).all())
    if not equal and sizes.mean() > LOOP_ABOVE:  # long rows: a call per row costs little beside the gather
        return _each_draw(np.mean, data, members, draws)
    grouped = data[np.concatenate(members)]  # every group's values, group after group
    samples = np.empty(len(draws), dtype=float)
    if equal:  # every pooled row has one length: a (groups, size) table
        table = grouped.reshape(len(members), int(sizes[0]))
        rows = max(1, POOLED_CHUNK // table.size)
        for top in range(0, len(draws), rows):
            chunk = draws[top:top + rows]
            samples[top:top + rows] = table[chunk].reshape(len(chunk), -1).mean(axis=1)
        return samples
    starts = np.cumsum(sizes) - sizes
    lengths = sizes[draws].sum(axis=1)
    order = np.argsort(lengths, kind="stable")  # rows of one length next to each other
    rows = max(1, POOLED_CHUNK // int(lengths.max()))
    for top in range(0, len(draws), rows):
        which = order[top:top + rows]
        flat = draws[which].ravel()
        counts = sizes[flat]
        # each drawn group's values back to back: the rows' concatenations, row after row
        values = grouped[np.repeat(starts[flat] - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())]
        length = lengths[which]
        edges = np.flatnonzero(np.diff(length)) + 1
        at = 0
        for first, last in zip(np.concatenate(([0], edges)), np.concatenate((edges, [len(which)])), strict=True):
            size = int(length[first])
            block = values[at:at + (last - first) * size]
            samples[which[first:last]] = block.reshape(last - first, size).mean(axis=1)
            at += block.size
    return samples


def success_rate_ci(counts: Mapping[str, tuple[int, int]], *, n_resamples: int = DEFAULT_RESAMPLES,
                    confidence: float = 0.95, seed: int = 0) -> Interval:
    """:func:`bootstrap_ci` of successes as 1.0/0.0 grouped by task, from each task's
    ``(successes, trials)`` alone: the same interval to the bit, since the mean of a resample is
    its drawn tasks' successes over their trials, and sums of whole numbers are exact in any
    order. Tasks are drawn in :func:`bootstrap_ci`'s canonical order with the same generator, so a
    summary folding 100,000 episodes keeps two counts per task, not a value per episode."""
    tasks = sorted(counts, key=_canonical)  # distinct texts: _canonical_order's group order
    successes = np.asarray([counts[t][0] for t in tasks], dtype=float)
    trials = np.asarray([counts[t][1] for t in tasks], dtype=np.int64)
    n = int(trials.sum())
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, confidence)
    estimate = float(np.float64(successes.sum()) / n)
    if n == 1:
        return Interval(estimate, estimate, estimate, 1, confidence)
    keep = trials > 0  # a task of no trials is no group
    successes, trials = successes[keep], trials[keep]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, trials.size, size=(n_resamples, trials.size))
    samples = successes[draws].sum(axis=1) / trials[draws].sum(axis=1)
    lo, hi = _percentiles(samples, confidence)
    return Interval(estimate, lo, hi, n, confidence)


def _canonical(key: Hashable) -> tuple[str, str]:
    return (type(key).__name__, str(key))


def _canonical_order(data: np.ndarray, groups: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """``data`` sorted by (canonical group, value), ties in their order (as ``sorted`` is stable),
    and each sorted value's group as a number (one per group distinct by ``==``). Numpy arrays,
    not a Python key tuple per value: a 100,000-episode run's summary sorted about 20 MB of those."""
    typed: dict[tuple[type, Hashable], int] = {}  # True and 1 are one group but sort apart, as before
    typed_ids = np.fromiter((typed.setdefault((type(g), g), len(typed)) for g in groups), dtype=np.int64,
                            count=data.size)
    equal: dict[Hashable, int] = {}
    group_ids = np.asarray([equal.setdefault(g, len(equal)) for _, g in typed], dtype=np.int64)[typed_ids]
    if np.isnan(data).any():  # NaN has no order to agree on with ``sorted``: the definition itself
        order = np.asarray(sorted(range(data.size), key=lambda i: (_canonical(groups[i]), data[i])), dtype=np.int64)
        return data[order], group_ids[order]
    canonical = [_canonical(g) for _, g in typed]
    rank = {key: r for r, key in enumerate(sorted(set(canonical)))}
    ranks = np.asarray([rank[key] for key in canonical], dtype=np.int64)[typed_ids]
    order = np.lexsort((np.arange(data.size), data, ranks))  # the last key first: rank, value, position
    return data[order], group_ids[order]


def paired_difference_ci(a: Sequence[float], b: Sequence[float], *, groups: Sequence[Hashable] | None = None,
                         n_resamples: int = DEFAULT_RESAMPLES, confidence: float = 0.95, seed: int = 0) -> Interval:
    """Interval of mean(a - b) over paired observations (same task and seed in both)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length ({x.size} vs {y.size})")
    return bootstrap_ci(x - y, groups=groups, n_resamples=n_resamples, confidence=confidence, seed=seed)


def pass_hat_k(successes_per_task: Mapping[Any, Sequence[bool]], k: int) -> float:
    """Mean over tasks of C(c, k) / C(n, k); tasks with fewer than k trials are left out."""
    values = [comb(sum(map(bool, s)), k) / comb(len(s), k) for s in successes_per_task.values() if len(s) >= k]
    return float(np.mean(values)) if values else float("nan")


def pass_hat_k_ci(successes_per_task: Mapping[Any, Sequence[bool]], k: int, *,
                  n_resamples: int = DEFAULT_RESAMPLES, confidence: float = 0.95, seed: int = 0) -> Interval:
    """pass^k with a bootstrap interval over tasks."""
    return pass_hat_k_ci_of_counts([(sum(map(bool, s)), len(s)) for s in successes_per_task.values()], k,
                                   n_resamples=n_resamples, confidence=confidence, seed=seed)


def pass_hat_k_ci_of_counts(counts: Iterable[tuple[int, int]], k: int, *, n_resamples: int = DEFAULT_RESAMPLES,
                            confidence: float = 0.95, seed: int = 0) -> Interval:
    """:func:`pass_hat_k_ci` from each task's (successes, trials): all the estimate needs, so a
    summary folding episodes one at a time keeps two counts per task."""
    per_task = [comb(c, k) / comb(n, k) for c, n in counts if n >= k]
    return bootstrap_ci(per_task, n_resamples=n_resamples, confidence=confidence, seed=seed)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided exact McNemar p-value for paired pass/fail outcomes."""
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(0, min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def rank_auc(y: Sequence[bool] | np.ndarray, p: Sequence[float] | np.ndarray) -> float:
    """ROC AUC of scores ``p`` for labels ``y`` (truthy: positive) from the scores' ranks, ties
    averaged: the Mann-Whitney statistic; NaN when ``y`` holds one class only. scikit-learn's
    ``roc_auc_score`` integrates the ROC curve instead (the same number but for the last bit
    in some samples) and checks its input for some milliseconds a call, which a bootstrap
    calling it hundreds of times pays in full."""
    from scipy.stats import rankdata

    y = np.asarray(y, dtype=bool)
    positive = int(y.sum())
    negative = len(y) - positive
    if not positive or not negative:
        return float("nan")
    return float((rankdata(p)[y].sum() - positive * (positive + 1) / 2) / (positive * negative))
