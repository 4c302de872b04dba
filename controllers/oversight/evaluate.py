"""Evaluating controllers on a branched dataset by grouped cross-validation over whole games.

Every number comes with a percentile bootstrap interval that resamples whole games (the
cluster bootstrap), since checkpoints of one game are correlated. Definitions:

- regret of a controller: mean over held-out checkpoints of U(oracle action) - U(chosen);
- intervention advantage tau(h) = E[U | intervene, h] - E[U | continue, h], per checkpoint,
  with an interval from resampling that checkpoint's rollouts;
- calibration of the scalar score as P(failure if continuing): AUROC, Brier score and
  expected calibration error (10 equal-width bins) over the continue rollouts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.model_selection import GroupKFold

from agentbed.errors import UsageError
from agentbed.stats import Interval, bootstrap_ci, paired_difference_ci
from controllers.oversight.checkpoints import Checkpoints, group_checkpoints
from controllers.oversight.dataset import Dataset
from controllers.oversight.features import FEATURE_NAMES
from controllers.oversight.policies import (
    ActionConditioned,
    ForestSettings,
    ScalarRouting,
    default_controllers,
    regret,
)
from controllers.oversight.utility import CONTINUE, DEFAULT_COSTS, Costs, branch_utility, cost_grid

SCALAR, AC = "scalar", "action-conditioned"
CALIBRATIONS = ("raw", "platt", "isotonic")


@dataclass
class EvalConfig:
    folds: int = 5
    costs: Costs = DEFAULT_COSTS
    grid: bool = True
    forest: ForestSettings = field(default_factory=ForestSettings)
    resamples: int = 1000
    seed: int = 0


def cluster_bootstrap(stat: Callable[[np.ndarray], float], groups: np.ndarray, *, resamples: int = 1000,
                      seed: int = 0, confidence: float = 0.95) -> Interval:
    """Percentile interval of ``stat(indices)`` when whole groups are resampled."""
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
    return Interval(estimate, float(lo), float(hi), len(groups), confidence)


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Sum over equal-width bins of |mean(y) - mean(p)| weighted by the bin's share."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(y[which == b].mean() - p[which == b].mean()) * np.mean(which == b)
                     for b in range(bins) if np.any(which == b)))


def _auroc(p: np.ndarray, y: np.ndarray) -> float:
    return float(roc_auc_score(y, p)) if len(set(y.tolist())) == 2 else float("nan")


def cross_validate(cps: Checkpoints, config: EvalConfig, costs_list: Sequence[Costs]) -> dict[str, Any]:
    """Out-of-fold choices of every controller for every cost setting, and out-of-fold scores."""
    n_games = len(set(cps.games.tolist()))
    if n_games < 2:
        raise UsageError(f"the dataset has {n_games} game(s); grouped cross-validation needs at least 2")
    splitter = GroupKFold(n_splits=min(config.folds, n_games))
    chosen: dict[str, list[np.ndarray]] = {}
    scores = {m: np.zeros(len(cps)) for m in CALIBRATIONS}
    fold_of = np.zeros(len(cps), dtype=int)
    penalties: list[float] = []  # the action-conditioned lambda each fold chose at the main costs
    for fold, (train_idx, test_idx) in enumerate(splitter.split(cps.X, groups=cps.games)):
        fold_of[test_idx] = fold
        train, test = cps.subset(train_idx), cps.subset(test_idx)
        for controller in default_controllers(config.forest):
            controller.fit(train)
            slots = chosen.setdefault(controller.name, [np.empty(len(cps), dtype=object) for _ in costs_list])
            pred = controller.predict(test.X) if isinstance(controller, ActionConditioned) else None
            for k, costs in enumerate(costs_list):
                if isinstance(controller, ActionConditioned):
                    slots[k][test_idx] = controller.choose(test, costs, pred)
                else:
                    slots[k][test_idx] = controller.choose(test, costs)
            if isinstance(controller, ActionConditioned):
                penalties.append(controller.penalty(costs_list[0]))
            if isinstance(controller, ScalarRouting):
                scores[controller.score.method][test_idx] = controller.score.predict(test.risk)
    return {"chosen": chosen, "scores": scores, "fold": fold_of, "folds": splitter.n_splits, "penalties": penalties}


def intervention_advantage(cps: Checkpoints, costs: Costs, action: str, *, resamples: int = 500,
                           seed: int = 0) -> list[dict[str, Any]]:
    """tau(h) per checkpoint with a bootstrap interval over that checkpoint's rollouts."""
    rng = np.random.default_rng(seed)
    out = []
    for i, key in enumerate(cps.keys):
        ui = np.asarray([branch_utility(action, s, m, costs) for s, m in cps.outcomes[action][i]])
        uc = np.asarray([branch_utility(CONTINUE, s, m, costs) for s, m in cps.outcomes[CONTINUE][i]])
        tau = float(ui.mean() - uc.mean())
        draws = (rng.choice(ui, (resamples, ui.size)).mean(axis=1) - rng.choice(uc, (resamples, uc.size)).mean(axis=1))
        lo, hi = np.quantile(draws, [0.025, 0.975])
        out.append({"trajectory": key[0], "checkpoint": key[1], "game": cps.games[i], "risk": float(cps.risk[i]),
                    "tau": tau, "low": float(lo), "high": float(hi), "rollouts": [int(ui.size), int(uc.size)]})
    return out


def _interval(iv: Interval) -> dict[str, float]:
    return {"estimate": iv.estimate, "low": iv.low, "high": iv.high, "n": iv.n}


def evaluate(dataset: Dataset, config: EvalConfig | None = None) -> dict[str, Any]:
    """Regret per controller, calibration decomposition, intervention advantage and cost sweep."""
    config = config or EvalConfig()
    prov = dataset.provenance
    cps, dropped = group_checkpoints(dataset.rows, prov["actions"], prov.get("primary_intervention", ""),
                                     prov.get("feature_names", FEATURE_NAMES))
    if len(cps) < 4:
        raise UsageError(f"the dataset has {len(cps)} complete checkpoints; at least 4 are needed")
    grid = cost_grid() if config.grid else []
    costs_list = [config.costs, *grid]
    cv = cross_validate(cps, config, costs_list)
    games, bs = cps.games, {"resamples": config.resamples, "seed": config.seed}
    u = cps.utilities(config.costs)
    regrets = {name: regret(u, cps.choices, slots[0]) for name, slots in cv["chosen"].items()}

    controllers = {}
    for name, r in regrets.items():
        counts = Counter(cv["chosen"][name][0].tolist())
        controllers[name] = {"regret": _interval(bootstrap_ci(r, groups=games.tolist(), n_resamples=config.resamples,
                                                              seed=config.seed)),
                             "actions": {a: counts.get(a, 0) / len(cps) for a in cps.choices}}
    diffs = {f"{other} - {SCALAR}": _interval(paired_difference_ci(regrets[other], regrets[SCALAR],
                                                                    groups=games.tolist(),
                                                                    n_resamples=config.resamples, seed=config.seed))
             for other in (AC, "scalar+platt", "scalar+isotonic")}
    ratio = cluster_bootstrap(lambda idx: regrets[AC][idx].mean() / regrets[SCALAR][idx].mean()
                              if regrets[SCALAR][idx].mean() > 0 else float("nan"), games, **bs)

    idx, success, _, _ = cps.rollout_rows(CONTINUE)
    failed, rgroups = 1.0 - success, games[idx]
    calibration = []
    for method in CALIBRATIONS:
        p = cv["scores"][method][idx]
        name = SCALAR if method == "raw" else f"scalar+{method}"
        calibration.append({
            "score": method,
            "auroc": _interval(cluster_bootstrap(lambda i, p=p: _auroc(p[i], failed[i]), rgroups, **bs)),
            "brier": _interval(cluster_bootstrap(lambda i, p=p: float(brier_score_loss(failed[i], p[i])), rgroups, **bs)),
            "ece": _interval(cluster_bootstrap(lambda i, p=p: expected_calibration_error(p[i], failed[i]), rgroups, **bs)),
            "regret": controllers[name]["regret"],
        })

    interventions = [a for a in cps.actions if a != CONTINUE]
    advantage = {a: intervention_advantage(cps, config.costs, a, seed=config.seed) for a in interventions}
    adv_summary = {}
    p_fail = 1.0 - cps.success_rate(CONTINUE)
    for a, per in advantage.items():
        tau = np.asarray([x["tau"] for x in per])
        adv_summary[a] = {
            "mean": _interval(bootstrap_ci(tau, groups=games.tolist(), n_resamples=config.resamples, seed=config.seed)),
            "share_positive": float(np.mean([x["low"] > 0 for x in per])),
            "share_negative": float(np.mean([x["high"] < 0 for x in per])),
            "spearman_risk_tau": _spearman(cps.risk, tau),
        }
    sweep = []
    for k, costs in enumerate(grid, start=1):
        uk = cps.utilities(costs)
        rk = {name: float(regret(uk, cps.choices, slots[k]).mean()) for name, slots in cv["chosen"].items()}
        sweep.append({"costs": costs.to_dict(), "regret": rk})
    gain = diffs[f"{AC} - {SCALAR}"]
    return {
        "benchmark": prov["benchmark"], "checkpoints": len(cps), "dropped_checkpoints": dropped,
        "games": len(set(games.tolist())), "rows": len(dataset.rows), "folds": cv["folds"],
        "actions": cps.choices, "primary_intervention": cps.primary, "costs": config.costs.to_dict(),
        "forest": asdict(config.forest), "dispersion_penalty_per_fold": cv["penalties"],
        "controllers": controllers, "differences": diffs,
        "ratio_action_conditioned_to_scalar": _interval(ratio), "calibration": calibration,
        "advantage": adv_summary, "advantage_per_checkpoint": advantage,
        "spearman_risk_failure": _spearman(cps.risk, p_fail), "cost_sweep": sweep,
        "regime": "gain" if gain["high"] < 0 else "no significant gain",
        "replay": {k: prov["counts"][k] for k in ("branches", "replays", "replay_mismatches", "branch_errors")},
        "regret_per_checkpoint": {name: {unit_key(g, k): float(v) for g, k, v in zip(games, cps.keys, r, strict=True)}
                                  for name, r in regrets.items()},
    }


def unit_key(game: str, key: tuple[str, int]) -> str:
    """A checkpoint's unit for the gate: the game (the resampled group), then trajectory and step."""
    return f"{game}/{key[0]}@{key[1]}"


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)
