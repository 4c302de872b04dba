"""Preparing one task from several workers at once (a run's process executor): they take turns,
and every one of them gets the same prepared task (the probe used to be deleted under the other's
feet: FileNotFoundError on ``_cocoder_probe``)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

TASK = "synth-3"
CLI_TASK = "synth-2"  # one of the suite's tasks


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


def test_a_subset_of_modules_blanks_only_those(sandbox, tmp_path, capsys):
    from agentbed.cli import main
    from environments.cocoder.tasks import load_task
    from suites.cocoder.planning import work_graph

    full = load_task(CLI_TASK)
    first = sorted(m for m, mt in full.modules.items() if mt.blanked)[0]
    task = load_task(f"{CLI_TASK}@modules={first}")
    assert list(work_graph(task)) == [first] and task.modules[first].blanked == full.modules[first].blanked
    assert all(mt.skeleton == mt.reference and not mt.blanked for m, mt in task.modules.items() if m != first)
    assert task.reference_tests == full.reference_tests  # the same tests, all of them
    out = tmp_path / "run"
    assert main(["run", "cocoder", "--task", CLI_TASK, "--modules", "synthpkg.nope", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--modules synthpkg.nope: not a module with a body to write" in err
    assert main(["run", "cocoder", "--task", CLI_TASK, "--modules", first, "--seeds", "1", "--out", str(out / "ok"),
                 "--quiet"]) == 0
