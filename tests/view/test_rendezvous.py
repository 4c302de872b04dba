"""The approval rendezvous is the run's own: a private folder the run makes, files created
exclusively and never through a link, a decision that must name its question, ``via`` set by
the channel, sizes bounded, and every malformed answer refused in one line with the question
kept open (the real ``ask`` loop, in a thread, answered by files as the viewer writes them)."""

from __future__ import annotations

import json
import os
import pwd
import stat
import threading
import time
from pathlib import Path

import pytest

from agentbed.approval import MAX_ACTION_CHARS, Asked, Terminal, ask, decision_path, request_path
from agentbed.errors import UsageError
from agentbed.rendezvous import MAX_FILE_BYTES, private_folder, write_once

ME = pwd.getpwuid(os.getuid()).pw_name


class _Quiet:
    def isatty(self) -> bool:
        return False


def asking(folder: Path, key: str = "ep.step1", timeout: float = 60.0):
    """Start ``ask`` in a thread; returns (thread, result list)."""
    asked = Asked(key, "ep", 1, "t", "naive", '{"tool": "x"}', "obs", "every tool call")
    out: list = []
    thread = threading.Thread(target=lambda: out.append(ask(folder, asked, timeout=timeout, on_timeout="reject",
                                                            agents=["oracle"], terminal=Terminal(_Quiet()))))
    thread.start()
    deadline = time.monotonic() + 30
    request = request_path(folder, key)
    while (request.is_symlink() or not request.exists()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread, out


def gone(path: Path, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while os.path.lexists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not os.path.lexists(path)


def test_the_folder_is_made_private_and_a_link_or_a_strangers_folder_is_refused(tmp_path):
    folder = tmp_path / "a"
    private_folder(folder)
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    opened = tmp_path / "b"
    opened.mkdir(mode=0o777)
    os.chmod(opened, 0o777)
    private_folder(opened)
    assert stat.S_IMODE(os.lstat(opened).st_mode) == 0o700
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    with pytest.raises(UsageError, match="not a directory"):
        private_folder(tmp_path / "link")
    if os.getuid() == 0:  # as root, a folder can be given to another user
        stranger = tmp_path / "stranger"
        stranger.mkdir()
        os.chown(stranger, 65534, 65534)
        with pytest.raises(UsageError, match="another user"):
            private_folder(stranger)


def test_a_request_is_never_written_through_a_link_planted_under_its_name(tmp_path):
    folder = tmp_path / "approvals"
    private_folder(folder)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    request_path(folder, "ep.step1").symlink_to(victim)
    thread, out = asking(folder, timeout=60)
    request = request_path(folder, "ep.step1")
    assert not request.is_symlink() and stat.S_IMODE(os.lstat(request).st_mode) == 0o600
    assert write_once(decision_path(folder, "ep.step1"), {"key": "ep.step1", "decision": "approve", "author": "a"})
    thread.join(30)
    assert victim.read_text() == "precious" and out[0][0]["decision"] == "approve"


def _bad_answers(folder: Path, key: str) -> list[tuple[str, callable]]:
    path = decision_path(folder, key)

    def doc(**fields):
        return lambda: path.write_text(json.dumps({"key": key, "decision": "approve", "author": "a", **fields}))

    def fifo():
        os.mkfifo(path)

    def directory():
        path.mkdir()

    def link():
        target = folder.parent / "elsewhere.json"
        target.write_text(json.dumps({"key": key, "decision": "approve", "author": "a"}))
        path.symlink_to(target)

    return [
        ("not JSON", lambda: path.write_text("approve")),
        ("a JSON list", lambda: path.write_text("[]")),
        ("another question's key", doc(key="ep.step9")),
        ("no key", lambda: path.write_text(json.dumps({"decision": "approve", "author": "a"}))),
        ("an unknown decision", doc(decision="yes")),
        ("an edit without its call", doc(decision="edit")),
        ("an edit over the bound", doc(decision="edit", action="x" * (MAX_ACTION_CHARS + 1))),
        ("a handover to no agent of the suite", doc(decision="handover", agent="root")),
        ("a file over the size bound", lambda: path.write_bytes(b" " * (MAX_FILE_BYTES + 1))),
        ("a FIFO", fifo),
        ("a link", link),
        ("a directory", directory),
    ]


def test_every_malformed_answer_is_one_line_and_the_question_stays_open(tmp_path, capfd):
    folder = tmp_path / "approvals"
    private_folder(folder)
    key = "ep.step1"
    thread, out = asking(folder, key, timeout=120)
    path = decision_path(folder, key)
    for name, plant in _bad_answers(folder, key):
        capfd.readouterr()
        plant()
        if name == "a directory":
            deadline = time.monotonic() + 30
            while "approval refused" not in (err := capfd.readouterr().err) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert err.count("approval refused") == 1, name
            os.rmdir(path)
        else:
            assert gone(path), name  # refused and removed
            err = capfd.readouterr().err
            assert err.count("\n") == 1 and "approval refused" in err, (name, err)
        assert thread.is_alive() and request_path(folder, key).exists(), name  # still asking
    # a planted file that claims the terminal and a name: the channel and the owner are recorded
    assert write_once(path, {"key": key, "decision": "approve", "author": "alice", "via": "terminal"})
    thread.join(30)
    decision, via, _ = out[0]
    assert via == "file" and decision["author"] == ME and decision["claimed_author"] == "alice"
    assert not os.path.lexists(path) and not request_path(folder, key).exists()
