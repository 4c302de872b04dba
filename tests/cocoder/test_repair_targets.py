"""The leader's repair requests: which units a failing test points at."""

from agentbed.testing import require
from environments.cocoder import sandboxed
from environments.cocoder.tasks import load_task, task_ids
from suites.cocoder.repairs import repair_targets as _repair_targets
from suites.cocoder.team import TeamConfig, plan_team


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


# toolz's layout, in small: the package re-exports its modules with ``from .m import *`` and
# ``curried/__init__.py`` re-binds them at import (``assoc = toolz.curry(toolz.assoc)``)
TOOLZ_LIKE = {
    "tz/__init__.py": "from .functoolz import *\nfrom .dicttoolz import *\nfrom . import curried\n",
    "tz/functoolz.py": ("__all__ = ['curry']\n\n\nclass curry:\n    def __init__(self, func):\n"
                        "        self.func = func\n        self.__name__ = func.__name__\n\n"
                        "    def __call__(self, *args):\n        result = self.func(*args)\n        return result\n"),
    "tz/dicttoolz.py": ("__all__ = ['assoc', 'merge']\n\n\ndef assoc(d, key, value):\n    d = dict(d)\n"
                        "    d[key] = value\n    return d\n\n\ndef merge(*dicts):\n    out = {}\n"
                        "    for d in dicts:\n        out.update(d)\n    return out\n"),
    "tz/curried/__init__.py": "import tz\n\nassoc = tz.curry(tz.assoc)\nmerge = tz.curry(tz.merge)\n",
    "tests/test_curried.py": ("from tz.curried import assoc, merge\n\n\ndef test_assoc():\n"
                              "    assert assoc({}, 'a', 1) == {'a': 1}\n\n\ndef test_merge():\n"
                              "    assert merge({'a': 1}, {'b': 2}) == {'a': 1, 'b': 2}\n"),
}


def test_a_crash_that_surfaces_in_an_importer_points_at_the_module_that_broke(sandbox, tmp_path):
    """The toolz case: dicttoolz's rewrite leaves ``assoc`` out of ``__all__``, so the star import
    in ``tz/__init__`` no longer binds it and every test fails importing ``tz.curried``, at its
    line 3, a module with nothing blanked. The leader walks that line's names (``tz.curry``,
    ``tz.assoc``) through the star re-exports to the modules that define them, and asks their agents
    (dicttoolz's among them) instead of nobody."""
    from package_files import write_package

    from environments.cocoder.tasks import assemble
    from environments.cocoder.userrepo import repo_task_id

    write_package(tmp_path / "repo", TOOLZ_LIKE)
    task = load_task(repo_task_id(tmp_path / "repo"))
    graph, plan, _ = plan_team(task, TeamConfig(granularity="file"), 0)
    assert "tz.curried" not in graph and "tz.dicttoolz" in graph
    broken = {"tz.dicttoolz": task.modules["tz.dicttoolz"].reference.replace("['assoc', 'merge']", "['merge']")}
    report = sandboxed.run_tests(assemble(task, broken, tmp_path / "final"), task.tests)
    assert report.passed == 0 and ("tz/curried/__init__.py", 3) in report.crash_lines
    assert _repair_targets(task, plan, graph, report, broken) == ["tz.dicttoolz", "tz.functoolz"]


# three modules, each with its test file; the files run in the order b, c, a
TIMED = {
    "pk/__init__.py": "",
    "pk/a.py": "def slow():\n    value = 1\n    return value\n",
    "pk/b.py": "def f():\n    value = 2\n    return value\n",
    "pk/c.py": "def g():\n    value = 3\n    return value\n",
    "tests/test_1_b.py": "from pk.b import f\n\n\ndef test_f():\n    assert f() == 2\n",
    "tests/test_2_c.py": "from pk.c import g\n\n\ndef test_g():\n    assert g() == 3\n",
    "tests/test_3_a.py": "from pk.a import slow\n\n\ndef test_slow():\n    assert slow() == 1\n",
}


def test_a_test_the_time_limit_cut_off_points_at_the_modules_it_uses(sandbox, tmp_path):
    """A team's ``b`` returns a wrong value and its ``a`` never returns: pytest is killed while
    ``test_slow`` runs. The run is a timeout with the two tests it finished; the failure points at
    ``pk.b`` and the cut-off test at ``pk.a`` (before, the test running at the kill pointed nowhere
    and ``pk.a`` was never asked to repair); ``pk.c`` passed and is left alone."""
    from package_files import write_package

    from environments.cocoder.tasks import assemble
    from environments.cocoder.userrepo import repo_task_id
    from suites.cocoder.repairs import repair_request

    write_package(tmp_path / "repo", TIMED)
    task = load_task(repo_task_id(tmp_path / "repo"))
    graph, plan, _ = plan_team(task, TeamConfig(granularity="file"), 0)
    broken = {"pk.a": "import time\n\n\ndef slow():\n    time.sleep(600)\n", "pk.b": "def f():\n    return 5\n",
              "pk.c": task.modules["pk.c"].reference}
    report = sandboxed.run_tests(assemble(task, broken, tmp_path / "final"), task.tests, timeout=15)
    assert report.status == "timeout" and (report.passed, report.failed, report.finished) == (1, 1, 2), report.tail
    assert report.running == (("tests/test_3_a.py::test_slow", "tests/test_3_a.py"),)
    assert _repair_targets(task, plan, graph, report, broken) == ["pk.a", "pk.b"]
    assert "time limit after 2 tests, while running tests/test_3_a.py::test_slow" in repair_request(report)
