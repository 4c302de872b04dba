"""Which of the package's functions each reference test reaches: import tracing in the sandbox.

A pass rate is only evidence about code some test runs: a blanked function no test calls passes
whatever an agent writes (toolz, with its tests found in the wrong folder, scored 1.000 with
three functions broken). So the reference run itself (the one that checks the reference passes
its tests, once per task) runs in the sandbox under
a profiler (``sys.setprofile``, call events only: the sandbox has no coverage.py) that records,
per test (setup, call and teardown), the package functions entered. A function no test enters is
left as the reference wrote it (not blanked) and named in the task's notes, and so is a module
none of whose functions any test reaches.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from environments.cocoder.outcomes import strip_ansi
from environments.cocoder.sandboxed import (
    DEFAULT_TIMEOUT,
    HELPER_PREFIX,
    TestReport,
    pytest_argv,
    report_of,
    sandbox_exec,
)

PROBE = HELPER_PREFIX + "reach"
MARK = "_COCODER_REACH "
_PLUGIN = '''
import json, os, sys, threading

with open(os.path.join(os.path.dirname(__file__), "package.json"), encoding="utf-8") as _f:
    _ROOT = os.path.join(os.getcwd(), json.load(_f))
_ROOT += os.sep
_current = []
_functions = set()
_tests = {}
_inside = {}
_relative = {}  # (file, working directory) -> os.path.relpath(file): computing it was most of the profiler's cost


def _profile(frame, event, arg):
    if event != "call" or not _current:
        return
    code = frame.f_code
    if code.co_name == "<module>":  # an import during a test: the module's body, no function
        return
    name = code.co_filename
    inside = _inside.get(name)
    if inside is None:
        inside = _inside[name] = name.startswith(_ROOT)
    if inside:
        key = (name, os.getcwd())  # a test may change directory
        rel = _relative.get(key)
        if rel is None:
            rel = _relative[key] = os.path.relpath(name)
        _functions.add((rel, code.co_firstlineno))
        _tests[_current[0]].add(rel)


def pytest_runtest_logstart(nodeid, location):  # plain hooks, not a wrapper: any pytest since 3
    _current[:] = [nodeid]
    _tests.setdefault(nodeid, set())
    threading.setprofile(_profile)
    sys.setprofile(_profile)


def pytest_runtest_logfinish(nodeid, location):
    sys.setprofile(None)
    threading.setprofile(None)
    _current[:] = []


def pytest_unconfigure(config):
    found = {"functions": sorted(_functions), "tests": {n: sorted(m) for n, m in sorted(_tests.items())}}
    sys.__stdout__.write("\\n''' + MARK + '''" + json.dumps(found) + "\\n")
    sys.__stdout__.flush()
'''


@dataclass(frozen=True)
class Reach:
    functions: frozenset[tuple[str, int]]  # (file relative to the tree, first line) entered by some test
    tests: dict[str, tuple[str, ...]]  # test id -> the package files whose functions it entered

    def to_json(self) -> dict:
        return {"functions": sorted(self.functions), "tests": {k: list(v) for k, v in self.tests.items()}}

    @classmethod
    def from_json(cls, data: dict) -> Reach:
        return cls(frozenset((p, int(n)) for p, n in data["functions"]),
                   {k: tuple(v) for k, v in data["tests"].items()})

    def tests_reaching(self, relpath: str) -> int:
        return sum(relpath in files for files in self.tests.values())


def traced_run(tree: Path, package: str, tests: str, *, timeout: float = DEFAULT_TIMEOUT,
               output: Path | None = None) -> tuple[TestReport, Reach | None]:
    """Run the tests of ``tree`` in the sandbox under the profiler plugin: pytest's report (as
    :func:`environments.cocoder.sandboxed.run_tests` gives it) and what each test reached (None
    when the run ended before the plugin could say, e.g. a timeout); pytest's whole output goes to
    ``output`` when given."""
    probe = tree / PROBE
    probe.mkdir(exist_ok=True)
    (probe / "__init__.py").write_text(_PLUGIN, encoding="utf-8")
    (probe / "package.json").write_text(json.dumps(package), encoding="utf-8")
    try:
        outcome = sandbox_exec(tree, pytest_argv(tests, "-p", PROBE), timeout=timeout)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    lines = outcome.stdout.splitlines()
    if output is not None:  # pytest's whole output, for a refusal to point at (the report keeps a tail)
        stdout = "\n".join(ln for ln in lines if not ln.startswith(MARK))
        output.write_text(strip_ansi(f"{stdout}\n--- stderr ---\n{outcome.stderr}"), encoding="utf-8")
    marks = [ln for ln in lines if ln.startswith(MARK)]
    report = report_of(dataclasses.replace(outcome, stdout="\n".join(ln for ln in lines if not ln.startswith(MARK))))
    return report, Reach.from_json(json.loads(marks[-1][len(MARK):])) if marks else None
