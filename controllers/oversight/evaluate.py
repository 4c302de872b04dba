"""Evaluating controllers on a branched dataset: grouped cross-validation over whole games, or
a held-out dataset (games of another generator seed) scored by controllers fitted on a
development dataset.

Every number comes with a percentile bootstrap interval that resamples whole games (the
cluster bootstrap), since checkpoints of one game are correlated. Definitions:

- regret of a controller: mean over held-out checkpoints of U(oracle action) - U(chosen);
- the action-conditioned controller is compared with the scalar-only policy selected on the
  training folds only (``scalar-selected``: the headline baseline) and, for reference, with the
  scalar-only controller of least regret on the evaluated checkpoints (named in every table;
  the scalar oracle included; choosing on the evaluated data favours the baseline), with
  cluster-bootstrap intervals of the regret ratios; a ratio whose denominator can reach 0 under
  resampling has no upper bound (``high`` is infinite);
- the spread of the intervention advantage across prefixes: quantiles of tau(h), the share of
  checkpoints whose best action is not the primary intervention, and how close always
  intervening comes to the oracle;
- intervention advantage tau(h) = E[U | intervene, h] - E[U | continue, h], per checkpoint,
  with an interval from resampling that checkpoint's rollouts;
- the calibration decomposition (:mod:`controllers.oversight.calibration`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.model_selection import GroupKFold

from agentbed.errors import UsageError
from agentbed.stats import bootstrap_ci, paired_difference_ci
from controllers.oversight.calibration import (
    CALIBRATIONS,
    cluster_bootstrap,
    decomposition,
    expected_calibration_error,
    interval_dict,
)
from controllers.oversight.checkpoints import Checkpoints, group_checkpoints
from controllers.oversight.dataset import Dataset
from controllers.oversight.features import FEATURE_NAMES
from controllers.oversight.fitmemo import remembered
from controllers.oversight.policies import ActionConditioned, ForestSettings, default_controllers
from controllers.oversight.scalar import (
    FITTED_SCALAR_ONLY,
    SCALAR_ONLY,
    BandRouter,
    BestFixed,
    CostRule,
    ScalarOracle,
    ScalarRouting,
    SelectedScalar,
)
from controllers.oversight.split import feature_column, regret_split
from controllers.oversight.utility import CONTINUE, DEFAULT_COSTS, Costs, branch_utility, cost_grid, regret

SCALAR, AC, SELECTED = "scalar", "action-conditioned", "scalar-selected"
__all__ = ["EvalConfig", "cluster_bootstrap", "evaluate", "expected_calibration_error"]


@dataclass
class EvalConfig:
    folds: int = 5
    costs: Costs = DEFAULT_COSTS
    grid: bool = True
    forest: ForestSettings = field(default_factory=ForestSettings)
    resamples: int = 1000
    seed: int = 0
    split_by: str = ""  # a prefix feature: where the regret sits, flagged (> 0) or not (split.py)


def _splits(cps: Checkpoints, train: Checkpoints | None, folds: int) -> tuple[list, int]:
    if train is not None:
        return [(None, np.arange(len(cps)))], 1
    n_games = len(set(cps.games.tolist()))
    if n_games < 2:
        raise UsageError(f"the dataset has {n_games} game(s); grouped cross-validation needs at least 2")
    splitter = GroupKFold(n_splits=min(folds, n_games))
    return list(splitter.split(cps.X, groups=cps.games)), splitter.n_splits


@remembered  # a process often fits the same checkpoints again (fitmemo.py)
def cross_validate(cps: Checkpoints, config: EvalConfig, costs_list: Sequence[Costs],
                   train_cps: Checkpoints | None = None) -> dict[str, Any]:
    """Out-of-fold choices of every controller for every cost setting, and out-of-fold scores.

    With ``train_cps`` (a development dataset) there is one fold: every controller is fitted
    on all of it and decides on every checkpoint of ``cps``."""
    splits, n_folds = _splits(cps, train_cps, config.folds)
    chosen: dict[str, list[np.ndarray]] = {}
    scores = {m: np.zeros(len(cps)) for m in CALIBRATIONS}
    fold_of = np.zeros(len(cps), dtype=int)
    penalties: list[float] = []  # the action-conditioned lambda each fold chose at the main costs
    fitted: list[dict[str, Any]] = []  # what each fold's scalar-only baselines settled on
    for fold, (train_idx, test_idx) in enumerate(splits):
        fold_of[test_idx] = fold
        train = train_cps if train_idx is None else cps.subset(train_idx)
        test = cps.subset(test_idx)
        notes: dict[str, Any] = {}
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
            if isinstance(controller, BandRouter):
                cuts, actions, k = controller.bands(costs_list[0])
                notes["bands"] = {"K": k, "cuts": [round(c, 4) for c in cuts.tolist()],
                                  "actions": [train.choices[j] for j in actions]}
            if isinstance(controller, BestFixed):
                notes["best_fixed"] = controller.action(costs_list[0])
            if isinstance(controller, SelectedScalar):
                notes["selected"] = controller.picked(costs_list[0])
            if isinstance(controller, CostRule) and controller.score.method in ("raw", "platt"):
                notes[f"cost_rule_{controller.score.method}"] = controller.segments(costs_list[0])
        fitted.append(notes)
    oracle = ScalarOracle()  # on all evaluated checkpoints at once: a bound, not a fitted controller
    chosen[oracle.name] = [oracle.choose(cps, costs) for costs in costs_list]
    return {"chosen": chosen, "scores": scores, "fold": fold_of, "folds": n_folds, "penalties": penalties,
            "scalar_fits": fitted}


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


def load_checkpoints(dataset: Dataset) -> tuple[Checkpoints, dict[str, Any]]:
    """The dataset's complete checkpoints and its accounting: built = evaluated + dropped."""
    prov = dataset.provenance
    cps, incomplete = group_checkpoints(dataset.rows, prov["actions"], prov.get("primary_intervention", ""),
                                        prov.get("feature_names", FEATURE_NAMES))
    counts = prov.get("counts", {})
    with_rows = len(cps) + incomplete
    rollouts = int(prov.get("config", {}).get("rollouts", 1))
    short = sum(any(len(cps.outcomes[a][i]) < rollouts for a in cps.actions) for i in range(len(cps)))
    built = max(int(counts.get("checkpoints", with_rows)), with_rows)
    accounting = {
        "checkpoints_built": built, "checkpoints_evaluated": len(cps),
        "dropped_missing_an_action": incomplete, "dropped_without_any_branch": built - with_rows,
        "evaluated_with_a_lost_branch": short,
        "branches": counts.get("branches", 0), "replays": counts.get("replays", 0),
        "replay_mismatches": counts.get("replay_mismatches", 0), "branch_errors": counts.get("branch_errors", 0),
        "base_agent_crashes": counts.get("trajectory_errors", 0), "trajectories": counts.get("trajectories", 0),
        "missing_confidence_steps": counts.get("missing_risk_steps"),
        "missing_confidence_checkpoints": counts.get("missing_risk_checkpoints"),
        "base_agent_steps": counts.get("base_steps"),
    }
    return cps, accounting


ZERO = 1e-9  # regrets are sums of utilities: below this a mean regret is a float residue of 0


def _ratio(num: np.ndarray, den: np.ndarray, games: np.ndarray, bs: dict[str, int]) -> dict[str, float]:
    """Cluster-bootstrap interval of mean(num) / mean(den). Resamples whose denominator is 0 have
    no ratio; when there are any, the denominator's interval touches 0 and the ratio has no upper
    bound, so ``high`` is infinite (printed "unbounded"), never a 16-digit number."""
    out = interval_dict(cluster_bootstrap(lambda i: num[i].mean() / den[i].mean() if den[i].mean() > ZERO
                                          else float("nan"), games, **bs))
    if den.mean() <= ZERO:
        out["estimate"] = float("nan")
    den_low = cluster_bootstrap(lambda i: den[i].mean(), games, **bs).low
    if not den_low > ZERO:
        out["high"] = float("inf")
    return out


def target_error(risk: np.ndarray, best: np.ndarray, bins: int = 10) -> float:
    """The paper's target error ("two prefixes can have the same risk estimate while requiring
    different actions") as a share: among pairs of checkpoints whose risk falls in the same
    equal-frequency bin (at most ``bins``), the share whose best realized actions differ. 0 when
    the binned risk determines the best action; NaN without any such pair."""
    if not len(risk):
        return float("nan")
    edges = np.unique(np.quantile(risk, np.linspace(0, 1, bins + 1)[1:-1], method="inverted_cdf"))
    labels = np.searchsorted(edges, risk, side="left")
    pairs = differ = 0.0
    for b in np.unique(labels):
        n = int((labels == b).sum())
        same = sum(c * (c - 1) / 2 for c in Counter(best[labels == b].tolist()).values())
        pairs += n * (n - 1) / 2
        differ += n * (n - 1) / 2 - same
    return differ / pairs if pairs else float("nan")


def advantage_spread(cps: Checkpoints, costs: Costs, chosen_by_oracle: np.ndarray,
                     advantage: dict[str, list[dict[str, Any]]], bs: dict[str, int]) -> dict[str, Any]:
    """How much the best action depends on the prefix: per intervention the quantiles and the
    standard deviation of tau(h); the oracle's action shares; the share of checkpoints whose best
    action is not the primary intervention ("defer"); and always-deferring's utility against the
    oracle's (the benchmark has room for control only when that ratio is well below 1)."""
    u = cps.utilities(costs)
    primary = cps.choices.index(cps.primary)
    oracle_u, defer_u = u.max(axis=1), u[:, primary]
    games = cps.games
    ratio = cluster_bootstrap(lambda i: defer_u[i].mean() / oracle_u[i].mean() if oracle_u[i].mean() > ZERO
                              else float("nan"), games, **bs)
    share = cluster_bootstrap(lambda i: float(np.mean(chosen_by_oracle[i] != cps.primary)), games, **bs)
    error = cluster_bootstrap(lambda i: target_error(cps.risk[i], chosen_by_oracle[i]), games, **bs)
    counts = Counter(chosen_by_oracle.tolist())
    per = {}
    for a, rows in advantage.items():
        tau = np.asarray([x["tau"] for x in rows])
        q = np.quantile(tau, [0.1, 0.25, 0.5, 0.75, 0.9]).tolist()
        per[a] = {"p10": q[0], "p25": q[1], "median": q[2], "p75": q[3], "p90": q[4], "std": float(tau.std())}
    return {"tau": per, "oracle_actions": {a: counts.get(a, 0) / len(cps) for a in cps.choices},
            "share_best_not_primary": interval_dict(share), "target_error": interval_dict(error),
            "defer_to_oracle_utility": interval_dict(ratio),
            "oracle_utility": float(oracle_u.mean()), "defer_utility": float(defer_u.mean())}


def regime_descriptors(cps: Checkpoints, regrets: dict[str, np.ndarray], advantage: dict[str, list[dict[str, Any]]],
                       spread: dict[str, Any], bs: dict[str, int]) -> dict[str, Any]:
    """The regime a benchmark is in (issue 54 item 5), each with a cluster-bootstrap interval:
    how widely the primary intervention's advantage tau(h) spreads (its standard deviation), the
    share of checkpoints where deferring to it is not best, the intervention's strength (mean
    tau), and how much of the room for control the scalar score explains: the share of the gap
    between the best fixed action and the oracle that the scalar oracle (the best policy of the
    binned score, fitted on these very checkpoints) closes; 0 where the score says nothing."""
    tau = np.asarray([x["tau"] for x in advantage[cps.primary]])
    fixed, scalar = regrets["best-fixed"], regrets["scalar-oracle"]
    explained = cluster_bootstrap(lambda i: 1.0 - scalar[i].mean() / fixed[i].mean() if fixed[i].mean() > ZERO
                                  else float("nan"), cps.games, **bs)
    return {"intervention": cps.primary,
            "advantage_spread": interval_dict(cluster_bootstrap(lambda i: float(tau[i].std()), cps.games, **bs)),
            "share_defer_not_best": spread["share_best_not_primary"],
            "strength": interval_dict(cluster_bootstrap(lambda i: float(tau[i].mean()), cps.games, **bs)),
            "scalar_explains": interval_dict(explained)}


def per_flaw(cps: Checkpoints, dataset: Dataset, regrets: dict[str, np.ndarray],
             bs: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The same out-of-fold (or held-out) decisions, summarised per base agent: its checkpoints'
    regret per controller, the best scalar-only policy there and the ratio against it. The
    controllers are not refitted; the scalar oracle keeps the bins of all evaluated checkpoints."""
    flaw_of = {r["trajectory"]: r["flaw"] for r in dataset.rows}
    flaws = np.asarray([flaw_of[key[0]] for key in cps.keys], dtype=object)
    out = {}
    for flaw in dict.fromkeys(flaws.tolist()):
        idx = np.flatnonzero(flaws == flaw)
        games = cps.games[idx]
        sub = {n: r[idx] for n, r in regrets.items()}
        best = min(SCALAR_ONLY, key=lambda n: (sub[n].mean(), SCALAR_ONLY.index(n)))
        fitted = min(FITTED_SCALAR_ONLY, key=lambda n: (sub[n].mean(), FITTED_SCALAR_ONLY.index(n)))
        out[flaw] = {
            "checkpoints": len(idx), "games": len(set(games.tolist())), "best_scalar_only": best,
            "regret": {n: interval_dict(bootstrap_ci(r, groups=games.tolist(), n_resamples=bs["resamples"],
                                                     seed=bs["seed"])) for n, r in sub.items()},
            "ratios": {"selected_scalar_only": {"baseline": SELECTED, **_ratio(sub[AC], sub[SELECTED], games, bs)},
                       "best_scalar_only": {"baseline": best, **_ratio(sub[AC], sub[best], games, bs)},
                       "best_fitted_scalar_only": {"baseline": fitted, **_ratio(sub[AC], sub[fitted], games, bs)},
                       "scalar": {"baseline": SCALAR, **_ratio(sub[AC], sub[SCALAR], games, bs)}},
        }
    return out


def evaluate(dataset: Dataset, config: EvalConfig | None = None, train: Dataset | None = None) -> dict[str, Any]:
    """Regret per controller, comparison with the best scalar-only policy, the calibration
    decomposition, intervention advantage, cost sweep and accounting. With ``train`` the
    controllers are fitted on that dataset and ``dataset`` is the held-out evaluation set."""
    config = config or EvalConfig()
    prov = dataset.provenance
    cps, accounting = load_checkpoints(dataset)
    if len(cps) < 4:
        raise UsageError(f"the dataset has {len(cps)} complete checkpoints; at least 4 are needed")
    if config.split_by:
        feature_column(cps, config.split_by)  # an unknown feature fails before any fitting
    train_cps = _development_set(train, cps) if train is not None else None
    grid = cost_grid() if config.grid else []
    costs_list = [config.costs, *grid]
    cv = cross_validate(cps, config, costs_list, train_cps)
    games, bs = cps.games, {"resamples": config.resamples, "seed": config.seed}
    u = cps.utilities(config.costs)
    regrets = {name: regret(u, cps.choices, slots[0]) for name, slots in cv["chosen"].items()}

    controllers = {}
    for name, r in regrets.items():
        counts = Counter(cv["chosen"][name][0].tolist())
        controllers[name] = {"regret": interval_dict(bootstrap_ci(r, groups=games.tolist(),
                                                                  n_resamples=config.resamples, seed=config.seed)),
                             "actions": {a: counts.get(a, 0) / len(cps) for a in cps.choices},
                             "scalar_only": name in SCALAR_ONLY}
    best = min(SCALAR_ONLY, key=lambda n: (regrets[n].mean(), SCALAR_ONLY.index(n)))
    best_fitted = min(FITTED_SCALAR_ONLY, key=lambda n: (regrets[n].mean(), FITTED_SCALAR_ONLY.index(n)))

    def diff(a: str, b: str) -> dict[str, float]:
        return interval_dict(paired_difference_ci(regrets[a], regrets[b], groups=games.tolist(),
                                                  n_resamples=config.resamples, seed=config.seed))

    pairs = [(AC, SELECTED), (AC, best), (AC, best_fitted), (AC, SCALAR), ("scalar+platt", SCALAR),
             ("scalar+isotonic", SCALAR)]
    diffs = {f"{a} - {b}": diff(a, b) for a, b in dict.fromkeys(pairs)}
    ratios = {"selected_scalar_only": {"baseline": SELECTED, "picked_per_fold": [f.get("selected") for f in
                                                                                 cv["scalar_fits"]],
                                       **_ratio(regrets[AC], regrets[SELECTED], games, bs)},
              "best_scalar_only": {"baseline": best, **_ratio(regrets[AC], regrets[best], games, bs)},
              "best_fitted_scalar_only": {"baseline": best_fitted,
                                          **_ratio(regrets[AC], regrets[best_fitted], games, bs)}}

    interventions = [a for a in cps.actions if a != CONTINUE]
    advantage = {a: intervention_advantage(cps, config.costs, a, seed=config.seed) for a in interventions}
    adv_summary = {}
    p_fail = 1.0 - cps.success_rate(CONTINUE)
    for a, per in advantage.items():
        tau = np.asarray([x["tau"] for x in per])
        adv_summary[a] = {
            "mean": interval_dict(bootstrap_ci(tau, groups=games.tolist(), n_resamples=config.resamples,
                                               seed=config.seed)),
            "share_positive": float(np.mean([x["low"] > 0 for x in per])),
            "share_negative": float(np.mean([x["high"] < 0 for x in per])),
            "spearman_risk_tau": _spearman(cps.risk, tau),
        }
    sweep = []
    for k, costs in enumerate(grid, start=1):
        uk = cps.utilities(costs)
        rk = {name: float(regret(uk, cps.choices, slots[k]).mean()) for name, slots in cv["chosen"].items()}
        rk["best scalar-only"] = min(rk[n] for n in SCALAR_ONLY)
        sweep.append({"costs": costs.to_dict(), "regret": rk})
    spread = advantage_spread(cps, config.costs, cv["chosen"]["oracle"][0], advantage, bs)
    beats_selected = diffs[f"{AC} - {SELECTED}"]["high"] < 0
    worse_than_selected = diffs[f"{AC} - {SELECTED}"]["low"] > 0
    beats_all, beats_fitted = diffs[f"{AC} - {best}"]["high"] < 0, diffs[f"{AC} - {best_fitted}"]["high"] < 0
    return {
        "benchmark": prov["benchmark"], "checkpoints": len(cps), "dropped_checkpoints": accounting[
            "dropped_missing_an_action"] + accounting["dropped_without_any_branch"],
        "games": len(set(games.tolist())), "rows": len(dataset.rows), "folds": cv["folds"],
        "protocol": ("held out: fitted on a development dataset of "
                     f"{len(set(train_cps.games.tolist()))} games, evaluated on these" if train_cps is not None
                     else f"{cv['folds']}-fold cross-validation holding out whole games"),
        "train_dataset": train.provenance.get("config") if train is not None else None,
        "actions": cps.choices, "primary_intervention": cps.primary, "costs": config.costs.to_dict(),
        "forest": asdict(config.forest), "dispersion_penalty_per_fold": cv["penalties"],
        "scalar_fits_per_fold": cv["scalar_fits"],
        "controllers": controllers, "best_scalar_only": best, "best_fitted_scalar_only": best_fitted,
        "differences": diffs, "ratios": ratios,
        "ratio_action_conditioned_to_scalar": _ratio(regrets[AC], regrets[SCALAR], games, bs),
        "calibration": decomposition(cps, cv["scores"], regrets, config.resamples, config.seed),
        "advantage": adv_summary, "advantage_per_checkpoint": advantage,
        "spearman_risk_failure": _spearman(cps.risk, p_fail), "cost_sweep": sweep,
        "regime": ("gain" if beats_selected else "loss" if worse_than_selected else "no significant gain"),
        "regime_against_best_on_evaluated": ("gain" if beats_all else "gain over fitted scalar-only policies only"
                                             if beats_fitted else "no significant gain"),
        "spread": spread, "descriptors": regime_descriptors(cps, regrets, advantage, spread, bs),
        "accounting": accounting, "per_flaw": per_flaw(cps, dataset, regrets, bs),
        "replay": {k: accounting[k] for k in ("branches", "replays", "replay_mismatches", "branch_errors")},
        "split": regret_split(cps, regrets, config.split_by, **bs) if config.split_by else None,
        "regret_per_checkpoint": {name: {unit_key(g, k): float(v) for g, k, v in zip(games, cps.keys, r, strict=True)}
                                  for name, r in regrets.items()},
    }


def _development_set(train: Dataset, cps: Checkpoints) -> Checkpoints:
    """The development dataset's checkpoints; it must branch the same actions with the same
    features, and share no game with the evaluated dataset."""
    dev, _ = load_checkpoints(train)
    if dev.choices != cps.choices or tuple(dev.feature_names) != tuple(cps.feature_names):
        raise UsageError("--train: the development dataset has other actions or features than the evaluated one "
                         f"({dev.choices} vs {cps.choices})")
    shared = sorted(set(dev.games.tolist()) & set(cps.games.tolist()))
    if shared:
        raise UsageError(f"--train: the development dataset shares {len(shared)} game(s) with the evaluated one "
                         f"(e.g. {shared[0]}); a held-out evaluation needs disjoint games")
    if len(dev) < 4:
        raise UsageError(f"--train: the development dataset has {len(dev)} complete checkpoints; at least 4 needed")
    return dev


def unit_key(game: str, key: tuple[str, int]) -> str:
    """A checkpoint's unit for the gate: the game (the resampled group), then trajectory and step."""
    return f"{game}/{key[0]}@{key[1]}"


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)
