import importlib.util
import os
import signal
import subprocess
import time
from pathlib import Path

from agentbed.executors import execute
from agentbed.log import verify_log
from agentbed.runner import EpisodeSpec
from agentbed.store import RunStore, read_index
from agentbed.testing import episode_bytes, require

SPECS = [EpisodeSpec("vault", t, a, s) for a in ("oracle", "naive", "random")
         for t in ("open-fast", "open-after-chores", "long-chores") for s in range(4)]


def _run(tmp_path: Path, executor: str, **kw) -> dict[str, bytes]:
    out = tmp_path / executor
    records = list(execute(SPECS, out, executor=executor, jobs=2, **kw))
    assert sorted(r.episode_id for r in records) == sorted(s.episode_id for s in SPECS)
    return {p.name: episode_bytes(p) for p in sorted((out / "episodes").glob("*.jsonl"))}


def test_same_seeds_give_byte_identical_logs_under_every_executor(tmp_path):
    serial = _run(tmp_path, "serial")
    assert len(serial) == len(SPECS)
    assert _run(tmp_path, "process") == serial
    require(importlib.util.find_spec("ray") is not None, "Ray", "pip install 'agentbed[ray]' (make test does this)")
    assert _run(tmp_path, "ray") == serial


def test_setup_failures_are_recorded_episodes(tmp_path):
    bad = [EpisodeSpec("vault", "open-fast", "model:openai:gpt-none", 0)]
    env = dict(os.environ)
    os.environ.pop("OPENAI_API_KEY", None)
    try:
        (record,) = list(execute(bad, tmp_path, executor="serial"))
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert record.status == "error" and record.error
    assert verify_log(tmp_path / record.log).ok


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path, agentbed_cmd):
    out = tmp_path / "run"
    cmd = agentbed_cmd + ["run", "vault", "--agent", "oracle,naive,random", "--seeds", "250", "--out", str(out),
                          "-j", "2", "--quiet"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    index = out / "index.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if index.exists() and index.read_bytes().count(b"\n") >= 200:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = read_index(index)
    total = 3 * 3 * 250
    assert 200 <= len(before) < total, "the run should have been killed mid-way"

    resumed = subprocess.run(agentbed_cmd + ["run", "vault", "--out", str(out), "--resume", "--quiet"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    lines = [ln for ln in index.read_text().splitlines() if ln.strip()]
    ids = [__import__("json").loads(ln)["episode_id"] for ln in lines if ln.endswith("}")]
    assert len(set(ids)) == total and len(ids) == total, "an episode was lost or counted twice"
    store = RunStore(out)
    assert not list(store.episodes.glob("*.part"))
    logs = sorted(store.episodes.glob("*.jsonl"))
    assert len(logs) == total
    digests = {r["log"]: r["digest"] for r in read_index(index)}
    for log in logs:
        assert verify_log(log, digests[f"episodes/{log.name}"]).ok
