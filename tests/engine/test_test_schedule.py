"""`make test`'s schedule (tests/conftest.py): under pytest-xdist's loadfile the test files are
handed out longest first by tests/file_costs.json, and xdist keeps that order."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _conftest():
    spec = importlib.util.spec_from_file_location("agentbed_tests_conftest", ROOT / "tests" / "conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@dataclass
class _Item:
    path: Path
    name: str
    markers: tuple[str, ...] = field(default=())

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_xdist_is_told_to_keep_the_order_the_conftest_gives(request):
    pytest.importorskip("xdist")  # a dev dependency: present wherever make test runs
    assert request.config.getoption("loadscopereorder") is False


def test_files_go_longest_first_and_an_unknown_slow_file_before_an_unknown_quick_one(monkeypatch):
    conftest = _conftest()
    tests = ROOT / "tests"
    known = {"tests/x/test_cheap.py": 3.0, "tests/x/test_dear.py": 500.0}
    monkeypatch.setattr(conftest, "file_costs", lambda: known)
    items = [_Item(tests / "x" / "test_cheap.py", "a"), _Item(tests / "x" / "test_quick.py", "b"),
             _Item(tests / "x" / "test_new_slow.py", "c"), _Item(tests / "x" / "test_new_slow.py", "d", ("docker",)),
             _Item(tests / "x" / "test_dear.py", "e"), _Item(tests / "x" / "test_dear.py", "f"),
             _Item(tests / "x" / "test_cheap.py", "g"), _Item(Path("/elsewhere/test_out.py"), "z")]
    conftest.pytest_collection_modifyitems(None, items)
    # a file's tests keep their order; one outside the repository is unknown, named by its path
    assert [i.name for i in items] == ["e", "f", "c", "d", "a", "g", "z", "b"]


def test_an_exclusive_groups_files_are_one_unit_costed_together(tmp_path, monkeypatch):
    """Files sharing ``exclusive(NAME)`` (Ray's) go to one worker in a row: on two workers they
    would each hold it while the other waits on the lock."""
    conftest = _conftest()
    tests = ROOT / "tests"
    made = {}
    for name, text in (("test_ray_a.py", 'pytestmark = pytest.mark.exclusive("ray")\n'),
                       ("test_ray_b.py", '@pytest.mark.exclusive("ray")\ndef test_x(): pass\n'),
                       ("test_mid.py", "def test_y(): pass\n")):
        made[name] = tests / "x" / name
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(conftest, "exclusive_group", lambda path: conftest._EXCLUSIVE.search(
        (tmp_path / path.name).read_text()).group(1) if conftest._EXCLUSIVE.search((tmp_path / path.name).read_text())
        else None)
    monkeypatch.setattr(conftest, "file_costs", lambda: {"tests/x/test_ray_a.py": 40.0, "tests/x/test_ray_b.py": 30.0,
                                                         "tests/x/test_mid.py": 50.0})
    items = [_Item(made["test_mid.py"], "m"), _Item(made["test_ray_b.py"], "b"), _Item(made["test_ray_a.py"], "a")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.name for i in items] == ["b", "a", "m"]  # 70 s of Ray before the 50 s file
    assert {conftest.work_unit(made[n]) for n in ("test_ray_a.py", "test_ray_b.py")} == {"exclusive:ray"}


def test_the_ray_files_are_grouped_in_this_repository():
    conftest = _conftest()
    tests = ROOT / "tests"
    for path in ("engine/test_ray_cluster.py", "engine/test_ray_executor.py", "agents/test_sigterm.py"):
        assert conftest.exclusive_group(tests / path) == "ray", path
    assert conftest.exclusive_group(tests / "engine" / "test_seal.py") is None


def test_the_files_sharing_the_foreign_harvests_go_to_one_worker_as_one_unit(monkeypatch):
    """spaCy's reading of every foreign-prose set (a session fixture, about 50 s) serves two files:
    one unit, so one worker builds it once; costed as the two files together, handed out before a
    file costing less than their sum."""
    conftest = _conftest()
    tests = ROOT / "tests" / "graphrag"
    units = {conftest.work_unit(tests / name) for name in ("test_nlp_extract.py", "test_nlp_pairs.py")}
    assert units == {"one_worker:foreign-harvests"}
    assert conftest.one_worker_group(tests / "test_tells.py") is None
    items = [_Item(tests / "test_tells.py", "t"), _Item(tests / "test_nlp_pairs.py", "p"),
             _Item(tests / "test_nlp_extract.py", "e")]
    costs = {"tests/graphrag/test_tells.py": 60.0, "tests/graphrag/test_nlp_extract.py": 40.0,
             "tests/graphrag/test_nlp_pairs.py": 30.0}
    monkeypatch.setattr(conftest, "file_costs", lambda: costs)
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.name for i in items] == ["p", "e", "t"]  # 70 s together, collection order within


def test_every_file_on_the_sessions_local_model_goes_to_one_worker():
    """The session's llama.cpp server (tests/conftest.py's ``local_model``) is started once per
    worker that runs a file taking it: about 2 s of CPU to load Gemma 3 270M and 3 s more for its
    first constrained request. The files that take it are one unit, so one worker starts it once."""
    import re

    conftest = _conftest()
    takes = re.compile(r"def \w+\([^)]*\blocal_model\b\s*[,)]")
    files = [p for p in sorted((ROOT / "tests").rglob("test_*.py")) if takes.search(p.read_text(encoding="utf-8"))]
    assert len(files) >= 5, files
    assert {conftest.work_unit(p) for p in files} == {"one_worker:local-model"}, files


def test_xdists_scheduler_hands_out_a_group_as_one_unit(request, monkeypatch):
    pytest.importorskip("xdist")
    conftest = _conftest()
    real = request.config.getvalue
    given = {"dist": "loadfile", "tx": ["2*popen"]}  # as `-n 2 --dist loadfile` sets them
    monkeypatch.setattr(request.config, "getvalue", lambda name: given[name] if name in given else real(name))
    scheduler = conftest.pytest_xdist_make_scheduler(request.config, None)
    assert {scheduler._split_scope(f"tests/{path}::test_x[a::b]") for path in (
        "engine/test_ray_cluster.py", "engine/test_ray_executor.py", "agents/test_sigterm.py")} == {"exclusive:ray"}
    assert scheduler._split_scope("tests/engine/test_seal.py::test_x") == "tests/engine/test_seal.py"
    assert {scheduler._split_scope(f"tests/graphrag/{name}::test_x") for name in (
        "test_nlp_extract.py", "test_nlp_pairs.py")} == {"one_worker:foreign-harvests"}


def test_the_cost_table_names_test_files_by_their_path_from_the_root():
    costs = json.loads((ROOT / "tests" / "file_costs.json").read_text())
    assert costs and all(k.startswith("tests/") and k.endswith(".py") and v >= 0 for k, v in costs.items())
    assert sum(Path(ROOT / k).is_file() for k in costs) >= 0.9 * len(costs)  # a removed file's row is harmless


def test_recorded_costs_sum_each_files_phases_and_keep_the_rows_not_run(tmp_path, monkeypatch):
    conftest = _conftest()
    monkeypatch.setattr(conftest, "file_costs", lambda: {"tests/old/test_gone.py": 9.0, "tests/a/test_a.py": 1.0})
    recorder = conftest._CostRecorder(tmp_path / "costs.json")
    for nodeid, seconds in (("tests/a/test_a.py::t1", 2.0), ("tests/a/test_a.py::t2", 0.25),
                            ("tests/b/test_b.py::C::t", 1.0)):
        recorder.pytest_runtest_logreport(pytest.TestReport(nodeid, ("", 0, ""), {}, "passed", None, "call",
                                                            duration=seconds))
    recorder.pytest_sessionfinish()
    assert json.loads((tmp_path / "costs.json").read_text()) == {
        "tests/a/test_a.py": 2.2, "tests/b/test_b.py": 1.0, "tests/old/test_gone.py": 9.0}


class _Node:
    """What xdist's scheduler reads and calls of a worker (WorkerController)."""

    def __init__(self, worker_id: str) -> None:
        self.gateway = type("Gateway", (), {"id": worker_id})()
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduled(request, monkeypatch, workers: int, collection: list[str]):
    conftest = _conftest()
    real = request.config.getvalue
    given = {"dist": "loadfile", "tx": [f"{workers}*popen"]}
    monkeypatch.setattr(request.config, "getvalue", lambda name: given[name] if name in given else real(name))
    scheduler = conftest.pytest_xdist_make_scheduler(request.config, None)
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    return scheduler, nodes


def _units_sent(scheduler, node: _Node) -> set[str]:
    return {scheduler._split_scope(scheduler.collection[i]) for batch in node.sent for i in batch}


COLLECTION = [f"tests/engine/test_ray_cluster.py::test_{i}" for i in range(3)] + [
    "tests/agents/test_sigterm.py::test_ray_sigterm"] + [f"tests/x/test_{c}.py::test_a" for c in "abcdefgh"]


def test_with_three_workers_the_last_runs_only_the_waiting_units_and_the_others_never(request, monkeypatch):
    """Ray's cluster tests mostly wait (60 s of CPU in 314-677 s of wall): on a lane of their own
    they overlap two CPU-bound workers without making a third (docs/benchmarks.md)."""
    scheduler, (gw0, gw1, gw2) = _scheduled(request, monkeypatch, 3, COLLECTION)
    assert _units_sent(scheduler, gw2) == {"exclusive:ray"}
    assert "exclusive:ray" not in _units_sent(scheduler, gw0) | _units_sent(scheduler, gw1)
    # the lane, its unit done, takes none of the queued files; it idles until the run ends
    for index in [i for batch in gw2.sent for i in batch]:
        scheduler.mark_test_complete(gw2, index)
    assert _units_sent(scheduler, gw2) == {"exclusive:ray"} and not gw2.shutting_down
    # the others drain the queue between them, and the run finishes
    while not scheduler.tests_finished:
        for node in (gw0, gw1):
            pending = [i for batch in node.sent for i in batch
                       if not scheduler.assigned_work[node][scheduler._split_scope(scheduler.collection[i])][
                           scheduler.collection[i]]]
            for index in pending:
                scheduler.mark_test_complete(node, index)
    assert _units_sent(scheduler, gw0) | _units_sent(scheduler, gw1) == {f"tests/x/test_{c}.py" for c in "abcdefgh"}


def test_with_two_workers_there_is_no_lane(request, monkeypatch):
    scheduler, nodes = _scheduled(request, monkeypatch, 2, COLLECTION)
    assert "exclusive:ray" in set().union(*(_units_sent(scheduler, n) for n in nodes))


def test_the_lane_is_the_last_worker_by_number():
    conftest = _conftest()
    assert conftest.waiting_lane(["gw0", "gw1"]) is None
    assert conftest.waiting_lane(["gw2", "gw10", "gw0"]) == "gw10"
    assert conftest.lane_takes(True, "exclusive:ray", True) and not conftest.lane_takes(True, "tests/x.py", True)
    assert not conftest.lane_takes(False, "exclusive:ray", True) and conftest.lane_takes(False, "exclusive:ray", False)


def test_every_waiting_unit_names_a_group_or_a_file_of_this_repository():
    conftest = _conftest()
    for unit in conftest.WAITING_UNITS:
        assert unit == "exclusive:ray" or (ROOT / unit).is_file(), unit
        if unit != "exclusive:ray":
            assert conftest.work_unit(ROOT / unit) == unit, unit  # a file the scheduler hands out whole
