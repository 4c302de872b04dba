"""Preparing one task from several workers at once (a run's process executor): they take turns,
and every one of them gets the same prepared task (the probe used to be deleted under the other's
feet: FileNotFoundError on ``_cocoder_probe``)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

TASK = "synth-3"


def _prepare_at(start: float) -> tuple[int, dict[str, list[str]]]:
    import time

    from environments.cocoder.tasks import load_task

    time.sleep(max(0.0, start - time.time()))  # both preparers start at the same moment
    task = load_task(TASK)
    return task.reference_tests, {m: mt.blanked for m, mt in task.modules.items()}


def test_two_workers_prepare_the_same_task_at_once(sandbox, tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("AGENTBED_COCODER_CACHE", str(tmp_path))  # nothing prepared yet: both must prepare
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        start = time.time() + 3.0  # after both interpreters are up
        results = [f.result(timeout=600) for f in [pool.submit(_prepare_at, start) for _ in range(2)]]
    assert results[0] == results[1] and results[0][0] > 0
    tree = tmp_path / "tasks" / TASK / "tree"
    assert not (tree / "_cocoder_probe").exists()  # the probe is gone, and was never left half-deleted
