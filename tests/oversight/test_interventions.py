"""Issue 34's interventions and baselines: per-action step costs, budgets, the scalar-only policy
chosen on training folds, unbounded ratios, the spread of the advantage and the regime rule."""

import numpy as np
import pytest

from agentbed.cli import main
from agentbed.errors import UsageError
from controllers.oversight.budget import parse_assignments, with_budgets
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import _ratio
from controllers.oversight.features import FEATURE_NAMES
from controllers.oversight.regime import choose
from controllers.oversight.report import _f
from controllers.oversight.scalar import SCALAR_ONLY, SelectedScalar, fitted_scalar_candidates
from controllers.oversight.utility import CONTINUE, Costs, branch_utility


def test_a_step_of_an_action_with_its_own_cost_is_charged_both():
    costs = Costs().with_action_steps({"expert": 0.04})
    assert branch_utility("expert", True, 10, costs) == pytest.approx(1 - 0.05 - 0.05 * 10)
    assert branch_utility("reflect", True, 10, costs) == pytest.approx(1 - 0.05 - 0.01 * 10)
    assert branch_utility(CONTINUE, False, 10, costs) == pytest.approx(-1 - 0.1)
    assert costs.to_dict()["action_steps"] == {"expert": 0.04}


def _dataset(steps_success: list[tuple[int, bool]], budgets: dict | None = None) -> Dataset:
    rows = [{"benchmark": "t", "game": f"g{i}", "flaw": "f", "seed": 0, "trajectory": f"t{i}", "checkpoint": 2,
             "action": "expert", "rollout": 0, "success": ok, "steps": m, "status": "ok", "method": "replay",
             "risk": 0.5, "features": {}} for i, (m, ok) in enumerate(steps_success)]
    return Dataset({"actions": ["continue", "expert", "quit"], "budgets": budgets or {}}, rows)


def test_a_budget_fails_exactly_the_branches_that_needed_more_steps():
    data = with_budgets(_dataset([(4, True), (5, True), (6, True), (48, False)]), {"expert": 5})
    assert [(r["success"], r["steps"]) for r in data.rows] == [(True, 4), (True, 5), (False, 5), (False, 5)]
    assert data.provenance["budgets"] == {"expert": 5}
    with pytest.raises(UsageError, match="larger one cannot be recovered"):
        with_budgets(_dataset([(4, True)], {"expert": 5}), {"expert": 8})
    with pytest.raises(UsageError, match="no intervention 'planner'"):
        with_budgets(_dataset([(4, True)]), {"planner": 8})
    with pytest.raises(UsageError, match="ACTION=NUMBER"):
        parse_assignments("expert", "--budget", int)
    assert parse_assignments("expert=0.02, planner=0", "--action-step-cost") == {"expert": 0.02, "planner": 0.0}


def test_a_ratio_whose_denominator_can_vanish_is_unbounded_not_huge():
    games = np.asarray([f"g{i}" for i in range(6)], dtype=object)
    num = np.asarray([0.2, 0.1, 0.3, 0.2, 0.1, 0.2])
    den = np.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 3e-17])  # a float residue of zero regret
    r = _ratio(num, den, games, {"resamples": 200, "seed": 0})
    assert np.isnan(r["estimate"]) and r["high"] == float("inf")
    assert _f(r) == "undefined [undefined, unbounded]"
    den2 = np.asarray([0.0, 0.0, 0.0, 0.0, 0.2, 0.3])  # 9% of resamples hold only zero-regret games
    r2 = _ratio(num, den2, games, {"resamples": 200, "seed": 0})
    assert np.isfinite(r2["estimate"]) and r2["high"] == float("inf") and _f(r2).endswith("unbounded]")


def _bands_checkpoints(n: int, seed: int, flip: bool = False) -> Checkpoints:
    rng = np.random.default_rng(seed)
    X = rng.random((n, len(FEATURE_NAMES)))
    risk = X[:, FEATURE_NAMES.index("risk")]
    outcomes = {CONTINUE: [], "expert": [], "reflect": []}
    for r in risk:
        low = r < 0.3
        outcomes[CONTINUE].append([(bool(low) != flip, 10)] * 2)
        outcomes["reflect"].append([(bool(r < 0.7) != flip, 6)] * 2)
        outcomes["expert"].append([(not flip, 30)] * 2)
    games = np.asarray([f"g{seed}-{i % 10}" for i in range(n)], dtype=object)
    return Checkpoints([(f"t{seed}-{i}", 3) for i in range(n)], games, X, risk, [CONTINUE, "expert", "reflect"],
                       outcomes, "expert")


def test_the_selected_scalar_policy_is_chosen_on_the_training_folds_only():
    train = _bands_checkpoints(120, 0)
    selector = SelectedScalar()
    selector.fit(train)
    picked = selector.picked(Costs())
    assert picked.startswith("scalar-bands")  # three regimes along the score: only bands capture them
    # the evaluated checkpoints' outcomes cannot move the choice: flip every outcome there
    a, b = _bands_checkpoints(40, 1), _bands_checkpoints(40, 1, flip=True)
    assert selector.choose(a, Costs()).tolist() == selector.choose(b, Costs()).tolist()
    assert selector.picked(Costs()) == picked
    names = [c.name for c in fitted_scalar_candidates()]
    assert {"scalar-bands-k3", "scalar-bands-any"} <= set(names) and set(names) | {"scalar-selected",
                                                                                    "scalar-oracle"} == set(SCALAR_ONLY)


def test_a_band_router_without_a_minimum_band_may_isolate_one_checkpoint():
    free = next(c for c in fitted_scalar_candidates() if c.name == "scalar-bands-any")
    assert free.min_share == 0.0 and free._min_size(1000) == 1 and max(free.band_choices) >= 6


def _measured(defer: float, primary_best: float, room: float) -> dict:
    return {"defer_share_of_oracle": defer, "oracle_actions": {"expert": primary_best}, "primary": "expert",
            "room": room, "label": f"{defer}-{primary_best}-{room}"}


def test_the_regime_rule_wants_room_for_control_and_a_sometimes_useful_expert():
    ok, better = _measured(0.8, 0.5, 0.2), _measured(0.7, 0.3, 0.3)
    saturated, useless, dominant = _measured(0.95, 0.5, 0.9), _measured(0.5, 0.1, 0.9), _measured(0.5, 0.9, 0.9)
    assert choose([ok, saturated, useless, dominant]) is ok
    assert choose([ok, better]) is better
    assert choose([saturated]) is None


def test_evaluate_rejects_a_bad_budget_or_step_cost(tmp_path, capsys):
    path = tmp_path / "d.jsonl"
    assert main(["oversight", "evaluate", str(path), "--budget", "expert"]) == 2
    assert main(["oversight", "evaluate", str(path), "--action-step-cost", "expert=-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--budget" in err[0] and "--action-step-cost" in err[1]
