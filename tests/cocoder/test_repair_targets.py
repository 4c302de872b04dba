"""The leader's repair requests: which units a failing test points at."""

from agentbed.testing import require
from environments.cocoder import sandboxed
from environments.cocoder.tasks import load_task, task_ids
from suites.cocoder.team import TeamConfig, _repair_targets, plan_team


def _report(*crash_lines: tuple[str, int]) -> sandboxed.TestReport:
    return sandboxed.TestReport(10, 5, 0, 0, "nonzero", "local", "", tuple(sorted({p for p, _ in crash_lines})), crash_lines)


def _tinydb():
    require("tinydb" in task_ids(), "the fetched tinydb repository", "run scripts/fetch-repos tinydb")
    task = load_task("tinydb")
    graph, plan, _ = plan_team(task, TeamConfig(granularity="file"), 0)
    return task, graph, plan


def test_a_crash_in_a_module_points_at_that_module():
    task, graph, plan = _tinydb()
    assert _repair_targets(task, plan, graph, _report(("tinydb/utils.py", 20)), {}) == ["tinydb.utils"]


def test_an_assertion_in_a_test_file_points_at_the_modules_it_imports():
    """A wrong value fails in the test's own file: the leader asks every module the test imports
    (re-exports followed: ``from tinydb import TinyDB`` is tinydb.database) to look again."""
    task, graph, plan = _tinydb()
    targets = _repair_targets(task, plan, graph, _report(("tests/test_tinydb.py", 30)), {})
    assert {"tinydb.database", "tinydb.queries", "tinydb.storages", "tinydb.middlewares"} <= set(targets)
    assert "tinydb" not in targets and "tinydb.utils" not in targets


def test_a_location_outside_the_tree_points_nowhere():
    task, graph, plan = _tinydb()
    assert _repair_targets(task, plan, graph, _report(("/usr/lib/python3.11/json/decoder.py", 3)), {}) == []
