"""The leader's repair requests: which units the failing tests point at.

Per failing test (pytest's ``--tb=short`` report, :func:`environments.cocoder.sandboxed.crash_lines`)
the last line inside the tree where it crashed; from there, back to the unit whose text caused it:
- a line inside a blanked definition of a written module: that unit (in a split module, the piece
  whose definitions hold it; every piece when none does);
- a line of a package module outside its blanked bodies (module-level code run at import, a
  function left as written): the error surfaced there but was made where the names on that line
  come from (toolz's ``curried/__init__.py`` re-binding ``toolz.merge_with`` when the module that
  defines it broke), so the units of those modules, and the module's own unit if it has one;
- a line in a test file (an assertion on a wrong value): every unit of the modules the test file
  imports, re-exports followed.
A test the time limit cut off (it was running when pytest was killed: it hung or was too slow)
has no crash line; its file points as a crash in it would: a test file at the modules it imports,
a package module (a doctest) at its own units. A text doctest (``--doctest-glob``: README.rst)
that fails points at the modules its examples import.
"""

from __future__ import annotations

import doctest
import tempfile
from pathlib import Path

import networkx as nx

from controllers.cocoder.plan import Plan
from environments.cocoder.defs import definition_at
from environments.cocoder.depgraph import modules_used_at, modules_used_by
from environments.cocoder.facts import parse
from environments.cocoder.sandboxed import TestReport
from environments.cocoder.tasks import RepoTask


def repair_targets(task: RepoTask, plan: Plan, graph: nx.DiGraph, report: TestReport,
                   final: dict[str, str]) -> list[str]:
    """The units to ask for a repair (see the module docstring), sorted."""
    lines: dict[str, list[int]] = {}
    for path, line in report.crash_lines:
        lines.setdefault(path, []).append(line)
    by_file = {mt.relpath: mt for mt in task.modules.values()}
    units: dict[str, list[str]] = {}
    for node in graph:
        units.setdefault(plan.module_of(node), []).append(node)
    targets: set[str] = set()
    running = {path for _, path in report.running}
    outside = sorted((lines.keys() | running) - by_file.keys())
    tests = [task.tree / p for p in outside if p.endswith(".py") and (task.tree / p).is_file()]
    with tempfile.TemporaryDirectory(prefix="cocoder-doctest-") as tmp:
        tests += _examples_as_python([task.tree / p for p in outside if not p.endswith(".py")], Path(tmp))
        asserted = modules_used_by(tests, task.tree / task.package) if tests else set()
    for path in sorted(running & by_file.keys()):
        targets |= set(units.get(by_file[path].module, []))
    for path in sorted(lines.keys() & by_file.keys()):
        mt = by_file[path]
        source = final.get(mt.module, mt.skeleton)
        for line in lines[path]:
            if definition_at(source, line, mt.blanked) is not None:  # inside a body its agent wrote
                targets |= _units_at(plan, units.get(mt.module, []), source, line)
                continue
            asserted |= modules_used_at(source, mt.module, line, task.tree / task.package)
            targets |= set(units.get(mt.module, []))  # its own module-level code may be what broke
    targets |= {node for module in asserted for node in units.get(module, [])}
    return sorted(targets)


def _examples_as_python(texts: list[Path], folder: Path) -> list[Path]:
    """Each text doctest's examples (``>>>`` lines) as one Python file in ``folder``: what they import."""
    out = []
    for i, path in enumerate(texts):
        if not path.is_file():
            continue
        try:
            examples = doctest.DocTestParser().get_examples(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError:  # an example the parser refuses (bad indentation): pytest reported it failing
            continue
        out.append(folder / f"doctest{i}.py")
        out[-1].write_text("".join(e.source for e in examples if _parses(e.source)), encoding="utf-8")
    return out


def _parses(source: str) -> bool:
    try:
        parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _units_at(plan: Plan, nodes: list[str], source: str, line: int) -> set[str]:
    """The unit of a module whose definitions hold ``line``: the module's one unit, or in a split
    module the piece that owns the definition there (every piece when none does)."""
    pieces = [n for n in nodes if n in plan.pieces and plan.pieces[n].definitions]
    if not pieces:
        return set(nodes)
    owner = {q: n for n in pieces for q in plan.pieces[n].definitions}
    found = definition_at(source, line, owner)
    return {owner[found]} if found else set(pieces)


def test_facts(report: TestReport) -> dict[str, object]:
    """What a repair round was asked on: the test run's status (a timeout is one), counts and the
    tests a kill cut off."""
    return {"status": report.status, "passed": report.passed, "failed": report.failed, "errors": report.errors,
            "finished": report.finished, "running": [test for test, _ in report.running]}


def repair_request(report: TestReport) -> str:
    """What the leader tells an agent whose unit a failing or cut-off test points at."""
    failing = f"{report.failed + report.errors} tests fail; failing tests crash in this module."
    if report.status == "timeout":
        cut = ", ".join(test for test, _ in report.running) or "no test"
        failing = (f"The test run hit its time limit after {report.finished} tests, while running {cut}; "
                   f"{report.failed + report.errors} tests fail. The failing or cut-off tests point at this module.")
    return f"{failing} Rewrite your part of it completely."


def no_target_reason(report: TestReport) -> str:
    """Why failing tests got no repair request, for the manifest and the console (never silent)."""
    if report.status == "timeout" and not report.failed + report.errors:
        cut = ", ".join(test for test, _ in report.running) or "no test"
        return (f"the test run timed out after {report.finished} tests with no failure reported, while running "
                f"{cut}: nothing written by the team to point a repair at")
    if not report.failed + report.errors:
        return f"pytest reported no failing test (status {report.status}) but fewer passed than the reference"
    return (f"{report.failed + report.errors} failing tests crashed outside the code the team wrote "
            "(no traceback frame in a written module or a test file that imports one)")
