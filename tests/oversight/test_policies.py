"""Controllers on constructed checkpoints (unit tests of our own decision logic)."""

import numpy as np

from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.features import FEATURE_NAMES
from controllers.oversight.policies import ActionConditioned, ForestSettings, Oracle, ScalarRouting, regret
from controllers.oversight.utility import CONTINUE, DEFAULT_COSTS


def _checkpoints(n: int, seed: int) -> Checkpoints:
    """Same risk distribution for two kinds of prefix: recoverable (the expert succeeds) and
    not (nothing helps, so quitting is best); continuing fails when risk is high."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, len(FEATURE_NAMES)))
    risk = X[:, FEATURE_NAMES.index("risk")]
    recoverable = X[:, FEATURE_NAMES.index("repeat_action_frac")] < 0.5
    outcomes = {CONTINUE: [], "expert": []}
    for i in range(n):
        cont = risk[i] < 0.5
        outcomes[CONTINUE].append([(bool(cont), 10), (bool(cont), 12)])
        outcomes["expert"].append([(bool(cont or recoverable[i]), 8)] * 2)
    games = np.asarray([f"g{i % 10}" for i in range(n)], dtype=object)
    return Checkpoints([(f"t{i}", 3) for i in range(n)], games, X, risk, [CONTINUE, "expert"], outcomes, "expert")


def test_oracle_has_zero_regret():
    cps = _checkpoints(60, 0)
    oracle = Oracle()
    chosen = oracle.choose(cps, DEFAULT_COSTS)
    assert np.allclose(regret(cps.utilities(DEFAULT_COSTS), cps.choices, chosen), 0)


def test_recalibration_is_monotone_so_routing_decisions_do_not_change():
    train, test = _checkpoints(200, 1), _checkpoints(100, 2)
    decisions = []
    for method in ("raw", "platt"):
        controller = ScalarRouting(method)
        controller.fit(train)
        decisions.append(controller.choose(test, DEFAULT_COSTS))
    assert (decisions[0] == decisions[1]).all()


def test_action_conditioned_beats_routing_when_recoverability_is_invisible_to_risk():
    train, test = _checkpoints(300, 3), _checkpoints(150, 4)
    u = test.utilities(DEFAULT_COSTS)
    scalar = ScalarRouting("raw")
    scalar.fit(train)
    ac = ActionConditioned(ForestSettings(n_estimators=50))
    ac.fit(train)
    r_scalar = regret(u, test.choices, scalar.choose(test, DEFAULT_COSTS)).mean()
    r_ac = regret(u, test.choices, ac.choose(test, DEFAULT_COSTS)).mean()
    assert r_ac < 0.5 * r_scalar


def test_forest_settings_default_to_the_papers():
    s = ForestSettings()
    assert (s.n_estimators, s.max_depth, s.min_samples_leaf) == (200, 6, 2)


def test_dispersion_penalty_is_selected_inside_the_training_games_only(monkeypatch):
    cps = _checkpoints(240, 5)
    train_idx = np.flatnonzero(np.isin(cps.games, [f"g{i}" for i in range(7)]))
    test_idx = np.flatnonzero(~np.isin(cps.games, [f"g{i}" for i in range(7)]))
    train, test = cps.subset(train_idx), cps.subset(test_idx)
    fitted_on = []
    original = ActionConditioned._fit_forests

    def spy(self, subset):
        fitted_on.append(set(subset.games.tolist()))
        return original(self, subset)

    monkeypatch.setattr(ActionConditioned, "_fit_forests", spy)
    ac = ActionConditioned(ForestSettings(n_estimators=30, inner_folds=3))
    assert ac.settings.dispersion_penalty is None  # selected, not fixed, by default
    ac.fit(train)
    train_games = set(train.games.tolist())
    assert fitted_on[0] == train_games  # the forests used on the test games
    assert len(fitted_on) == 4 and all(g < train_games for g in fitted_on[1:])  # inner folds hold games out
    assert set().union(*(train_games - g for g in fitted_on[1:])) == train_games  # each held out once
    lam = ac.penalty(DEFAULT_COSTS)
    assert lam in ac.settings.penalty_grid
    chosen = ac.choose(test, DEFAULT_COSTS)
    # the test games' outcomes play no part: scrambling them changes neither lambda nor the choices
    scrambled = test.subset(np.arange(len(test)))
    scrambled.outcomes = {a: [[(not s, m + 7) for s, m in outs] for outs in v] for a, v in test.outcomes.items()}
    assert ac.penalty(DEFAULT_COSTS) == lam
    assert (ac.choose(scrambled, DEFAULT_COSTS) == chosen).all()


def test_a_fixed_dispersion_penalty_skips_the_inner_folds():
    ac = ActionConditioned(ForestSettings(n_estimators=20, dispersion_penalty=0.25))
    ac.fit(_checkpoints(80, 6))
    assert ac.inner is None and ac.penalty(DEFAULT_COSTS) == 0.25
