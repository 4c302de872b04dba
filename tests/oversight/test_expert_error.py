"""The noisy expert's slip rate is measured on development games, never held-out ones (issue 34)."""

import importlib.util
import json
from pathlib import Path

import pytest

from agentbed.testing import require

pytestmark = [pytest.mark.alfworld, pytest.mark.slow]
RECORDED = Path(__file__).resolve().parents[2] / "suites/oversight/data/expert-error-s0-20games.json"
# measured before issue 54's fix, the planner's exploration order drawn from one stream shared by every
# game (its command reruns with --base-seeding legacy); the costly-noisy regime's rate comes from it
LEGACY = RECORDED.with_name("expert-error-s0-20games-legacy-seeding.json")


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
    """The regime's rate is the legacy measurement's (every costly-noisy dataset is built with it);
    the re-measurement with per-game streams differs (0.147 against 0.057) but its interval holds it."""
    from suites.oversight.benchmarks.alfworld import REGIMES

    legacy, recorded = (json.loads(p.read_text()) for p in (LEGACY, RECORDED))
    for r in (legacy, recorded):
        assert r["games_seed"] == 0 and len(r["games"]) == 20  # development games only
    assert "base_seeding" not in legacy and recorded["base_seeding"] == "game"
    rate = REGIMES["costly-noisy"]["expert_noise"]
    assert rate == round(legacy["wasted_step_share"][0], 2)
    assert recorded["wasted_step_share"][1] <= rate <= recorded["wasted_step_share"][2]
    assert {k: v for k, v in REGIMES["costly-noisy"].items() if k != "expert_noise"} == REGIMES["costly"]


def test_the_record_holds_the_command_that_measured_it():
    """Issue 54 item 2: the figure behind every costly-noisy dataset rebuilds from its record: the
    command, every setting spelled out, matches what the record holds."""
    import shlex

    recorded = json.loads(RECORDED.read_text())
    argv = shlex.split(recorded["command"])
    assert argv[:3] == ["python", "-m", "suites.oversight.expert_error"] and len(recorded["git_commit"]) == 40
    flags = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert int(flags["--games-seed"]) == recorded["games_seed"] and int(flags["--games"]) == len(recorded["games"])
    assert int(flags["--seeds"]) * len(recorded["games"]) == recorded["episodes"]
    assert recorded["games"][0] == f"{int(flags['--offset']):03d}-simple"
    assert Path(flags["--out"]).name == RECORDED.name and flags["--base-seeding"] == recorded["base_seeding"]


def test_a_new_record_says_how_it_was_measured(tmp_path, monkeypatch):
    from suites.oversight import expert_error

    monkeypatch.setattr(expert_error, "measure",
                        lambda *a, **k: {"games_seed": a[0], "base_seeding": k["seeding"], "games": [], "per_episode": []})
    out = tmp_path / "rate.json"
    assert expert_error.main(["--games", "4", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["command"] == ("python -m suites.oversight.expert_error --games-seed 0 --games 4 --offset 0 "
                                  f"--seeds 3 --base-seeding game --out {out}")
    assert "git_commit" in written and written["games_seed"] == 0 and written["base_seeding"] == "game"
