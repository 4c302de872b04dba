"""Oversight controllers: pick one action per checkpoint from prefix-only information.

Each controller is fitted on training checkpoints without looking at costs (``fit``) and
then decides for any cost setting (``choose``), so the 5x5 cost sweep reuses one fit.

- the scalar-only baselines (:mod:`controllers.oversight.scalar`): two-action threshold
  routing, the best fixed action, score bands mapped to actions, the cost-derived rule, and
  the scalar oracle;
- :class:`ActionConditioned`: per action, a random forest estimates success and length from
  prefix features; the controller picks the action of highest expected utility minus a
  penalty on the forest's dispersion across trees ("Calibration Is Not Control", 2026).
- :class:`Oracle` and the fixed policies ``always continue`` / ``always intervene``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import GroupKFold

from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.scalar import RiskScore, ScalarRouting, scalar_controllers  # noqa: F401 - re-exported
from controllers.oversight.utility import CONTINUE, QUIT, Costs, expected_utility, regret


class Controller(Protocol):
    name: str

    def fit(self, train: Checkpoints) -> None: ...

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray: ...


# -- action-conditioned ------------------------------------------------------------------
PENALTY_GRID = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0)


@dataclass(frozen=True)
class ForestSettings:
    n_estimators: int = 200
    max_depth: int = 6
    min_samples_leaf: int = 2
    # lambda, subtracted as lambda * (1 + w) * std over trees. None: chosen per fold and cost
    # setting among ``penalty_grid`` by grouped cross-validation inside the training games.
    dispersion_penalty: float | None = None
    penalty_grid: tuple[float, ...] = PENALTY_GRID
    inner_folds: int = 3
    seed: int = 0


Predictions = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
Length = RandomForestRegressor | float


class ActionConditioned:
    """Per-action success and length forests over prefix features; dispersion-penalised choice."""

    name = "action-conditioned"

    def __init__(self, settings: ForestSettings = ForestSettings()) -> None:
        self.settings = settings

    def fit(self, train: Checkpoints) -> None:
        self.train = train
        self.actions = list(train.actions)
        self.success, self.length = self._fit_forests(train)
        self.inner: Predictions | None = None
        self._penalties: dict[Costs, float] = {}  # selected once per cost setting
        if self.settings.dispersion_penalty is None:
            self.inner = self._inner_predictions(train)

    def _fit_forests(self, train: Checkpoints) -> tuple[dict[str, RandomForestClassifier | float],
                                                         dict[str, tuple[Length, Length]]]:
        st = self.settings
        success: dict[str, RandomForestClassifier | float] = {}
        length: dict[str, tuple[Length, Length]] = {}
        for a in self.actions:
            idx, succ, steps, _ = train.rollout_rows(a)
            X = train.X[idx]
            if len(set(succ)) < 2:  # one class only: the forest would have nothing to split on
                success[a] = float(succ.mean()) if succ.size else 0.0
            else:
                success[a] = RandomForestClassifier(
                    n_estimators=st.n_estimators, max_depth=st.max_depth, min_samples_leaf=st.min_samples_leaf,
                    random_state=st.seed, n_jobs=1).fit(X, succ.astype(int))
            # Length given success and given failure, mixed by P(success) at prediction time: a
            # failed branch runs to the step cap, a successful one stops early, so one forest
            # over both would blur two very different lengths.
            ok = succ == 1
            length[a] = (self._length_model(X[ok], steps[ok], X, steps),
                         self._length_model(X[~ok], steps[~ok], X, steps))
        return success, length

    def _length_model(self, X: np.ndarray, steps: np.ndarray, X_all: np.ndarray, steps_all: np.ndarray) -> Length:
        st = self.settings
        if steps.size < 2 * st.min_samples_leaf:  # too few rows of this outcome: fall back to all rows
            X, steps = X_all, steps_all
        if steps.size < 2:
            return float(steps.mean()) if steps.size else 0.0
        return RandomForestRegressor(n_estimators=max(20, st.n_estimators // 4), max_depth=st.max_depth,
                                     min_samples_leaf=st.min_samples_leaf, random_state=st.seed,
                                     n_jobs=1).fit(X, steps)

    def _inner_predictions(self, train: Checkpoints) -> Predictions | None:
        """Out-of-fold predictions on the training checkpoints, folds holding out whole
        training games: what the penalty is selected on (the test games are never seen)."""
        n_games = len(set(train.games.tolist()))
        if n_games < 2:
            return None
        splitter = GroupKFold(n_splits=min(self.settings.inner_folds, n_games))
        n = len(train)
        out = {a: (np.zeros(n), np.zeros(n), np.zeros(n)) for a in self.actions}
        for inner_train, inner_test in splitter.split(train.X, groups=train.games):
            success, length = self._fit_forests(train.subset(inner_train))
            for a, (p, sd, m) in self._predict(success, length, train.X[inner_test]).items():
                out[a][0][inner_test], out[a][1][inner_test], out[a][2][inner_test] = p, sd, m
        return out

    def _predict(self, success: dict, length: dict, X: np.ndarray) -> Predictions:
        out = {}
        for a in self.actions:
            model = success[a]
            if isinstance(model, float):
                p, sd = np.full(len(X), model), np.zeros(len(X))
            else:
                positive = list(model.classes_).index(1)
                per_tree = np.stack([t.predict_proba(X)[:, positive] for t in model.estimators_])
                p, sd = per_tree.mean(axis=0), per_tree.std(axis=0)
            m_ok, m_fail = (np.full(len(X), m) if isinstance(m, float) else m.predict(X) for m in length[a])
            out[a] = (p, sd, p * m_ok + (1 - p) * m_fail)
        return out

    def predict(self, X: np.ndarray) -> Predictions:
        """Per action: (P(success), std of P(success) across trees, expected steps)."""
        return self._predict(self.success, self.length, X)

    def penalty(self, costs: Costs) -> float:
        """lambda: the fixed setting, or the grid value of least inner out-of-fold regret."""
        if self.settings.dispersion_penalty is not None:
            return self.settings.dispersion_penalty
        if self.inner is None:
            return 0.5
        if costs not in self._penalties:
            u = self.train.utilities(costs)
            regrets = [regret(u, self.train.choices, self._decide(self.inner, costs, lam)).mean()
                       for lam in self.settings.penalty_grid]
            self._penalties[costs] = float(self.settings.penalty_grid[int(np.argmin(regrets))])  # ties: the smallest
        return self._penalties[costs]

    def _decide(self, pred: Predictions, costs: Costs, lam: float) -> np.ndarray:
        scale = lam * (1 + costs.fail_penalty)
        scores = [expected_utility(a, p, m, costs) - scale * sd for a, (p, sd, m) in pred.items()]
        scores.append(np.zeros(len(next(iter(pred.values()))[0])))
        names = [*pred, QUIT]
        return np.asarray([names[j] for j in np.argmax(np.stack(scores, axis=1), axis=1)], dtype=object)

    def choose(self, test: Checkpoints, costs: Costs, predictions: Predictions | None = None) -> np.ndarray:
        pred = predictions if predictions is not None else self.predict(test.X)
        return self._decide(pred, costs, self.penalty(costs))


# -- references --------------------------------------------------------------------------
class Oracle:
    name = "oracle"

    def fit(self, train: Checkpoints) -> None:
        pass

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        u = test.utilities(costs)
        return np.asarray([test.choices[j] for j in np.argmax(u, axis=1)], dtype=object)


class Always:
    def __init__(self, action: str) -> None:
        self.action = action
        self.name = f"always-{action}"

    def fit(self, train: Checkpoints) -> None:
        pass

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        action = test.primary if self.action == "intervene" else self.action
        return np.asarray([action] * len(test), dtype=object)


def default_controllers(settings: ForestSettings = ForestSettings()) -> list[Controller]:
    """The scalar-only baselines, the action-conditioned controller and the references."""
    return [*scalar_controllers(), ActionConditioned(settings), Oracle(), Always(CONTINUE), Always("intervene")]
