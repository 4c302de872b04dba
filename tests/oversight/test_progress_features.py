"""ALFWorld task-progress features on a recorded prefix, and their prefix-only contract."""

import importlib.util
import json
from pathlib import Path

import pytest

from agentbed.control import StepView
from agentbed.testing import require
from suites.oversight.benchmarks.alfworld_progress import PROGRESS_FEATURE_NAMES, progress_features


@pytest.fixture(autouse=True)
def _alfworld():
    # the features parse goals with ALFWorld's goal templates: in CI a missing package fails
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")

RECORDED = json.loads((Path(__file__).parent / "data" / "alfworld_prefix_003-heat.json").read_text())
FIRST = RECORDED["first_observation"]
HISTORY = [StepView(s["observation"], s["action"], 0.0, {}) for s in RECORDED["steps"]]


def _at(t: int) -> dict[str, float]:
    return progress_features(FIRST, HISTORY[:t])


def test_goal_is_parsed_from_the_first_observation():
    f = _at(0)
    assert set(f) == set(PROGRESS_FEATURE_NAMES)
    assert f["goal_heat"] == 1.0 and f["goal_parsed"] == 1.0
    assert sum(f[f"goal_{k}"] for k in ("put", "light", "clean", "heat", "cool", "two")) == 1.0
    assert f["subgoals_done"] == 0 and f["target_seen"] == 0 and f["visited_frac"] == 0


def test_progress_along_the_recorded_prefix():
    # steps 1-8: searching; the tomato is seen on the garbage can at step 6 (and again at 8)
    f = _at(8)
    assert f["target_seen"] == 1 and f["holding_target"] == 0 and f["steps_since_progress"] == 8
    assert f["visited_frac"] == pytest.approx(5 / 22) and f["revisit_frac"] == pytest.approx(1 / 6)
    # 9: takes the tomato, 12: heats it in the microwave
    f = _at(12)
    assert (f["holding_target"], f["target_transformed"], f["subgoals_done"]) == (1, 1, 2)
    assert f["subgoals_frac"] == pytest.approx(2 / 3) and f["steps_since_progress"] == 0
    # 13: a noisy slip puts the hot tomato back into the microwave (not the goal's sink basin)
    f = _at(13)
    assert (f["holding_target"], f["subgoals_done"], f["subgoals_lost"], f["wrong_placed"]) == (0, 0, 2, 1)
    # 14: takes it again; it is still hot in the game, so nothing is left to redo but placing it
    f = _at(14)
    assert (f["holding_target"], f["target_transformed"], f["subgoals_done"], f["subgoals_lost"]) == (1, 1, 2, 0)
    assert f["steps_since_progress"] == 2 and f["at_goal_receptacle"] == 0 and f["wrong_taken"] == 0


def test_a_step_changes_only_the_features_of_later_prefixes():
    """Features at t are a function of the first t steps: recomputing every prefix after the
    whole record was read gives the same values as before (no state leaks between calls)."""
    before = [_at(t) for t in range(len(HISTORY) + 1)]
    progress_features(FIRST, HISTORY)
    assert [_at(t) for t in range(len(HISTORY) + 1)] == before
    assert before[5] != before[9]  # and the record does move them


def test_loops_and_wrong_objects_are_visible():
    from environments.alfworld.env import render_observation

    def step(text: str) -> StepView:
        return StepView(render_observation(text, ["look"]), "{}", 0.0, {})

    loop = [step(f"You arrive at {p}. On the {p}, you see nothing.") for p in ["shelf 1", "drawer 1"] * 3]
    f = progress_features(FIRST, loop)
    assert f["two_cycle"] == 1 and f["revisit_frac"] == pytest.approx(4 / 6)
    wrong = [step("You arrive at countertop 1. On the countertop 1, you see a apple 1, and a tomato 2."),
             step("You pick up the apple 1 from the countertop 1."), step("Nothing happens."), step("Nothing happens.")]
    f = progress_features(FIRST, wrong)
    assert (f["wrong_taken"], f["holding_other"], f["target_seen"], f["nothing_streak"]) == (1, 1, 1, 2)
