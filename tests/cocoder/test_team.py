import json
import subprocess
import sys
from dataclasses import replace

import pytest
from gymnasium.utils.env_checker import check_env

from agentbed.testing import require
from agentbed.tools import make_action
from controllers.cocoder.strategies import STRATEGIES
from environments.cocoder.costmodel import FailureModel
from environments.cocoder.env import CoCoderEnv
from suites.cocoder.team import TeamConfig, run_team, verify_manifest

PERFECT = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)
TASK = "synth-12"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_perfect_coder_passes_every_test_and_the_manifest_verifies(sandbox, tmp_path, strategy):
    result = run_team(TASK, TeamConfig(strategy=strategy, failure=PERFECT), 0, tmp_path)
    m = result.record.metrics
    assert result.record.status == "ok"
    assert m["pass_rate"] == 1.0 and m["passed"] == m["reference_tests"]
    assert m["makespan"] >= m["critical_path"] - 1e-6 or strategy.startswith("file-parallel")
    assert verify_manifest(tmp_path / result.record.log.split("/")[-1]) == []
    if strategy == "sequential":
        assert len(result.manifest["agents"]) == 1


def test_failures_lower_the_pass_rate_measured_by_the_real_tests(sandbox, tmp_path):
    always = FailureModel(p0=1.0)
    m = run_team(TASK, TeamConfig(strategy="cocoder", failure=always), 0, tmp_path).record.metrics
    assert m["failed_functions"] > 0 and m["pass_rate"] < 1.0


def test_same_seed_same_bytes(sandbox, tmp_path):
    a = run_team(TASK, TeamConfig(strategy="cocoder"), 4, tmp_path / "a")
    b = run_team(TASK, TeamConfig(strategy="cocoder"), 4, tmp_path / "b")
    for member in a.manifest["agents"]:
        assert (tmp_path / "a" / member["log"]).read_bytes() == (tmp_path / "b" / member["log"]).read_bytes()
    assert a.manifest["timeline"] == b.manifest["timeline"]


def test_env_passes_check_env_and_bad_actions_are_observations(sandbox):
    check_env(CoCoderEnv(), skip_render_check=True)
    env = CoCoderEnv()
    obs, _ = env.reset(seed=0)
    first = json.loads(obs)["module"]
    for bad in ["{not json", make_action("write_file", module="nope", source="x"),
                make_action("write_file", module=first, source=123), b"\xff\xfe", "x" * 2_000_000]:
        obs, reward, terminated, truncated, info = env.step(bad)
        assert "error" in json.loads(obs) and not terminated
    obs, *_ = env.step(make_action("write_file", module=first, source="print('hi')\n"))
    assert json.loads(obs).get("module") != first


def test_cli_runs_a_team_and_rejects_a_bad_strategy(sandbox, tmp_path, capsys):
    from agentbed.cli import main

    assert main(["run", "cocoder", "--strategy", "cocoder", "--team-size", "2", "--task", TASK, "--seeds", "1",
                 "--executor", "serial", "--out", str(tmp_path / "run")]) == 0
    manifests = list((tmp_path / "run" / "episodes").glob("*.team.json"))
    assert len(manifests) == 1 and verify_manifest(manifests[0]) == []
    capsys.readouterr()
    for option, bad in (("--strategy", "magic"), ("--risk", "1.5"), ("--risk", "some")):
        assert main(["run", "cocoder", option, bad, "--task", TASK]) == 2
        err = capsys.readouterr().err
        assert option in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_fetch_script_rejects_an_unknown_repository():
    r = subprocess.run([sys.executable, "scripts/fetch-repos", "left-pad"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown repository" in r.stderr


@pytest.mark.slow
@pytest.mark.timeout(1200)  # on a fresh clone this prepares transitions, pydash and bleach: a profiled reference run each
def test_real_repositories_pass_their_tests_with_a_perfect_coder(sandbox, tmp_path):
    """Each pinned repository, two at a time (as the demo runs teams): their suites mostly wait on
    the sandbox (transitions' sleeps: 43 s of wall for 7 s of the container's CPU), so one runs
    while the other waits; transitions, the longest, goes first."""
    from concurrent.futures import ThreadPoolExecutor

    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")

    def metrics(name: str) -> dict:
        return run_team(name, TeamConfig(strategy="cocoder", failure=PERFECT), 0, tmp_path / name).record.metrics

    names = sorted((repo.name for repo in REPOS), key=lambda name: name != "transitions")
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, m in zip(names, pool.map(metrics, names), strict=True):
            assert m["pass_rate"] == 1.0, (name, m)


def test_leader_repairs_modules_where_failing_tests_crash(sandbox, tmp_path):
    # no risk bound: the plan then does not depend on the repair rounds (a bound on the risk left
    # after R repairs does), so the run without repairs writes exactly what this one wrote first
    config = TeamConfig(strategy="cocoder", failure=FailureModel(p0=0.4), risk="any")
    result = run_team(TASK, config, 0, tmp_path)
    m = result.record.metrics
    assert m["repairs"] > 0 and m["pass_rate"] > m["pass_rate_before_repair"]
    (round_,) = result.manifest["repair_rounds"]
    assert round_["start"] == pytest.approx(m["write_makespan"] + config.cost.test_seconds + config.cost.latency)
    assert m["makespan"] > round_["start"]
    assert any(a["round"] == 1 for a in result.manifest["agents"])
    assert verify_manifest(tmp_path / result.record.log.split("/")[-1]) == []
    no_repair = run_team(TASK, replace(config, repair_rounds=0), 0, tmp_path / "none").record.metrics
    assert no_repair["pass_rate"] == m["pass_rate_before_repair"] and no_repair["repairs"] == 0
