"""A learning curve over the development set's size, repeated over training draws (issue 54 item 4).

For each size n and draw d the controllers are fitted on n development units (games; GraphRAG's
questions) and scored on the same held-out checkpoints. Below the full size a draw is n units
chosen without replacement; at the full size a draw is a bootstrap resample of the development
units (with replacement), so the full-size point's interval carries the variation over which
games happened to be developed on; a resample repeats games, which lets the forests (two samples a
leaf) fit them closely, so the full size is also fitted once on every unit (``all_once``, its
interval over held-out units only) and the last step of the curve is measured to both. Intervals are two-level percentile bootstraps: each resample
draws training draws with replacement and held-out units with replacement (cluster bootstrap), so
they include both the held-out sampling and the training-draw variation. Between consecutive
sizes the change of a regret or ratio is bootstrapped the same way, each size's draws resampled on
their own and the held-out units jointly (the same checkpoints are scored at every size), so a flat
stretch of the curve is a measured change with an interval, not a look at two overlapping bars.
Paired rows of the paper's claims are kept per draw too: recalibration (Platt - raw) under the
cost-derived rule and under the re-tuned threshold, on the same fits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from agentbed.errors import UsageError
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.evaluate import ZERO, cross_validate
from controllers.oversight.fitmemo import remembered
from controllers.oversight.policies import ActionConditioned
from controllers.oversight.utility import regret

AC, RISK_AC, SELECTED = "action-conditioned", "action-conditioned (risk only)", "scalar-selected"
CURVE_CONTROLLERS = (AC, RISK_AC, SELECTED, "scalar-bands", "scalar-bands-k3", "scalar-bands-any", "best-fixed",
                     "scalar", "scalar+platt", "cost-rule", "cost-rule+platt")
BASELINES = (RISK_AC, SELECTED, "scalar-bands", "scalar-bands-k3", "scalar-bands-any", "best-fixed", "scalar")
# (a, b): regret(a) - regret(b) on the same fits, the recalibration claim under both rules
CLAIM_PAIRS = (("cost-rule+platt", "cost-rule"), ("scalar+platt", "scalar"))


def risk_only(cps: Checkpoints) -> Checkpoints:
    """The same checkpoints with the scalar score as the only feature."""
    return dataclasses.replace(cps, X=cps.risk.reshape(-1, 1), feature_names=("risk",))


def draw_units(units: Sequence[str], n: int, draw: int, seed: int) -> list[str]:
    """Draw ``draw`` of ``n`` development units: without replacement below the full size, a
    bootstrap resample at it."""
    rng = np.random.default_rng([seed, n, draw])
    return [units[i] for i in rng.choice(len(units), n, replace=n == len(units))]


@remembered  # a contrast's settings, or a curve beside a contrast, fit the same draws (fitmemo.py)
def _fit_and_score(train: Checkpoints, test: Checkpoints, config: Any) -> dict[str, np.ndarray]:
    u = test.utilities(config.costs)
    cv = cross_validate(test, config, [config.costs], train)
    out = {name: regret(u, test.choices, cv["chosen"][name][0]) for name in CURVE_CONTROLLERS if name != RISK_AC}
    alone = ActionConditioned(config.forest)
    alone.fit(risk_only(train))
    out[RISK_AC] = regret(u, test.choices, alone.choose(risk_only(test), config.costs))
    return out


def two_level(stat: Callable[[np.ndarray, np.ndarray], float], draws: int, groups: np.ndarray, *,
              resamples: int, seed: int) -> dict[str, float]:
    """Percentile interval of ``stat(draw indices, checkpoint indices)`` resampling training draws
    and held-out groups, each with replacement."""
    return nested(stat, [draws], groups, resamples=resamples, seed=seed)


def nested(stat: Callable[..., float], draws: Sequence[int], groups: np.ndarray, *, resamples: int,
           seed: int) -> dict[str, Any]:
    """Percentile interval of ``stat(draw indices per size..., checkpoint indices)``: each size's
    training draws resampled on their own, the held-out groups once for all (they are shared)."""
    keys = list(dict.fromkeys(groups.tolist()))
    members = [np.flatnonzero(groups == k) for k in keys]
    rng = np.random.default_rng(seed)
    estimate = float(stat(*(np.arange(d) for d in draws), np.arange(len(groups))))
    samples = []
    for _ in range(resamples):
        ks = [rng.integers(0, d, d) for d in draws]
        idx = np.concatenate([members[j] for j in rng.integers(0, len(keys), len(keys))])
        value = stat(*ks, idx)
        if np.isfinite(value):
            samples.append(value)
    lo, hi = np.quantile(samples, [0.025, 0.975]) if samples else (float("nan"), float("nan"))
    return {"estimate": estimate, "low": float(lo), "high": float(hi),
            "draws": draws[0] if len(draws) == 1 else list(draws), "n": len(groups)}


def _mean(R: dict[str, np.ndarray], name: str, k: np.ndarray, i: np.ndarray) -> float:
    return float(R[name][np.ix_(k, i)].mean())


def _ratio(R: dict[str, np.ndarray], a: str, b: str, k: np.ndarray, i: np.ndarray) -> float:
    den = _mean(R, b, k, i)
    return _mean(R, a, k, i) / den if den > ZERO else float("nan")


def _point(R: dict[str, np.ndarray], groups: np.ndarray, bs: dict[str, int]) -> dict[str, Any]:
    """One size's regrets (``R[name]``: draws x held-out checkpoints) summarised with two-level intervals."""
    draws = len(R[AC])

    def paired(a: str, b: str) -> dict[str, Any]:
        return two_level(lambda k, i: _mean(R, a, k, i) - _mean(R, b, k, i), draws, groups, **bs)

    per_draw = [float(R[AC][k].mean() / R[SELECTED][k].mean()) if R[SELECTED][k].mean() > ZERO else float("nan")
                for k in range(draws)]
    return {"regret": {c: two_level(partial(_mean, R, c), draws, groups, **bs) for c in CURVE_CONTROLLERS},
            "ratio": {b: two_level(partial(_ratio, R, AC, b), draws, groups, **bs) for b in BASELINES},
            "difference": {b: paired(AC, b) for b in BASELINES},
            "claims": {f"{a} - {b}": paired(a, b) for a, b in CLAIM_PAIRS},
            "ratio_to_selected_per_draw": per_draw}


def _change(before: dict[str, np.ndarray], after: dict[str, np.ndarray], groups: np.ndarray,
            bs: dict[str, int]) -> dict[str, Any]:
    """What growing the development set from one size to the next changed, with nested intervals."""
    draws = [len(before[AC]), len(after[AC])]

    def of(stat: Callable[[dict[str, np.ndarray], np.ndarray, np.ndarray], float]) -> dict[str, Any]:
        return nested(lambda k1, k2, i: stat(after, k2, i) - stat(before, k1, i), draws, groups, **bs)

    def mean_of(name: str) -> Callable[[dict[str, np.ndarray], np.ndarray, np.ndarray], float]:
        return lambda R, k, i: _mean(R, name, k, i)

    return {"regret": {c: of(mean_of(c)) for c in (AC, SELECTED, RISK_AC)},
            "ratio_to_selected": of(lambda R, k, i: _ratio(R, AC, SELECTED, k, i))}


def size_regrets(train: Checkpoints, test: Checkpoints, n: int, draws: int, config: Any,
                 progress: Callable[[str], None] = lambda m: None) -> tuple[dict[str, np.ndarray], int]:
    """Held-out regret per controller (draws x held-out checkpoints) of fits on ``draws`` draws of
    ``n`` development units, and how many distinct training sets the draws were."""
    units = sorted(set(train.games.tolist()))
    fits: dict[tuple[str, ...], dict[str, np.ndarray]] = {}
    per_draw = []
    for d in range(draws):
        chosen = tuple(sorted(draw_units(units, n, d, config.seed)))
        if chosen not in fits:
            idx = np.concatenate([np.flatnonzero(train.games == g) for g in chosen])
            fits[chosen] = _fit_and_score(train.subset(idx), test, config)
        per_draw.append(fits[chosen])
        progress(f"size {n}: draw {d + 1}/{draws}")
    return {name: np.stack([r[name] for r in per_draw]) for name in CURVE_CONTROLLERS}, len(fits)


def once_regrets(train: Checkpoints, test: Checkpoints, config: Any) -> dict[str, np.ndarray]:
    """Held-out regret per controller (1 x held-out checkpoints) of one fit on every development unit."""
    once = _fit_and_score(train, test, config)
    return {name: once[name][None, :] for name in CURVE_CONTROLLERS}


def learning_curve(train: Checkpoints, test: Checkpoints, sizes: Sequence[int], draws: int, config: Any,
                   progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Regret per controller per development size, and the action-conditioned controller's ratio
    and difference against each scalar-only baseline, with two-level intervals."""
    units = sorted(set(train.games.tolist()))
    if not sizes or max(sizes) > len(units) or min(sizes) < 2:
        raise UsageError(f"--sizes: each between 2 and the development set's {len(units)} units, got {list(sizes)}")
    bs = {"resamples": config.resamples, "seed": config.seed}
    points, regrets = [], []
    for n in sizes:
        R, distinct = size_regrets(train, test, n, draws, config, progress)
        regrets.append(R)
        points.append({"size": n, "draws": draws, "distinct_training_sets": distinct, **_point(R, test.games, bs)})
    changes = [{"from": a, "to": b, **_change(ra, rb, test.games, bs)}
               for a, b, ra, rb in zip(sizes, sizes[1:], regrets, regrets[1:], strict=False)]
    if sizes[-1] == len(units):  # the whole development set once, beside its bootstrap draws
        R1 = once_regrets(train, test, config)
        points[-1]["all_once"] = _point(R1, test.games, bs)
        if len(sizes) > 1:
            changes.append({"from": sizes[-2], "to": f"{sizes[-1]} (all, once)",
                            **_change(regrets[-2], R1, test.games, bs)})
        progress(f"size {sizes[-1]}: all units once")
    return {"units": len(units), "held_out_checkpoints": len(test), "held_out_units": len(set(test.games.tolist())),
            "sizes": list(sizes), "points": points, "changes": changes}
