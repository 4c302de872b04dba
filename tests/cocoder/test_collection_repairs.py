"""Failures at import and collection time: located by file:line, repaired by the leader."""

import json
from collections.abc import Sequence

from package_files import write_package

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action
from environments.cocoder.blanking import blank_source, import_time_functions
from environments.cocoder.defs import source_view
from environments.cocoder.sandboxed import crash_lines, run_tests
from environments.cocoder.tasks import load_task
from suites.cocoder.planning import work_graph
from suites.cocoder.team import TeamConfig, run_team

TASK = "synth-12"
BROKEN_AT_IMPORT = "\n_broken = undefined_name_at_import  # the module fails while it is imported\n"

SHORT_REPORT = """\
==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_a.py _______________________
/usr/lib/python3/dist-packages/_pytest/python.py:493: in importtestmodule
    mod = import_path(self.path, mode=importmode, root=self.config.rootpath)
tests/test_a.py:1: in <module>
    import pkg
pkg/__init__.py:1: in <module>
    from pkg.b import f
pkg/b.py:3: in <module>
    X = undefined_name
E   NameError: name 'undefined_name' is not defined
_______________________ ERROR collecting tests/test_b.py _______________________
tests/test_b.py:1: in <module>
    import pkg
E     File "/sandbox/work/pkg/c.py", line 7
E       def g(:
E   SyntaxError: invalid syntax
=================================== FAILURES ===================================
____________________________________ test_c ____________________________________
tests/test_c.py:2: in test_c
    json.loads("{")
/usr/lib/python3.11/json/decoder.py:353: in raw_decode
    obj, end = self.scan_once(s, idx)
E   json.decoder.JSONDecodeError: Expecting property name
___________________________________ test_d _____________________________________
pkg/mod.py:12: in f
    raise NotImplementedError
E   NotImplementedError
=========================== short test summary info ============================
1 failed, 2 errors in 0.78s
"""


def test_crash_lines_name_the_line_where_an_import_or_a_test_broke():
    """The last frame inside the tree: the module line that broke the import, the line a
    SyntaxError points at, the test's own line when the crash is in a library below it."""
    assert crash_lines(SHORT_REPORT) == (("pkg/b.py", 3), ("pkg/c.py", 7), ("pkg/mod.py", 12),
                                         ("tests/test_c.py", 2))


def test_a_collection_error_is_located_by_the_real_pytest(sandbox, tmp_path):
    write_package(tmp_path, {
        "pkg/__init__.py": "from pkg.b import f\n",
        "pkg/b.py": "def f():\n    return 1\nX = undefined_name\n",
        "tests/test_a.py": "import pkg\n\ndef test_a():\n    assert pkg.f() == 1\n",
        "tests/test_b.py": "def test_b():\n    assert True\n",
    })
    report = run_tests(tmp_path, "tests")
    assert ("pkg/b.py", 3) in report.crash_lines
    assert report.passed == 1 and report.errors == 1  # the other test file still ran


class _BreaksAtImportFirst(Agent):
    """Test double of a coder: writes the reference, except that its first version of ``target``
    fails while it is imported; asked to repair, it writes the reference."""

    name = "breaks-at-import"

    def __init__(self, target: str) -> None:
        self.target, self.repo = target, ""

    def reset(self, *, seed: int, task=None) -> None:
        self.repo = task.params["repo"]

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        obs = json.loads(observation)
        if obs.get("done") or "module" not in obs:
            return Action(make_action("write_file", module="", source=""))
        source = load_task(self.repo).modules[obs["module"]].reference
        if obs.get("definitions") is not None:
            source = source_view(source, obs["definitions"], obs.get("omit"))
        if obs["module"] == self.target and not obs.get("repair_request"):
            source += BROKEN_AT_IMPORT
        return Action(make_action("write_file", module=obs["module"], source=source))


def test_the_leader_repairs_a_module_that_breaks_at_import(sandbox, tmp_path):
    task = load_task(TASK)
    target = sorted(m for m in work_graph(task) if m != task.package)[0]
    config = TeamConfig(strategy="sequential")
    result = run_team(TASK, config, 0, tmp_path, agent_factory=lambda worker: _BreaksAtImportFirst(target))
    m = result.record.metrics
    assert m["pass_rate_before_repair"] < 1.0  # the module's import failure broke tests
    assert result.manifest["repair_rounds"][0]["modules"] == [target]
    assert m["pass_rate"] == 1.0


LAZY_PACKAGE = {
    "lazy/__init__.py": (
        '"""A package that resolves some names lazily (PEP 562)."""\n'
        "import importlib\n\n\n"
        "def __getattr__(name):\n"
        "    if name == 'Thing':\n"
        "        return importlib.import_module('lazy.things').Thing\n"
        "    raise AttributeError(name)\n"),
    "lazy/things.py": (
        "class Thing:\n"
        "    def double(self, x):\n"
        "        y = x * 2\n"
        "        return y\n\n\n"
        "def cases():\n"
        "    values = [1, 2]\n"
        "    return values\n"),
    "tests/test_things.py": (
        "import pytest\n\n"
        "from lazy import Thing\n"
        "from lazy.things import cases\n\n\n"
        "@pytest.mark.parametrize('x', cases())\n"
        "def test_double(x):\n"
        "    assert Thing().double(x) == 2 * x\n"),
}


def test_a_module_getattr_is_never_blanked():
    source = LAZY_PACKAGE["lazy/__init__.py"] + "\n\nclass C:\n    def __getattr__(self, name):\n        x = 1\n" \
                                                "        return x\n"
    _, blanked = blank_source(source)
    assert [b.qualname for b in blanked] == ["C.__getattr__"]  # a method is an ordinary function


def test_functions_pytest_runs_while_collecting_stay_filled(sandbox, tmp_path):
    write_package(tmp_path, LAZY_PACKAGE)
    kept = import_time_functions(tmp_path, "lazy", "tests")
    assert ("lazy/things.py", 7) in kept  # cases() builds the parametrize list at collection
    assert ("lazy/things.py", 2) not in kept  # Thing.double runs only inside the test
