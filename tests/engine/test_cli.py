"""The CLI end to end, as a user types it: bad input is one line and exit status 2.

The module's run and a model run without its key go through the console's process (``python -m
agentbed.cli``); every other command calls ``agentbed.cli.main`` in this process, from the
repository root, with its own stdout and stderr: the same parsing, verbs and exit statuses
without an interpreter start per command (each costs about 0.4 s of CPU). Bad input through real
processes, every verb, is test_bad_input's subprocess slice."""

import json
import subprocess
from pathlib import Path

import pytest

from agentbed.testing import cli_in_process

ROOT = Path(__file__).resolve().parents[2]


def run(cmd, *args, check=None):
    result = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=300, cwd=ROOT)
    if check is not None:
        assert result.returncode == check, result.stdout + result.stderr
    return result


def cli(*args, check=None) -> subprocess.CompletedProcess[str]:
    """``agentbed ARGS`` in this process, from the repository root as :func:`run` starts it."""
    result = cli_in_process(*args, cwd=ROOT)
    if check is not None:
        assert result.returncode == check, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def vault_run(tmp_path_factory):
    import sys

    out = tmp_path_factory.mktemp("cli") / "run"
    run([sys.executable, "-m", "agentbed.cli"], "run", "vault", "--agent", "oracle,naive", "--seeds", "3",
        "--out", str(out), "--quiet", check=0)
    return out


BAD = [
    (["run", "nosuch"], "unknown suite 'nosuch'"),
    (["run", "vault", "--task", "nope"], "no task 'nope'"),
    (["run", "vault", "--agent", "ghost"], "no agent 'ghost'"),
    (["run", "vault", "--seeds", "0"], "--seeds must be between 1 and"),
    (["run", "vault", "--seeds", "many"], "invalid int value: 'many'"),
    (["run", "vault", "--colour", "red"], "no option 'colour'"),
    (["run", "vault", "--model", "gpt"], "expected provider:model"),
    (["run", "vault", "--degrade", "2"], "--degrade must be between 0 and 1"),
    (["run", "vault", "--out", "/nonexistent-dir-for-sure/x", "--resume"], "no run recorded here"),
    (["verify", "/no/such/log.jsonl"], "no such file or directory"),
    (["replay", "/no/such/log.jsonl"], "cannot read"),
    (["gate", "/no/such/results.json", "--baseline", "baselines/vault.json"], "no such file"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(argv, message):
    result = cli(*argv)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentbed: error:") and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_files_name_the_file(tmp_path):
    bad_log = tmp_path / "bad.jsonl"
    bad_log.write_text("this is not json\n")
    result = cli("replay", str(bad_log))
    assert result.returncode == 2 and str(bad_log) in result.stderr and "line 1" in result.stderr
    bad_results = tmp_path / "r.json"
    bad_results.write_text('{"format": "something-else"}')
    result = cli("gate", str(bad_results), "--baseline", "baselines/vault.json")
    assert result.returncode == 2 and "field 'format'" in result.stderr


def test_list_shows_suites_tasks_and_agents():
    out = cli("list", "vault", check=0).stdout
    assert "open-after-chores" in out and "oracle" in out and "--model" in out


def test_run_writes_index_logs_summary_and_results(vault_run):
    index = [json.loads(x) for x in (vault_run / "index.jsonl").read_text().splitlines()]
    assert len(index) == 2 * 3 * 3
    assert json.loads((vault_run / "vault" / "summary.json").read_text())["episodes"] == 18
    assert json.loads((vault_run / "results.json").read_text())["format"] == "agentbed.results/1"


def test_an_existing_run_directory_is_not_overwritten(vault_run):
    before = (vault_run / "index.jsonl").read_bytes()
    result = cli("run", "vault", "--out", str(vault_run))
    assert result.returncode == 2 and "--resume" in result.stderr
    assert (vault_run / "index.jsonl").read_bytes() == before


def test_json_summary(tmp_path):
    result = cli("run", "vault", "--seeds", "2", "--out", str(tmp_path / "j"), "--json", check=0)
    summary = json.loads(result.stdout)
    assert summary["episodes"] == 6 and summary["headline"][0]["metric"] == "pass_rate"


def test_verify_names_the_changed_record(vault_run, tmp_path):
    assert "18 of 18 logs verified" in cli("verify", str(vault_run), check=0).stdout
    log = vault_run / "episodes" / "vault.long-chores.oracle.s1.jsonl"
    copy = tmp_path / "copy.jsonl"
    data = bytearray(log.read_bytes())
    third_line = data.index(b"\n", data.index(b"\n") + 1) + 1
    data[third_line + 40] ^= 0x20
    copy.write_bytes(bytes(data))
    result = cli("verify", str(copy), check=1)
    assert "record 3 changed" in result.stdout


def test_replay_views_and_reruns(vault_run):
    log = vault_run / "episodes" / "vault.long-chores.naive.s2.jsonl"
    shown = cli("replay", str(log), check=0).stdout
    assert "step 1" in shown and "EXPIRED_BEFORE_USE" in shown
    one = cli("replay", str(log), "--step", "3", check=0).stdout
    assert "step 3" in one and "step 2" not in one
    assert cli("replay", str(log), "--step", "99").returncode == 2
    assert cli("replay", str(log), "--rerun", check=0).stdout.strip() == "identical"


def test_branch_from_the_cli(vault_run, tmp_path):
    log = vault_run / "episodes" / "vault.long-chores.naive.s0.jsonl"
    out = cli("branch", str(log), "--at", "1", "--agents", "continue,oracle", "--rollouts", "2",
              "--out", str(tmp_path / "b"), check=0).stdout
    assert "4 branches" in out
    assert "oracle@1" in out and "success=True" in out
    assert cli("branch", str(log), "--at", "999", "--agents", "oracle").returncode == 2


def test_gate_passes_on_a_fresh_run_and_fails_on_a_degraded_agent(tmp_path):
    fresh, degraded = tmp_path / "fresh", tmp_path / "degraded"
    cli("run", "vault", "--seeds", "10", "--out", str(fresh), "--quiet", check=0)
    cli("run", "vault", "--seeds", "10", "--out", str(degraded), "--degrade", "0.3", "--quiet", check=0)
    ok = cli("gate", str(fresh), "--baseline", "baselines/vault.json", "--allow-underpowered", check=0)
    assert "gate: pass" in ok.stdout
    bad = cli("gate", str(degraded), "--baseline", "baselines/vault.json", check=1)
    assert "regressed" in bad.stdout and "gate: FAIL" in bad.stdout


def test_a_model_without_its_key_is_a_usage_error_before_anything_runs(agentbed_cmd, tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    result = subprocess.run(agentbed_cmd + ["run", "vault", "--model", "openai:gpt-4o-mini", "--out",
                                            str(tmp_path / "m")], capture_output=True, text=True, env=env,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 2 and "OPENAI_API_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_verify_checks_team_manifests_and_ignores_other_jsonl(tmp_path):
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import EpisodeSpec
    from agentbed.runner import run_episode as run_one
    from environments.vault.agents import VaultOracle
    from environments.vault.env import VaultEnv

    members = []
    for worker in range(2):
        writer = TrajectoryWriter(tmp_path / f"team.w{worker}.jsonl")
        run_one(VaultEnv("open-fast"), VaultOracle(), EpisodeSpec("vault", "open-fast", "oracle", worker), writer=writer)
        members.append({"log": writer.path.name, "digest": writer.last_hash})
    manifest = tmp_path / "team.team.json"
    manifest.write_text(json.dumps({"agents": members}))
    (tmp_path / "dataset.jsonl").write_text('{"provenance": {}}\n{"row": 1}\n')  # not a log
    assert "2 of 2 logs verified" in cli("verify", str(tmp_path), check=0).stdout

    members[0]["digest"], members[1]["digest"] = members[1]["digest"], members[0]["digest"]
    manifest.write_text(json.dumps({"agents": members}))
    out = cli("verify", str(tmp_path), check=1).stdout
    assert "digest in the run index" in out or "differs" in out

    members.append({"log": "team.w9.jsonl", "digest": "0" * 64})
    manifest.write_text(json.dumps({"agents": members}))
    assert "team.w9.jsonl is missing" in cli("verify", str(tmp_path), check=1).stdout


@pytest.mark.parametrize(("exit_code", "status", "stderr"), [(None, 0, ""), (3, 3, ""), ("bad: x", 1, "bad: x\n")])
def test_an_in_process_command_exits_as_the_interpreter_would(monkeypatch, exit_code, status, stderr):
    """agentbed.testing.cli_in_process gives a SystemExit the status and stderr the console script's
    process would have: None is 0, an int is itself, a message is printed and exits 1."""
    import agentbed.cli

    def main(argv):
        raise SystemExit(exit_code)

    monkeypatch.setattr(agentbed.cli, "main", main)
    done = cli_in_process("anything")
    assert (done.returncode, done.stderr) == (status, stderr)
