"""Any overseer on any run: ``--controller module:factory`` and the typed Controller base class.

The controllers here are the example a user would copy (examples/controller/stale_token.py) and
small classes defined in the test; the runs go through the real CLI, executors and logs: the
module's guarded run as the console's process, the other commands through ``agentbed.cli.main`` in
this process (the same argv and working directory, no interpreter start per command)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentbed.control import CONTINUE, Chain, Controller, Verdict, stop
from agentbed.log import read_log
from agentbed.replay import first_divergence, rerun
from agentbed.testing import cli_in_process

ROOT = Path(__file__).resolve().parents[2]
GUARD = "examples/controller/stale_token.py:StaleTokenGuard"
HANDOVER = "examples/controller/stale_token.py:hand_to_oracle"


def agentbed(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return cli_in_process(*args, cwd=cwd)


def agentbed_process(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentbed.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_a_misspelt_hook_is_an_error_when_the_class_is_defined():
    with pytest.raises(TypeError, match="before_acton is not a controller hook.*did you mean 'before_action'"):
        class Typo(Controller):
            def before_acton(self, ctx, proposed):  # never called: refused instead
                return CONTINUE
    with pytest.raises(TypeError, match="helper with a leading underscore"):
        class Helper(Controller):
            def score(self, text):
                return 0.0
    with pytest.raises(TypeError, match="takes 2 parameters"):
        class Short(Controller):
            def before_action(self, ctx):
                return CONTINUE

    class Fine(Controller):
        def before_action(self, ctx, proposed):
            return self._judge(proposed)

        def _judge(self, proposed):
            return stop("no")

    assert Fine.name == "Fine"


def test_a_chain_names_who_decided():
    class Quiet(Controller):
        pass

    class Loud(Controller):
        name = "loud"

        def before_action(self, ctx, proposed):
            return stop("because")

    verdict = Chain([Quiet(), Loud()]).before_action(None, None)
    assert verdict == Verdict("stop", reason="because", by="loud")
    assert verdict.to_dict() == {"kind": "stop", "by": "loud", "reason": "because"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    out = tmp_path_factory.mktemp("guarded") / "run"
    result = agentbed_process("run", "vault", "--agent", "naive,oracle", "--seeds", "2", "--controller", GUARD,
                              "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return out


def test_the_decision_who_and_why_are_in_the_log_and_run_json(guarded):
    meta = json.loads((guarded / "run.json").read_text())
    assert meta["controllers"] == [GUARD]
    log = read_log(guarded / "episodes" / "vault.long-chores.naive.s0.jsonl")
    assert log[0]["controllers"] == [GUARD]
    control = [r for r in log if r["type"] == "control"]
    assert control and control[0]["verdict"]["by"] == "stale-token-guard"
    assert "4 slow chores" in control[0]["verdict"]["reason"]
    assert json.loads(control[0]["proposed"])["tool"] == "open_vault"
    assert log[-1]["status"] == "stopped"
    oracle = read_log(guarded / "episodes" / "vault.long-chores.oracle.s0.jsonl")
    assert oracle[-1]["status"] == "ok" and not [r for r in oracle if r["type"] == "control"]


def test_a_guarded_run_verifies_and_reruns_identically(guarded):
    assert agentbed("verify", str(guarded)).returncode == 0
    for log in sorted((guarded / "episodes").glob("*.jsonl")):
        recorded, replayed = rerun(log)
        assert first_divergence(recorded, replayed) is None, log.name


def test_a_factory_given_the_setup_hands_over_to_another_agent(tmp_path):
    out = tmp_path / "run"
    result = agentbed("run", "vault", "--agent", "naive", "--task", "long-chores", "--controller", HANDOVER,
                      "--out", str(out), "--quiet", "--executor", "serial")
    assert result.returncode == 0, result.stderr
    log = read_log(out / "episodes" / "vault.long-chores.naive.s0.jsonl")
    handed = [r for r in log if r["type"] == "step" and r["control"]]
    assert handed[0]["control"]["kind"] == "handover" and handed[0]["control"]["by"] == "hand-to-oracle"
    assert handed[0]["control"]["agent"] == "oracle" and handed[0]["agent"] == "oracle"
    assert log[-1]["success"] is True  # the oracle fetched a fresh token and opened the vault
    recorded, replayed = rerun(out / "episodes" / "vault.long-chores.naive.s0.jsonl")
    assert first_divergence(recorded, replayed) is None


def test_two_controllers_chain_in_the_order_given(tmp_path):
    (tmp_path / "mine.py").write_text(
        "from agentbed.control import CONTINUE, Controller, stop\n"
        "class First(Controller):\n"
        "    def before_action(self, ctx, proposed):\n"
        "        return stop('first') if ctx.step == 2 else CONTINUE\n")
    out = tmp_path / "run"
    result = agentbed("run", "vault", "--agent", "naive", "--task", "long-chores", "--controller",
                      str(tmp_path / "mine.py") + ":First", "--controller", str(ROOT / GUARD), "--out", str(out),
                      "--quiet")
    assert result.returncode == 0, result.stderr
    log = read_log(out / "episodes" / "vault.long-chores.naive.s0.jsonl")
    assert [r["verdict"]["by"] for r in log if r["type"] == "control"] == ["First"]


BAD = [
    (["--controller", "nosuchmodule_xyz:make"], "--controller 'nosuchmodule_xyz:make': cannot import it"),
    (["--controller", "agentbed.control:nothing"], "agentbed.control has no 'nothing'"),
    (["--controller", "agentbed.control:CONTINUE"], "names a Verdict, not a class or a function"),
    (["--controller", "agentbed.agents.base:Agent"], "Agent is not a subclass of agentbed.control.Controller"),
    (["--controller", "justaname"], "expected module:name"),
    (["--agent", "agentbed.control:Controller"], "Controller is not a subclass of agentbed.agents.base.Agent"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[a[1] for a, _ in BAD])
def test_a_bad_reference_is_one_line_and_exit_2(tmp_path, argv, message):
    result = agentbed("run", "vault", *argv, "--out", str(tmp_path / "r"), "--quiet")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()  # nothing was recorded


def test_a_misspelt_hook_in_a_controller_file_is_refused_at_load(tmp_path):
    (tmp_path / "typo.py").write_text(
        "from agentbed.control import CONTINUE, Controller\n"
        "class Typo(Controller):\n"
        "    def befor_action(self, ctx, proposed):\n"
        "        return CONTINUE\n")
    result = agentbed("run", "vault", "--controller", f"{tmp_path / 'typo.py'}:Typo", "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "befor_action is not a controller hook" in result.stderr and "did you mean 'before_action'" in result.stderr


def test_a_factory_that_builds_no_controller_is_an_error_episode_naming_it(tmp_path):
    (tmp_path / "wrong.py").write_text("def make(setup):\n    return 42\n")
    out = tmp_path / "r"
    result = agentbed("run", "vault", "--task", "open-fast", "--controller", f"{tmp_path / 'wrong.py'}:make",
                      "--out", str(out), "--quiet")
    assert result.returncode == 4
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert index[0]["status"] == "error" and "built a int, not a agentbed.control.Controller" in index[0]["error"]


def test_branches_take_controllers_too(guarded, tmp_path):
    log = guarded / "episodes" / "vault.long-chores.naive.s1.jsonl"
    result = agentbed("branch", str(log), "--at", "2", "--agents", "continue,oracle", "--controller", GUARD,
                      "--out", str(tmp_path / "b"), "--json")
    assert result.returncode == 0, result.stderr
    branches = {b["agent"]: b for b in json.loads(result.stdout)["branches"]}
    assert branches["continue@2"]["status"] == "stopped" and branches["oracle@2"]["status"] == "ok"
    stopped_log = tmp_path / "b" / (branches['continue@2']['episode_id'] + '.jsonl')
    stopped = read_log(stopped_log)
    assert stopped[0]["controllers"] == [GUARD] and stopped[-2]["verdict"]["by"] == "stale-token-guard"
    assert agentbed("verify", str(stopped_log)).returncode == 0


def test_run_wide_controllers_reach_the_episodes_a_demo_plans(tmp_path):
    from agentbed.factories import oversee_every_episode
    from agentbed.runner import EpisodeSpec
    from agentbed.worker import run_spec

    oversee_every_episode((str(ROOT / GUARD),))
    try:
        record = run_spec(EpisodeSpec("vault", "long-chores", "naive", 0), tmp_path)
    finally:
        oversee_every_episode(())
    assert record.status == "stopped"
    assert read_log(tmp_path / record.log)[0]["controllers"] == [str(ROOT / GUARD)]
    assert agentbed("demo", "--controller", "nosuch_mod_q:f", "--out", str(tmp_path / "d")).returncode == 2


def test_demo_controller_is_refused_on_demos_it_cannot_reach(tmp_path):
    refused = agentbed("demo", "--controller", GUARD, "--suites", "alfworld,agentdojo,contracts",
                       "--out", str(tmp_path / "d"))
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "the agentdojo, contracts demos" in refused.stderr and "alfworld" not in refused.stderr
    assert not (tmp_path / "d").exists()  # refused before anything ran
    (tmp_path / "file").write_text("")
    reached = agentbed("demo", "--controller", GUARD, "--suites", "alfworld", "--out", str(tmp_path / "file" / "d"))
    assert reached.returncode == 2 and "--out" in reached.stderr and "--controller" not in reached.stderr
