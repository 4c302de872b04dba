"""Many model-bound episodes in flight, through the real LangChain OpenAI client and a loopback
OpenAI-compatible server: identical logs whatever the completion order, rate limits lower the
concurrency (recorded in the run's events), and a kill mid-flight resumes without loss."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from openai_stub import Reply, error, stub_servers  # noqa: E402 - needs the path above
from scripted_models import vault_three_calls  # noqa: E402

from agentbed.agents.connections import (  # noqa: E402
    _COOLDOWN_UNTIL,
    _HOLD_UNTIL,
    MAX_HOLD_SECONDS,
    ConnectionLimiter,
    read_events,
)
from agentbed.executors import execute  # noqa: E402
from agentbed.inflight import EVENTS, ModelRuntime  # noqa: E402
from agentbed.log import verify_log  # noqa: E402
from agentbed.runner import EpisodeSpec  # noqa: E402
from agentbed.store import read_index  # noqa: E402
from agentbed.testing import episode_bytes

AGENT = "model:openai:stub-model"


@pytest.fixture
def model_server(monkeypatch):
    """Start the stub with a policy and point the OpenAI client at it (workers inherit the env)."""
    with stub_servers(monkeypatch, "test") as start:
        yield start


def specs(n: int) -> list[EpisodeSpec]:
    return [EpisodeSpec("vault", "open-fast", AGENT, seed) for seed in range(n)]


def logs(run_dir: Path, other_header: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {p.name: episode_bytes(p, other_header=other_header) for p in sorted((run_dir / "episodes").glob("*.jsonl"))}


def first_arrivals_slow(count: int, delay: float):
    """The policy, with the first ``count`` requests answered after ``delay``: the episodes that
    started first finish last."""
    lock, seen = threading.Lock(), [0]

    def answer(body):
        with lock:
            seen[0] += 1
            slow = seen[0] <= count
        reply = vault_three_calls(body)
        reply.delay = delay if slow else 0.0
        return reply

    return answer


@pytest.mark.parametrize("jobs", [1, 2])
def test_out_of_order_completion_gives_identical_logs(model_server, tmp_path, jobs):
    model_server(vault_three_calls)
    serial = list(execute(specs(16), tmp_path / "serial", executor="serial"))
    assert all(r.status == "ok" and r.success for r in serial), serial[0].error
    model_server(first_arrivals_slow(8, 0.5))
    out = tmp_path / "inflight"
    runtime = ModelRuntime.for_run({AGENT}, out.mkdir() or out, max_connections=16)
    records = list(execute(specs(16), out, jobs=jobs, runtime=runtime))
    finished = [r.episode_id for r in records]
    assert finished != [s.episode_id for s in specs(16)], "the test meant episodes to finish out of order"
    assert sorted(finished) == sorted(s.episode_id for s in specs(16))
    assert logs(out) == logs(tmp_path / "serial")
    assert all(r.usage["calls"] == 3 and r.usage["input_tokens"] == 200 + 250 + 300 for r in records)


@pytest.mark.parametrize(("refusal", "reason"), [(error(429, **{"retry-after": "0.2"}), "rate_limit"),
                                                 (error(503, **{"retry-after": "0.2"}), "retry_after")])
def test_refusals_lower_the_concurrency_and_episodes_still_complete(model_server, tmp_path, refusal, reason):
    lock, count = threading.Lock(), [0]

    def answer(body) -> Reply:
        with lock:
            count[0] += 1
            refuse = count[0] <= 6
        return refusal if refuse else vault_three_calls(body)

    model_server(answer)
    out = tmp_path / "run"
    out.mkdir()
    runtime = ModelRuntime.for_run({AGENT}, out, max_connections=8)
    records = list(execute(specs(8), out, jobs=1, runtime=runtime))
    assert all(r.status == "ok" and r.success for r in records), [r.error[-300:] for r in records]
    changes = [e for e in read_events(out / EVENTS) if e["event"] == "concurrency"]
    assert changes and changes[0]["reason"] == reason and changes[0]["from"] == 8 and changes[0]["to"] == 4
    assert changes[0]["retry_after"] == pytest.approx(0.2)


def test_a_retry_after_of_years_holds_calls_no_longer_than_a_retry_waits(tmp_path):
    """Session 20's probe: a provider answering ``Retry-After: 99999999999`` held every call of
    the run (it hung); a hold is capped as a call's own retry wait is, and the event stays JSON."""
    for said in (99_999_999_999.0, float("inf")):
        limiter = ConnectionLimiter("m", 8, events=tmp_path / "e.jsonl", cooldown=0.0)
        limiter.throttled("retry_after", said)
        assert limiter._state[_HOLD_UNTIL] <= time.monotonic() + MAX_HOLD_SECONDS
        assert limiter._state[_COOLDOWN_UNTIL] <= time.monotonic() + MAX_HOLD_SECONDS
    events = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]  # no Infinity
    assert [e["retry_after"] for e in events] == [MAX_HOLD_SECONDS, MAX_HOLD_SECONDS]


def test_limiter_halves_on_refusal_and_grows_back_by_one_per_window(tmp_path):
    limiter = ConnectionLimiter("m", 8, events=tmp_path / "e.jsonl", cooldown=0.0)
    limiter.throttled("timeout")
    limiter.throttled("timeout")  # the same burst: counted once
    assert limiter.limit == 4
    for _ in range(4):
        with limiter.slot():
            pass
        limiter.succeeded()
    assert limiter.limit == 5
    events = read_events(tmp_path / "e.jsonl")
    assert [(e["from"], e["to"], e["reason"]) for e in events] == [(8, 4, "timeout"), (4, 5, "recovered")]


def _decisions(log: bytes) -> list[tuple[str, str]]:
    return [(r["action"], r["observation"]) for r in map(json.loads, log.splitlines()) if r["type"] == "step"]


def _same_but_for_transport_retries(got: dict[str, bytes], want: dict[str, bytes]) -> None:
    """Byte-identical logs, except where a live call had to be retried (a connection the killed
    run left behind can make the resumed run's first attempt fail): the log then records the
    retry, and every action and observation must still be the reference's."""
    assert got.keys() == want.keys()
    for name in sorted(got):
        if got[name] != want[name]:
            assert b'"retries":[{"attempt":0' in got[name], f"{name} differs without a recorded retry"
            assert _decisions(got[name]) == _decisions(want[name]), name


def _header_provenance(log: Path) -> dict:
    with open(log, "rb") as fh:
        return json.loads(fh.readline())["provenance"]


def _each_names_its_drivers_code(out: Path, kept: set[str], reference: Path) -> None:
    """Every log's header names the code of the invocation that ran it (docs/engine.md, "Trajectory
    logs": made once by the driver and carried by each spec). The reference, the killed run and the
    resume are three processes, each reading the checkout when it starts, so their commit and
    ``diff_sha256`` agree only while nobody edits, stashes or commits in it meanwhile: a test run
    beside a helper's edits failed here (session 19). So: the episodes the killed run finished name
    the code its run.json names, those the resume ran all name one code, and every one names the
    reference's agentbed version and suite origin, which no edit of the checkout changes."""
    plan = json.loads((out / "run.json").read_text())["provenance"]
    killed = {**{k: v for k, v in plan.items() if k != "suites"}, "suite": plan["suites"]["vault"]}
    made = {p.name: _header_provenance(p) for p in sorted((out / "episodes").glob("*.jsonl"))}
    want = _header_provenance(next((reference / "episodes").glob("*.jsonl")))
    assert kept and all(made[name] == killed for name in kept), "a kept log names other code than its run"
    assert len({json.dumps(made[name], sort_keys=True) for name in made if name not in kept}) == 1
    for name, got in made.items():
        assert got.keys() - {"diff_sha256"} == want.keys() - {"diff_sha256"}, name  # present when dirty
        assert (got["agentbed"], got["suite"]) == (want["agentbed"], want["suite"]), name


def _settled(stub, quiet: float = 0.5) -> int:
    """The stub's count of served requests once none has been answered for ``quiet`` seconds."""
    count, since = stub.served, time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.05)
        if stub.served != count:
            count, since = stub.served, time.monotonic()
    return count


def _started_until(cmd: list[str], out: Path, lines: int, stderr: int | None) -> subprocess.Popen:
    """The run ``cmd`` started in a session of its own, returned once its index holds ``lines``
    episodes (or after two minutes), to be killed mid-way."""
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=stderr,
                            env=os.environ.copy())
    index = out / "index.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (index.exists() and index.read_bytes().count(b"\n") >= lines):
        time.sleep(0.01)
    return proc


def _writer_lock_released(run_dir: Path, seconds: float = 60) -> None:
    """Wait until every killed process has let go of the run's writer lock. ``proc.wait`` reaps
    only the driver; its forked workers share the lock's descriptor and, on a loaded machine, can
    still be exiting when the resume starts, which then (rightly) refuses a run still being written."""
    import fcntl

    from agentbed.store import LOCK

    fd = os.open(run_dir / LOCK, os.O_RDWR)
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                assert time.monotonic() < deadline, "a killed run's workers still hold its writer lock"
                time.sleep(0.05)
    finally:
        os.close(fd)  # releases the flock taken above


def test_sigkill_mid_flight_then_resume_loses_and_duplicates_nothing(model_server, tmp_path, agentbed_cmd):
    model_server(vault_three_calls)
    reference = tmp_path / "reference"
    list(execute(specs(40), reference, executor="serial"))
    stub = model_server(lambda body: Reply(**{**vars(vault_three_calls(body)), "delay": 0.1}))
    out = tmp_path / "run"
    cmd = agentbed_cmd + ["run", "vault", "--model", "openai:stub-model", "--task", "open-fast", "--seeds", "40",
                          "--max-connections", "8", "-j", "2", "--no-cache", "--out", str(out), "--quiet"]
    proc = _started_until(cmd, out, 8, subprocess.PIPE)
    index = out / "index.jsonl"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _writer_lock_released(out)
    before = read_index(index)
    assert 8 <= len(before) < 40, "the run should have been killed mid-way"
    served = _settled(stub)  # requests the killed run had already sent may still be answered
    resumed = subprocess.run(agentbed_cmd + ["run", "vault", "--out", str(out), "--resume", "--quiet", "--no-cache"],
                             capture_output=True, text=True, timeout=300, env=os.environ.copy())
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["episode_id"] for line in index.read_text().splitlines() if line.endswith("}")]
    assert len(ids) == len(set(ids)) == 40, "an episode was lost or counted twice"
    assert stub.served - served <= 3 * (40 - len(before)), "a finished episode was run again"
    digests = {r["log"]: r["digest"] for r in read_index(index)}
    for log in sorted((out / "episodes").glob("*.jsonl")):
        assert verify_log(log, digests[f"episodes/{log.name}"]).ok
    _each_names_its_drivers_code(out, {Path(r["log"]).name for r in before}, reference)
    _same_but_for_transport_retries(logs(out, ("provenance",)), logs(reference, ("provenance",)))


def test_timeouts_and_refusals_are_load_signals_but_server_errors_are_not():
    import httpx
    import openai

    from agentbed.agents.retry import throttle_signal

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def status(code: int, **headers: str) -> openai.APIStatusError:
        return openai.APIStatusError("x", response=httpx.Response(code, headers=headers, request=request), body=None)

    assert throttle_signal(openai.APITimeoutError(request)) == ("timeout", None)
    assert throttle_signal(httpx.ReadTimeout("slow")) == ("timeout", None)
    assert throttle_signal(status(429)) == ("rate_limit", None)
    assert throttle_signal(status(503, **{"retry-after": "2"})) == ("retry_after", 2.0)
    assert throttle_signal(status(500)) is None
    assert throttle_signal(openai.APIConnectionError(request=request)) is None


def test_a_local_model_defaults_to_its_servers_slots_and_a_provider_to_32(tmp_path):
    runtime = ModelRuntime.for_run({"model:local:gemma", "model:openai:gpt-4o-mini", "oracle"}, tmp_path)
    assert {m: lim.ceiling for m, lim in runtime.limiters.items()} == {"local:gemma": 2, "openai:gpt-4o-mini": 32}
    assert runtime.max_connections == 32
    given = ModelRuntime.for_run({"model:local:gemma"}, tmp_path, max_connections=6)
    assert given.limiters["local:gemma"].ceiling == 6


def test_one_cap_holds_across_all_worker_processes(model_server, tmp_path):
    """Two workers of 4 threads each, a cap of 4: the server never sees more than 4 calls at once."""
    stub = model_server(lambda body: Reply(**{**vars(vault_three_calls(body)), "delay": 0.05}))
    # The stub's own count (stub.peak) stops before a reply is written: a count that still held the
    # request while its reply was written saw 5 under load, the client having already handed its slot on.
    out = tmp_path / "run"
    out.mkdir()
    runtime = ModelRuntime.for_run({AGENT}, out, max_connections=4)
    records = list(execute(specs(24), out, jobs=2, runtime=runtime))
    assert all(r.status == "ok" for r in records) and stub.served == 72
    assert 1 <= stub.peak <= 4


def test_two_runs_in_threads_of_one_process_each_use_their_own_runtime(model_server, tmp_path):
    """The model runtime (cache, caps) is the run's context, not the process's, as the approver is
    (0a1e2ec): run B starting in another thread does not hand run A's later episodes B's cache, and
    run A ending does not take B's away. The threads are ordered by events: A runs one episode, B
    starts and runs one, A runs the rest and ends, then B runs the rest. Each run's cache then holds
    the calls of its own four episodes, none of them answered from the other's."""
    from agentbed.agents.cache import ModelCallCache

    model_server(vault_three_calls)
    steps = {name: (threading.Event(), threading.Event()) for name in "ab"}  # (first episode done, ended)
    records: dict[str, list] = {}
    failed: list[BaseException] = []

    def run(name: str, before: threading.Event | None, after: threading.Event) -> None:
        try:
            out = tmp_path / name
            out.mkdir()
            runtime = ModelRuntime.for_run({AGENT}, out, cache=ModelCallCache(tmp_path / f"cache-{name}"))
            if before is not None:
                before.wait(60)
            running = execute(specs(4), out, executor="serial", runtime=runtime)
            records[name] = [next(running)]
            steps[name][0].set()
            after.wait(60)
            records[name] += list(running)
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread below
            failed.append(exc)
        finally:
            steps[name][0].set()
            steps[name][1].set()

    threads = [threading.Thread(target=run, args=("a", None, steps["b"][0])),
               threading.Thread(target=run, args=("b", steps["a"][0], steps["a"][1]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failed, failed
    entries = {name: sorted(p.name for p in (tmp_path / f"cache-{name}").glob("??/*.json")) for name in "ab"}
    assert entries["a"] and entries["a"] == entries["b"]
    assert all(len(records[n]) == 4 and r.status == "ok" and r.usage["calls"] == 3 and r.usage["cached_calls"] == 0
               for n in "ab" for r in records[n])


def test_workers_of_a_driver_killed_alone_let_go_of_the_run(tmp_path, agentbed_cmd):
    """Session 17's probe: SIGKILL of the driver alone (as the OOM killer or ``kill -9 PID`` does,
    not the whole process group) left both forked workers blocked for ever on their pipes, each
    holding the parent's end it had inherited, and holding the run's writer lock: every resume
    was refused ('another agentbed process (pid N) is writing this run directory') naming the dead
    driver. The workers now close the parent's ends, see the pipe end and exit."""
    out = tmp_path / "run"
    cmd = agentbed_cmd + ["run", "vault", "--task", "open-fast", "--agent", "oracle,naive,random", "--seeds", "20000",
                          "-j", "2", "--out", str(out), "--quiet"]
    proc = _started_until(cmd, out, 200, subprocess.DEVNULL)
    index = out / "index.jsonl"
    os.kill(proc.pid, signal.SIGKILL)  # the driver alone
    proc.wait(timeout=30)
    try:
        _writer_lock_released(out)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left, so a failure leaves no orphan behind
        except ProcessLookupError:
            pass
    done = index.read_bytes().count(b"\n")
    assert done < 60000, "the run should have been killed mid-way"
    resumed = subprocess.run(agentbed_cmd + ["run", "vault", "--out", str(out), "--resume", "--quiet", "--limit",
                                             str(done + 10)], capture_output=True, text=True, timeout=600,
                             env=os.environ.copy())
    assert resumed.returncode == 0, resumed.stderr  # accepted: nobody holds the run any more
