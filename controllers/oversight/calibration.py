"""The calibration decomposition: does recalibrating the scalar score change control regret?

The score is read as P(failure if continuing) and scored out of fold against every continue
rollout (AUROC, Brier score, expected calibration error with 10 equal-width bins). Beside
those, the regret of two decision rules on the same score: threshold routing re-tuned on the
recalibrated score (monotone recalibration cannot change its decisions, so "regret unchanged"
holds by construction) and the cost-derived rule (no re-tuning; recalibration can change its
decisions, so the paper's claim can fail there). Differences to the raw score are paired per
checkpoint with cluster-bootstrap intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agentbed.stats import Interval, paired_difference_ci, rank_auc
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.utility import CONTINUE

CALIBRATIONS = ("raw", "platt", "isotonic")


def cluster_bootstrap(stat: Callable[[np.ndarray], float], groups: np.ndarray, *, resamples: int = 1000,
                      seed: int = 0, confidence: float = 0.95, point: str = "plug-in") -> Interval:
    """Percentile interval of ``stat(indices)`` when whole groups are resampled.

    ``point="median"`` reports the bootstrap median as the estimate, for statistics whose
    plug-in value is biased under resampling (ECE: an absolute deviation per bin), so the
    estimate and its interval come from the same distribution."""
    keys = list(dict.fromkeys(groups.tolist()))
    members = [np.flatnonzero(groups == k) for k in keys]
    estimate = float(stat(np.arange(len(groups))))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        idx = np.concatenate([members[j] for j in rng.integers(0, len(keys), len(keys))])
        value = stat(idx)
        if np.isfinite(value):
            samples.append(value)
    if not samples:
        return Interval(estimate, float("nan"), float("nan"), len(groups), confidence)
    lo, hi = np.quantile(samples, [(1 - confidence) / 2, (1 + confidence) / 2])
    if point == "median":
        estimate = float(np.median(samples))
    return Interval(estimate, float(lo), float(hi), len(groups), confidence)


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Sum over equal-width bins of |mean(y) - mean(p)| weighted by the bin's share."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(y[which == b].mean() - p[which == b].mean()) * np.mean(which == b)
                     for b in range(bins) if np.any(which == b)))


def brier(p: np.ndarray, y: np.ndarray) -> float:
    """The Brier score of P(y = 1) = ``p`` as scikit-learn 1.9's ``brier_score_loss`` computes it, to the
    bit (both classes' squared errors, summed, averaged, halved), without its input checks: a
    bootstrap calls it hundreds of times on the same valid arrays."""
    return float(np.mean(((1.0 - y) - (1.0 - p)) ** 2 + (y - p) ** 2) * 0.5)


def interval_dict(iv: Interval) -> dict[str, float]:
    return {"estimate": iv.estimate, "low": iv.low, "high": iv.high, "n": iv.n}


def decomposition(cps: Checkpoints, scores: dict[str, np.ndarray], regrets: dict[str, np.ndarray],
                  resamples: int, seed: int) -> dict[str, Any]:
    """Per score (raw, Platt, isotonic): prediction metrics and the regret of both rules, and the
    paired regret differences recalibrated - raw under each rule."""
    games = cps.games
    idx, success, _, _ = cps.rollout_rows(CONTINUE)
    failed, rgroups = 1.0 - success, games[idx]
    bs = {"resamples": resamples, "seed": seed}

    def regret_ci(name: str) -> dict[str, float]:
        return interval_dict(cluster_bootstrap(lambda i: regrets[name][i].mean(), games, **bs))

    rows = []
    for method in CALIBRATIONS:
        p = scores[method][idx]
        suffix = "" if method == "raw" else f"+{method}"
        rows.append({
            "score": method,
            "auroc": interval_dict(cluster_bootstrap(lambda i, p=p: rank_auc(failed[i], p[i]), rgroups, **bs)),
            "brier": interval_dict(cluster_bootstrap(lambda i, p=p: brier(p[i], failed[i]), rgroups, **bs)),
            "ece": interval_dict(cluster_bootstrap(lambda i, p=p: expected_calibration_error(p[i], failed[i]),
                                                   rgroups, point="median", **bs)),
            "regret": regret_ci(f"scalar{suffix}"),
            "regret_cost_rule": regret_ci(f"cost-rule{suffix}"),
        })
    differences = {}
    for rule in ("scalar", "cost-rule"):
        for method in CALIBRATIONS[1:]:
            differences[f"{rule}+{method} - {rule}"] = interval_dict(paired_difference_ci(
                regrets[f"{rule}+{method}"], regrets[rule], groups=games.tolist(), n_resamples=resamples, seed=seed))
    return {"rows": rows, "differences": differences}
