"""A human approver: questions and decisions through the side folder, decisions in the hash
chain, replay from the recorded decisions, the timeout policy."""

from __future__ import annotations

import json
import os
import pwd
import threading
import time
from pathlib import Path

import pytest

from agentbed.cli import main
from agentbed.log import read_log, verify_log
from agentbed.replay import first_divergence, rerun
from agentbed.suite import get_suite

from .conftest import serve


def _start_run(out: Path, approvals: Path, *extra: str, agent: str = "oracle") -> tuple[threading.Thread, list[int]]:
    status: list[int] = []
    args = ["run", "vault", "--agent", agent, "--task", "open-after-chores", "--seeds", "1", "--quiet",
            "--out", str(out), "--approver", "human", "--approvals", str(approvals), *extra]
    thread = threading.Thread(target=lambda: status.append(main(args)), daemon=True)
    thread.start()
    return thread, status


def _wait_for_question(client, step: int, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = client.get("/api/approvals")[1]["pending"]
        if pending and pending[0]["step"] == step:
            return pending[0]
        time.sleep(0.05)
    raise AssertionError(f"no question for step {step} within {timeout} s")


def test_viewer_round_trip_approve_edit_handover_and_replay(tmp_path):
    runs, approvals = tmp_path / "runs", tmp_path / "approvals"
    runs.mkdir()
    for client in serve(runs, approvals=approvals):
        thread, status = _start_run(runs / "human", approvals, agent="naive")
        first = _wait_for_question(client, 1)
        assert first["agent"] == "naive" and "get_token" in first["proposed"] and "oracle" in first["agents"]
        edited = json.dumps({"tool": "get_token", "arguments": {}}, separators=(",", ":"))
        assert edited != first["proposed"]  # the same call in other bytes: the agent's plan still holds
        assert client.post("/api/decide", {"key": first["key"], "decision": "edit", "action": edited,
                                           "author": "ada"})[0] == 200
        assert client.post("/api/decide", {"key": first["key"], "decision": "reject"})[0] == 400  # answered
        second = _wait_for_question(client, 2)
        assert client.post("/api/decide", {"key": second["key"], "decision": "approve", "author": "ada"})[0] == 200
        third = _wait_for_question(client, 3)
        assert client.post("/api/decide", {"key": third["key"], "decision": "handover", "agent": "nobody"})[0] == 400
        assert client.post("/api/decide", {"key": third["key"], "decision": "handover", "agent": "oracle",
                                           "author": "ada"})[0] == 200
        while thread.is_alive():  # the rest of the steps: approve each as it is asked
            pending = client.get("/api/approvals")[1]["pending"]
            for question in pending:
                client.post("/api/decide", {"key": question["key"], "decision": "approve", "author": "bob"})
            time.sleep(0.05)
        assert status == [0]
        assert client.get("/api/runs")[1]["runs"][0]["counts"] == {"budget": 1}  # naive's stale token, as always
        _, episode = client.get("/api/episode?run=human&episode=vault.open-after-chores.naive.s0")
    log = runs / "human" / "episodes" / "vault.open-after-chores.naive.s0.jsonl"
    assert verify_log(log).ok
    steps = [r for r in read_log(log) if r["type"] == "step"]
    decisions = [s["control"]["decision"] for s in steps]
    assert [d["decision"] for d in decisions[:3]] == ["edit", "approve", "handover"]
    # the names the viewer's users typed are the files' claim; the author is the files' owner, via the file channel
    assert {d["claimed_author"] for d in decisions} == {"ada", "bob"} and all(d["by"] == "human" for d in decisions)
    assert {d["author"] for d in decisions} == {pwd.getpwuid(os.getuid()).pw_name}
    assert all(d["via"] == "file" and d["latency_seconds"] >= 0 for d in decisions)
    assert steps[0]["action"] == edited and steps[0]["control"]["kind"] == "replace"
    assert steps[0]["control"]["proposed"] == first["proposed"] != edited
    assert steps[1]["control"]["kind"] == "continue" and steps[1]["action"] == second["proposed"]
    assert decisions[2]["agent"] == "oracle" and steps[2]["meta"] == {"handed_to": "oracle"}
    assert steps[2]["action"] != third["proposed"] and steps[2]["agent"] == "naive"  # the step only
    shown = [s["control"]["decision"]["decision"] for s in episode["transcript"]["steps"]]
    assert shown == [d["decision"] for d in decisions]  # the viewer shows each decision
    recorded, replayed = rerun(log)  # replay re-applies the recorded decisions: nobody is asked
    assert first_divergence(recorded, replayed) is None
    assert not list(approvals.glob("*.json"))  # questions and answers are cleaned up


def test_a_folder_of_runs_answers_every_runs_own_approvals(tmp_path, capsys):
    """The README's pairing: `agentbed view runs` beside `agentbed run ... --approver human --out
    runs/h`, whose questions wait in runs/h.approvals (the run's default). Two such runs started
    after the viewer are both answered, each decision reaching its own run."""
    from agentbed.view.catalog import is_run

    runs = tmp_path / "runs"
    runs.mkdir()
    assert not is_run(runs)
    for client in serve(runs, approvals_under=runs):
        assert client.get("/api/approvals")[1] == {"enabled": True, "folder": str(runs), "pending": []}
        # two agents, so that no question key is waiting in both runs (such a key is refused as ambiguous)
        started = [_start_run(runs / name, runs / f"{name}.approvals", agent=agent)
                   for name, agent in (("h", "oracle"), ("k", "naive"))]
        answered: dict[str, int] = {"h.approvals": 0, "k.approvals": 0}
        deadline = time.monotonic() + 120
        while any(t.is_alive() for t, _ in started) and time.monotonic() < deadline:
            for question in client.get("/api/approvals")[1]["pending"]:
                if client.post("/api/decide", {"key": question["key"], "decision": "approve"})[0] == 200:
                    answered[question["approvals"]] += 1
            time.sleep(0.05)
        assert [status for _, status in started] == [[0], [0]]
        assert answered["h.approvals"] > 0 and answered["k.approvals"] > 0
        assert client.post("/api/decide", {"key": "nothing-waits", "decision": "approve"})[0] == 400
    for name in ("h", "k"):
        log = next((runs / name / "episodes").glob("*.jsonl"))
        assert verify_log(log).ok
        steps = [r for r in read_log(log) if r["type"] == "step"]
        assert len(steps) == answered[f"{name}.approvals"] and all(s["control"]["decision"]["decision"] == "approve"
                                                                    for s in steps)


def test_two_runs_in_threads_of_one_process_each_ask_their_own_folder(tmp_path):
    """The approver is the run's, not the process's: run A asks in A's folder after run B has
    started, and still asks after B has ended (a process-wide setting sent A's questions to B's
    folder, then stopped asking; the folder-of-runs test above failed that way under load)."""
    from agentbed.approval import ApproverConfig, episode_controller
    from agentbed.cli_approval import asking
    from agentbed.runner import EpisodeSpec

    suite = get_suite("vault")
    spec = EpisodeSpec(suite="vault", agent="oracle", task="open-after-chores", seed=0)
    env = suite.make_env(spec.task, spec.options)
    a_set, b_set, b_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, list] = {"a": [], "b": []}

    def folder_now(name: str) -> None:
        approver = episode_controller(spec, suite, env)
        seen[name].append(approver.folder.name if approver else None)

    def run_a() -> None:
        with asking(ApproverConfig(tmp_path / "a.approvals")):
            a_set.set()
            b_set.wait(10)
            folder_now("a")
            b_done.wait(10)
            folder_now("a")

    def run_b() -> None:
        a_set.wait(10)
        with asking(ApproverConfig(tmp_path / "b.approvals")):
            b_set.set()
            folder_now("b")
        b_done.set()

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"a": ["a.approvals", "a.approvals"], "b": ["b.approvals"]}
    assert episode_controller(spec, suite, env) is None  # this thread never asked


def test_unanswered_question_times_out_to_reject(tmp_path):
    out, approvals = tmp_path / "run", tmp_path / "approvals"
    thread, status = _start_run(out, approvals, "--approval-timeout", "0.3")
    thread.join(30)
    assert status == [0]
    records = read_log(out / "episodes" / "vault.open-after-chores.oracle.s0.jsonl")
    control = next(r for r in records if r["type"] == "control")
    assert control["verdict"]["kind"] == "stop" and control["verdict"]["decision"]["via"] == "timeout"
    assert control["verdict"]["decision"]["author"] == "timeout policy"
    assert records[-1]["status"] == "stopped" and records[-1]["steps"] == 0
    recorded, replayed = rerun(out / "episodes" / "vault.open-after-chores.oracle.s0.jsonl")
    assert first_divergence(recorded, replayed) is None


def test_only_flagged_calls_are_asked(tmp_path):
    out, approvals = tmp_path / "run", tmp_path / "approvals"
    # the oracle reports risk 0.1 on every call: nothing reaches the threshold, nobody is asked
    thread, status = _start_run(out, approvals, "--approve-flagged", "risk>=0.5", "--approval-timeout", "5")
    thread.join(30)
    assert status == [0]
    records = read_log(out / "episodes" / "vault.open-after-chores.oracle.s0.jsonl")
    assert records[-1]["status"] == "ok" and all(r.get("control") is None for r in records if r["type"] == "step")


@pytest.mark.parametrize("args, message", [
    (["--approvals", "x"], "need --approver human"),
    (["--approver", "human", "--approval-timeout", "0"], "positive number"),
    (["--approver", "human", "--approve-flagged", "risk>=high"], "risk>=NUMBER"),
])
def test_bad_approver_options_are_one_line_errors(tmp_path, capsys, args, message):
    assert main(["run", "vault", "--out", str(tmp_path / "r"), "--quiet", *args]) == 2
    assert message in capsys.readouterr().err


def test_approvals_inside_the_run_directory_are_refused(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", "vault", "--out", str(out), "--approver", "human", "--approvals", str(out / "q")]) == 2
    assert "inside the run directory" in capsys.readouterr().err


def test_terminal_answers_are_read_from_a_real_tty(tmp_path):
    """The terminal prompt on a pseudo-terminal: answers typed ahead are queued, a bad one is
    asked again, and the decisions land in the log marked as typed."""
    import io
    import os
    import pty

    from agentbed.approval import HumanApprover, Terminal
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import EpisodeSpec, run_episode
    from environments.vault.agents import VaultOracle
    from environments.vault.env import VaultEnv

    leader, follower = pty.openpty()
    answers = b'x\ne {"tool": "get_token", "arguments": {}}\na\n'
    os.write(leader, answers)
    shown = io.StringIO()
    with os.fdopen(follower, "rb", buffering=0) as tty:
        approver = HumanApprover(tmp_path / "q", episode_id="e", timeout=10, terminal=Terminal(tty, shown))
        spec = EpisodeSpec("vault", "open-fast", "oracle", 0)
        log = tmp_path / "e.jsonl"
        record = run_episode(VaultEnv("open-fast"), VaultOracle(), spec, controller=approver,
                             writer=TrajectoryWriter(log))
    os.close(leader)
    assert record.status == "ok"
    steps = [r for r in read_log(log) if r["type"] == "step"]
    assert [s["control"]["decision"]["decision"] for s in steps] == ["edit", "approve"]
    assert all(s["control"]["decision"]["via"] == "terminal" for s in steps)
    assert "proposed:" in shown.getvalue() and "(a, r, e <call> or h <agent>)" in shown.getvalue()


def test_a_controller_named_by_module_and_factory_chooses_what_is_asked(tmp_path, monkeypatch):
    """--approve-flagged module:factory: a controller's non-continue verdict flags the call."""
    (tmp_path / "flag_reads.py").write_text(
        "from agentbed.control import CONTINUE, Verdict\n"
        "class FlagReads:\n"
        "    def before_action(self, ctx, proposed):\n"
        "        return Verdict('stop', reason='reads logs') if 'read_logs' in proposed.text else CONTINUE\n"
        "def make():\n"
        "    return FlagReads()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out, approvals = tmp_path / "run", tmp_path / "approvals"
    thread, status = _start_run(out, approvals, "--approve-flagged", "flag_reads:make", "--approval-timeout", "0.2",
                                "--approval-timeout-policy", "approve")
    thread.join(30)
    assert status == [0]
    steps = [r for r in read_log(out / "episodes" / "vault.open-after-chores.oracle.s0.jsonl") if r["type"] == "step"]
    asked = [json.loads(s["action"])["tool"] for s in steps if s["control"]]
    assert asked == ["read_logs", "read_logs"]  # the two reads were asked about (and approved by the policy)
    assert all(s["control"]["decision"]["via"] == "timeout" for s in steps if s["control"])


def test_a_server_error_is_an_answer_and_the_server_goes_on(tmp_path, monkeypatch):
    from agentbed.view import api

    (tmp_path / "runs").mkdir()
    for client in serve(tmp_path / "runs"):
        monkeypatch.setattr(api, "runs_document", lambda catalog: 1 / 0)
        status, doc = client.get("/api/runs")
        assert status == 500 and "ZeroDivisionError" in doc["error"]
        monkeypatch.undo()
        assert client.get("/api/runs")[0] == 200


def test_approvals_inside_another_run_directory_are_refused(tmp_path, capsys):
    """Session 17's probe: ``run --approvals OTHER/x`` made a folder inside another (sealed) run,
    and ``view RUN --approvals RUN/episodes`` served decisions into a run's own episodes folder."""
    other = tmp_path / "other"
    assert main(["run", "vault", "--task", "open-fast", "--seeds", "1", "--out", str(other), "--quiet"]) == 0
    capsys.readouterr()
    before = sorted(p.relative_to(other) for p in other.rglob("*"))
    assert main(["run", "vault", "--out", str(tmp_path / "r"), "--approver", "human",
                 "--approvals", str(other / "x")]) == 2
    assert f"inside the run directory {other}" in capsys.readouterr().err
    assert main(["view", str(other), "--approvals", str(other / "episodes")]) == 2
    assert f"inside the run directory {other}" in capsys.readouterr().err
    assert sorted(p.relative_to(other) for p in other.rglob("*")) == before  # nothing written into it


def test_a_run_far_above_the_approvals_folder_changes_nothing(tmp_path):
    """Session 18: a stray run written into ``/`` made every folder "inside the run directory /"
    (the check walked up to the root). The search is bounded: run files planted three levels above
    an approvals folder leave the answer as it was; a run within two levels, or the run the user
    gave at any depth, is still refused."""
    import argparse

    from agentbed.cli_approval import approver_config
    from agentbed.errors import UsageError
    from agentbed.rendezvous import outside_every_run

    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    args = argparse.Namespace(approver="human", approvals=str(deep / "q"), approval_timeout=5.0,
                              approval_timeout_policy="reject", approve_flagged="")

    def answer() -> tuple[str, str]:
        try:
            outside_every_run(deep / "q")
            config = approver_config(args, deep / "r")
            return "accepted", str(config.folder if config else None)
        except UsageError as exc:
            return "refused", str(exc)

    before = answer()
    assert before[0] == "accepted"
    for name in ("run.json", "index.jsonl", "manifest.json"):
        (tmp_path / name).write_text("{}\n")
    assert answer() == before  # a run three levels up is not looked for
    given = tmp_path / "a"
    with pytest.raises(UsageError, match=f"inside the run directory {given}"):
        approver_config(args, given)  # the run the user gave: refused at any depth
    (deep.parent / "run.json").write_text("{}\n")
    with pytest.raises(UsageError, match=f"inside the run directory {deep.parent}"):
        outside_every_run(deep / "q")  # R/c/q: within the bounded search
