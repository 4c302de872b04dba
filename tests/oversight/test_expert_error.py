"""The noisy expert's slip rate is measured on development games, never held-out ones (issue 34)."""

import importlib.util
import json
from pathlib import Path

import pytest

from agentbed.testing import require

pytestmark = [pytest.mark.alfworld, pytest.mark.slow]
RECORDED = Path(__file__).resolve().parents[2] / "suites/oversight/data/expert-error-s0-20games.json"


@pytest.fixture(scope="module")
def expert_error():
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")
    from suites.oversight import expert_error

    return expert_error


def test_held_out_games_are_refused(expert_error):
    with pytest.raises(ValueError, match="held out"):
        expert_error.measure(games_seed=3, games=1, seeds=1)


def test_the_measurement_compares_the_planner_with_the_expert_step_by_step(expert_error):
    result = expert_error.measure(games_seed=0, games=2, seeds=1, resamples=50)
    assert result["episodes"] == 2 and result["planner_success"] == 2
    assert 0 < result["deviations"] <= result["steps"] <= result["planner_steps"]
    per = result["per_episode"]
    assert sum(p["expert_length"] for p in per) == result["expert_steps"]
    rate = result["deviations"] / result["steps"]
    assert result["deviation_rate"][0] == pytest.approx(rate, abs=1e-4)
    share = 1 - result["expert_steps"] / result["planner_steps"]
    assert result["wasted_step_share"][0] == pytest.approx(share, abs=1e-4)


def test_the_noisy_configuration_uses_the_recorded_development_figure():
    from suites.oversight.benchmarks.alfworld import REGIMES

    recorded = json.loads(RECORDED.read_text())
    assert recorded["games_seed"] == 0 and len(recorded["games"]) == 20  # development games only
    assert REGIMES["costly-noisy"]["expert_noise"] == round(recorded["wasted_step_share"][0], 2)
    assert {k: v for k, v in REGIMES["costly-noisy"].items() if k != "expert_noise"} == REGIMES["costly"]
