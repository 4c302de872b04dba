"""Sealed runs: every forgery of issue 22 is caught by `verify RUN_DIR` (and the gate, the
report, --resume), and what a chain without a key cannot catch is shown, not hidden."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
from bad_input_corpus import rechain

from agentbed import manifest
from agentbed.cli import main
from agentbed.testing import cli_in_process

ROOT = Path(__file__).resolve().parents[2]
KEY = "a-test-key-that-is-long-enough"
LOG = "episodes/vault.open-fast.oracle.s1.jsonl"


def cli_env(key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTBED_LOG_KEY", "AGENTBED_LOG_KEY_FILE")}
    return {**env, "AGENTBED_LOG_KEY": key} if key else env


def make_run(out: Path, key: str | None, *extra: str) -> Path:
    """A serial run of the vault world, in this process, under ``key`` (or none)."""
    with mock.patch.dict(os.environ, cli_env(key), clear=True):
        result = cli_in_process("run", "vault", "--agent", "oracle,naive", "--seeds", "3", "--executor", "serial",
                                "--out", str(out), "--quiet", *extra, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("seal")
    return {"keyed": make_run(base / "keyed", KEY), "plain": make_run(base / "plain", None),
            "other": make_run(base / "other", KEY, "--seed-start", "10")}


@pytest.fixture
def copy(runs, tmp_path):
    count = iter(range(1000))

    def make(name: str) -> Path:
        target = tmp_path / f"{name}-{next(count)}"
        shutil.copytree(runs[name], target, ignore=shutil.ignore_patterns(".lock"))
        return target
    return make


def verify(path: Path, key: str | None, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.delenv("AGENTBED_LOG_KEY", raising=False)
    monkeypatch.delenv("AGENTBED_LOG_KEY_FILE", raising=False)
    if key:
        monkeypatch.setenv("AGENTBED_LOG_KEY", key)
    status = main(["verify", str(path)])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def index(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]


def write_index(run: Path, records: list[dict]) -> None:
    (run / "index.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def forge_log(run: Path, rel: str = LOG, **footer) -> str:
    """Edit a log's footer and re-chain it, as someone without the key can; return its digest."""
    records = [json.loads(line) for line in (run / rel).read_text().splitlines()]
    records[-1].update(footer)
    records[-1].pop("mac", None)
    (run / rel).write_bytes(rechain(records))
    return (run / rel).read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1][-66:-2].decode()


def test_an_intact_run_verifies_with_and_without_the_key(runs, monkeypatch, capsys):
    status, out = verify(runs["keyed"], KEY, monkeypatch, capsys)
    assert status == 0 and "18 of 18 logs verified" in out and "HMAC checked" in out
    status, out = verify(runs["plain"], None, monkeypatch, capsys)
    assert status == 0 and "no key" in out and "re-hashed" in out


def test_a_forged_log_with_its_index_digest_patched_fails(copy, monkeypatch, capsys):
    for name, key in (("keyed", KEY), ("plain", None)):
        run = copy(name)
        digest = forge_log(run, success=False)
        write_index(run, [{**r, "digest": digest, "success": False} if r["log"] == LOG else r for r in index(run)])
        status, out = verify(run, key, monkeypatch, capsys)
        assert status == 1 and "differs from the one the manifest sealed" in out, out


def test_without_a_key_a_forger_who_also_reseals_the_manifest_wins_and_with_one_loses(copy, monkeypatch, capsys):
    """The documented limit of a chain without a key, and the HMAC that closes it."""
    for name, key in (("plain", None), ("keyed", KEY)):
        run = copy(name)
        digest = forge_log(run, success=False)
        write_index(run, [{**r, "digest": digest, "success": False} if r["log"] == LOG else r for r in index(run)])
        doc = manifest.load(run)
        episodes = {eid: (digest if eid == Path(LOG).stem else d) for eid, d in doc["episodes"]}
        files = {rel: manifest.file_digest(run / rel) for rel in doc["files"]}
        forged = manifest.build(doc["plan"], episodes, run_id=doc["run_id"], complete=True, final=True,
                                files=files)  # no key: none to use
        (run / "manifest.json").write_text(json.dumps(forged))
        status, out = verify(run, key, monkeypatch, capsys)
        if key is None:  # results.json still says success: the cross-check against footers catches that
            assert status == 1 and "differs from the episodes' footers" in out, out
        else:
            assert status == 1 and "carries no HMAC" in out and "footer carries no HMAC" in out, out


def test_the_index_emptied_deleted_or_trimmed_fails(copy, monkeypatch, capsys):
    for how in ("empty", "delete", "trim"):
        run = copy("keyed")
        if how == "empty":
            (run / "index.jsonl").write_text("")
        elif how == "delete":
            (run / "index.jsonl").unlink()
        else:
            write_index(run, index(run)[:-3])
        status, out = verify(run, KEY, monkeypatch, capsys)
        assert status == 1 and "which the manifest seals" in out and "incomplete" in out, (how, out)


def test_a_deleted_log_and_a_log_from_another_run_fail(copy, runs, monkeypatch, capsys):
    run = copy("keyed")
    (run / LOG).unlink()
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and f"{run / LOG}: missing" in out
    run = copy("keyed")
    stranger = "episodes/vault.open-fast.oracle.s10.jsonl"
    shutil.copy(runs["other"] / stranger, run / stranger)
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and "stray log" in out
    write_index(run, index(run) + [r for r in index(runs["other"]) if r["log"] == stranger])
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and "is not in the run's plan" in out


def test_success_edited_in_the_index_fails_verify_and_the_report(copy, monkeypatch, capsys):
    run = copy("keyed")
    write_index(run, [{**r, "success": not r["success"]} if r["log"] == LOG else r for r in index(run)])
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and "success is" in out and "footer says" in out
    assert main(["report", str(run)]) == 1
    assert "index differs from the log" in (run / "report.html").read_text()


def test_an_edited_results_json_fails_the_gate_and_verify(copy, monkeypatch, capsys):
    run = copy("keyed")
    doc = json.loads((run / "results.json").read_text())
    doc["metrics"][0]["values"] = {u: 1.0 for u in doc["metrics"][0]["values"]}
    (run / "results.json").write_text(json.dumps(doc))
    monkeypatch.setenv("AGENTBED_LOG_KEY", KEY)
    assert main(["gate", str(run), "--baseline", "baselines/vault.json"]) == 1  # not judged: it does not verify
    assert "results.json: differs from the digest the manifest sealed" in capsys.readouterr().out
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and "results.json: differs from the digest the manifest sealed" in out


def test_a_forged_manifest_fails_with_the_key(copy, monkeypatch, capsys):
    run = copy("keyed")
    doc = manifest.load(run)
    doc["episodes"] = doc["episodes"][:-1]
    (run / "manifest.json").write_text(json.dumps(doc))
    status, out = verify(run, KEY, monkeypatch, capsys)
    assert status == 1 and "HMAC does not match" in out and "Merkle root" in out


def test_a_single_log_re_hashed_passes_without_a_key_and_fails_with_it(copy, monkeypatch, capsys):
    run = copy("keyed")
    forge_log(run, success=False, total_reward=99.0)
    status, out = verify(run / LOG, None, monkeypatch, capsys)
    assert status == 0 and "re-hashed" in out  # what a chain cannot catch, said plainly
    status, out = verify(run / LOG, KEY, monkeypatch, capsys)
    assert status == 1 and "footer carries no HMAC" in out
    records = [json.loads(line) for line in (run / LOG).read_text().splitlines()]
    records[-1]["mac"] = "0" * 64  # a made-up HMAC
    (run / LOG).write_bytes(rechain(records))
    status, out = verify(run / LOG, KEY, monkeypatch, capsys)
    assert status == 1 and ("does not match the key" in out or "no HMAC" in out)


def test_an_empty_directory_does_not_verify(tmp_path, monkeypatch, capsys):
    status, out = verify(tmp_path, None, monkeypatch, capsys)
    assert status == 2 and "nothing to verify" in out


def test_a_killed_run_is_incomplete_and_resume_seals_it(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "agentbed.cli", "run", "vault", "--agent", "oracle,naive", "--seeds", "200",
           "--executor", "serial", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=cli_env(KEY), start_new_session=True, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ((out / "index.jsonl").exists()
                                               and (out / "index.jsonl").read_bytes().count(b"\n") > 100):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    status, text = verify(out, KEY, monkeypatch, capsys)
    assert status == 1 and "incomplete:" in text and "of 1200 episodes finished" in text, text
    resumed = subprocess.run([sys.executable, "-m", "agentbed.cli", "run", "vault", "--out", str(out), "--resume",
                              "--quiet"], cwd=ROOT, env=cli_env(KEY), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    status, text = verify(out, KEY, monkeypatch, capsys)
    assert status == 0 and "1200 of 1200 logs verified" in text and "run complete" in text, text[-2000:]


def test_resume_refuses_to_seal_a_forgery(copy, monkeypatch, capsys):
    run = copy("keyed")
    digest = forge_log(run, success=False)
    records = [{**r, "digest": digest} if r["log"] == LOG else r for r in index(run)]
    write_index(run, records[:-1])  # and one episode left to run, so the resume would seal
    with mock.patch.dict(os.environ, cli_env(KEY), clear=True):
        result = cli_in_process("run", "vault", "--out", str(run), "--resume", "--quiet", cwd=ROOT)
    assert result.returncode == 2 and "not resuming" in result.stderr, result.stderr


def test_a_multi_agent_run_verifies_through_its_team_manifests(tmp_path, monkeypatch, capsys):
    # one team on the synthetic task: what is verified (each member's log through its
    # manifest) is the same for any task, and the default run's seven repositories' test suites
    # took 47 s of Docker here (issue 55)
    out = tmp_path / "team"
    result = subprocess.run([sys.executable, "-m", "agentbed.cli", "run", "cocoder", "--task", "synth-12",
                             "--seeds", "1", "--executor", "serial", "--out", str(out), "--quiet"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT, env=cli_env(None))
    assert result.returncode == 0, result.stderr
    status, text = verify(out, None, monkeypatch, capsys)
    assert status == 0 and "run complete" in text, text
    assert main(["report", str(out)]) == 0
    member = sorted((out / "episodes").glob("*.w0.jsonl"))[0]
    member.write_bytes(member.read_bytes().replace(b'"type":"step"', b'"type":"step" ', 1))
    status, text = verify(out, None, monkeypatch, capsys)
    assert status == 1 and member.name in text, text


def test_a_demo_directory_is_verified_by_its_logs_chains(runs, tmp_path, monkeypatch, capsys):
    """`agentbed demo` writes a run.json without a plan; its workloads' logs are still checked."""
    demo = tmp_path / "demo"
    shutil.copytree(runs["plain"], demo / "vault", ignore=shutil.ignore_patterns(".lock", "run.json",
                                                                                "manifest.json"))
    (demo / "run.json").write_text(json.dumps({"kind": "demo", "suites": ["vault"], "command": "agentbed demo"}))
    status, out = verify(demo, None, monkeypatch, capsys)
    assert status == 0 and "18 of 18 logs verified" in out, out


def test_the_key_comes_from_a_file_too_and_a_short_key_is_refused(runs, tmp_path, monkeypatch, capsys):
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    monkeypatch.delenv("AGENTBED_LOG_KEY", raising=False)
    monkeypatch.setenv("AGENTBED_LOG_KEY_FILE", str(key_file))
    assert main(["verify", str(runs["keyed"])]) == 0
    assert "HMAC checked" in capsys.readouterr().out
    key_file.write_text("another-key-of-enough-length\n")
    assert main(["verify", str(runs["keyed"])]) == 1
    assert "does not match the key" in capsys.readouterr().out
    monkeypatch.setenv("AGENTBED_LOG_KEY", "short")
    assert main(["verify", str(runs["keyed"])]) == 2
    assert "at least 16 bytes" in capsys.readouterr().err


def test_a_thorough_forger_without_the_key_passes_verify_and_with_it_fails(copy, monkeypatch, capsys):
    """Log, index, results.json and manifest all rewritten consistently: a chain without a key
    cannot tell (what docs/engine.md says); the HMAC can."""
    from agentbed.results import episode_metrics, write_results

    for name, key in (("plain", None), ("keyed", KEY)):
        run = copy(name)
        digest = forge_log(run, success=False)
        records = [{**r, "digest": digest, "success": False} if r["log"] == LOG else r for r in index(run)]
        write_index(run, records)
        old = json.loads((run / "results.json").read_text())
        write_results(run / "results.json", episode_metrics(records), episodes=old["episodes"], seeds=old["seeds"])
        doc = manifest.load(run)
        episodes = {eid: (digest if eid == Path(LOG).stem else d) for eid, d in doc["episodes"]}
        files = {rel: manifest.file_digest(run / rel) for rel in doc["files"]}
        (run / "manifest.json").write_text(json.dumps(manifest.build(doc["plan"], episodes, run_id=doc["run_id"],
                                                                     complete=True, final=True, files=files)))
        status, out = verify(run, key, monkeypatch, capsys)
        if key is None:
            assert status == 0, out  # the limit of a bare hash chain, shown rather than hidden
        else:
            assert status == 1 and "HMAC" in out, out
