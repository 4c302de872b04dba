"""agentbed.memo.ProcessMemo: one value per process and key, built once however many threads ask."""

import os
import threading

from agentbed.memo import ProcessMemo


def test_threads_asking_at_once_build_one_value():
    memo: ProcessMemo[object] = ProcessMemo()
    built = []
    start = threading.Barrier(8)

    def build() -> object:
        built.append(1)
        return object()

    got = []

    def ask() -> None:
        start.wait()
        got.append(memo.get_or_build("k", build))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len({id(v) for v in got}) == 1


def test_another_process_builds_its_own(monkeypatch):
    memo: ProcessMemo[str] = ProcessMemo()
    assert memo.get_or_build("k", lambda: "parent") == "parent"
    monkeypatch.setattr(os, "getpid", lambda: -1)  # as in a forked worker
    assert memo.get("k") is None
    assert memo.get_or_build("k", lambda: "child") == "child"


def test_put_keeps_the_first_value():
    memo: ProcessMemo[str] = ProcessMemo()
    assert memo.put("k", "first") == "first"
    assert memo.put("k", "second") == "first"
    assert memo.get("other") is None
