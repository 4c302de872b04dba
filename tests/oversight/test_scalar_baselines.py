"""The scalar-only baselines on constructed checkpoints (unit tests of our own decision logic)."""

import itertools

import numpy as np

from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.features import FEATURE_NAMES
from controllers.oversight.scalar import (
    BandRouter,
    BestFixed,
    CostRule,
    ScalarOracle,
    ScalarRouting,
    fit_bands,
)
from controllers.oversight.utility import CONTINUE, DEFAULT_COSTS, regret


def _checkpoints(n: int, seed: int) -> Checkpoints:
    """Three regimes along the risk axis: low risk, continue wins; middle, reflect wins; high,
    only the expert helps. Two-action routing cannot pick reflect; bands can."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, len(FEATURE_NAMES)))
    risk = X[:, FEATURE_NAMES.index("risk")]
    outcomes = {CONTINUE: [], "expert": [], "reflect": []}
    for i in range(n):
        r = risk[i]
        outcomes[CONTINUE].append([(bool(r < 0.3), 10)] * 2)
        outcomes["reflect"].append([(bool(r < 0.7), 6)] * 2)
        outcomes["expert"].append([(True, 30)] * 2)
    games = np.asarray([f"g{i % 10}" for i in range(n)], dtype=object)
    return Checkpoints([(f"t{i}", 3) for i in range(n)], games, X, risk, [CONTINUE, "expert", "reflect"], outcomes,
                       "expert")


def test_band_fit_is_the_exhaustive_optimum():
    rng = np.random.default_rng(0)
    score, u = rng.integers(0, 6, 30).astype(float), rng.normal(size=(30, 3))
    for bands in (1, 2, 3):
        cuts, actions = fit_bands(score, u, bands)
        picked = actions[np.searchsorted(cuts, score, side="right")]
        total = u[np.arange(30), picked].sum()
        values = np.unique(score)
        best = -np.inf
        for k in range(bands):  # every way to cut between distinct scores into k+1 bands
            for cut_set in itertools.combinations((values[:-1] + values[1:]) / 2, k):
                band = np.searchsorted(np.asarray(cut_set), score, side="right")
                best = max(best, sum(u[band == b].sum(axis=0).max() for b in np.unique(band)))
        assert np.isclose(total, best)


def test_bands_use_the_whole_menu_and_beat_two_action_routing():
    train, test = _checkpoints(400, 1), _checkpoints(200, 2)
    u = test.utilities(DEFAULT_COSTS)
    bands, routing = BandRouter(), ScalarRouting()
    bands.fit(train)
    routing.fit(train)
    chosen = bands.choose(test, DEFAULT_COSTS)
    assert set(chosen) == {CONTINUE, "reflect", "expert"}
    assert regret(u, test.choices, chosen).mean() < 0.5 * regret(u, test.choices, routing.choose(test, DEFAULT_COSTS)).mean()


def test_best_fixed_and_the_scalar_oracle_bound_every_scalar_policy():
    train, test = _checkpoints(300, 3), _checkpoints(150, 4)
    u = test.utilities(DEFAULT_COSTS)
    oracle = regret(u, test.choices, ScalarOracle(bins=10).choose(test, DEFAULT_COSTS)).mean()
    fixed = BestFixed()
    fixed.fit(train)
    assert fixed.action(DEFAULT_COSTS) in train.choices
    for controller in (fixed, BandRouter(), ScalarRouting()):
        controller.fit(train)
        assert oracle <= regret(u, test.choices, controller.choose(test, DEFAULT_COSTS)).mean() + 0.05


def test_the_cost_rule_is_not_retuned_so_recalibration_can_change_its_decisions():
    train, test = _checkpoints(300, 5), _checkpoints(150, 6)
    for cps in (train, test):  # an overconfident score: the stated risk is a third of the truth
        cps.risk = cps.risk / 3
    raw, platt = CostRule("raw"), CostRule("platt")
    raw.fit(train)
    platt.fit(train)
    a, b = raw.choose(test, DEFAULT_COSTS), platt.choose(test, DEFAULT_COSTS)
    assert (a != b).any()
    u = test.utilities(DEFAULT_COSTS)
    assert regret(u, test.choices, b).mean() < regret(u, test.choices, a).mean()
    # the threshold follows from the costs: with a dearer failure the rule intervenes more often
    dear = DEFAULT_COSTS.__class__(fail_penalty=4.0)
    assert (platt.choose(test, dear) != CONTINUE).sum() >= (b != CONTINUE).sum()


def test_target_error_is_the_share_of_same_risk_pairs_whose_best_actions_differ():
    from controllers.oversight.evaluate import target_error

    rng = np.random.default_rng(7)
    risk = rng.integers(0, 10, size=400) / 10  # ten score levels, one decile bin each
    by_risk = np.where(risk >= 0.5, "expert", "continue")  # the score decides: no target error
    assert target_error(risk, by_risk) == 0.0
    coin = rng.choice(["expert", "continue"], size=400)  # best action independent of risk: about half
    assert 0.4 < target_error(risk, coin) < 0.6
    assert target_error(np.full(4, 0.3), np.asarray(["a", "a", "b", "b"])) == 4 / 6  # one bin, 4 of 6 pairs differ
