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
