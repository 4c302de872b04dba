"""Turning a reference module into a task: blank function bodies, keep what runs at import.

A blanked body is the function's docstring (if any) and ``raise NotImplementedError``. Kept
filled: functions that run while the package is imported or while pytest collects its tests
(decorators, registries, parametrize lists; found by profiling both in the sandbox), a module's
``__getattr__`` and ``__dir__`` (PEP 562: a name looked up on the module, at the test's import,
goes through them), bodies that are ``...`` or fit on one line, and functions nested in other
functions (they go with their parent).
"""

from __future__ import annotations

import ast
import json
import shlex
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from agentbed.errors import UsageError
from environments.cocoder.depgraph import parse
from environments.cocoder.sandboxed import sandbox_exec

STUB = "raise NotImplementedError"

# Imports every module of the package, then lets pytest collect the tests (which imports the test
# modules and evaluates their decorators), under a profiler; prints the functions it entered.
_PROBE = '''
import contextlib, io, json, os, pkgutil, sys, importlib
package, tests = sys.argv[1], sys.argv[2:]
root = os.path.abspath(package)
seen = set()
def prof(frame, event, arg):
    if event == "call":
        code = frame.f_code
        if code.co_filename.startswith(root) and code.co_name != "<module>":  # a module's body is no function
            seen.add((os.path.relpath(code.co_filename, os.getcwd()), code.co_firstlineno))
sys.setprofile(prof)
mod = importlib.import_module(package)
for info in pkgutil.walk_packages(mod.__path__, package + "."):
    if ".tests" in info.name:
        continue
    try:
        importlib.import_module(info.name)
    except Exception:
        pass
if tests:
    import pytest
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests])
sys.setprofile(None)
print(json.dumps(sorted(seen)))
'''


@dataclass(frozen=True)
class BlankedFunction:
    qualname: str
    lineno: int
    first_line: int = 0  # its first decorator's line (a code object's co_firstlineno), else lineno

    def starts(self) -> set[int]:
        return {self.lineno, self.first_line or self.lineno}


def import_time_functions(tree: Path, package: str, tests: str | None = None) -> set[tuple[str, int]]:
    """(file relative to ``tree``, first line) of every function entered while importing the
    package and, given ``tests``, while pytest collects them."""
    probe_dir = tree / "_cocoder_probe"
    probe_dir.mkdir(exist_ok=True)
    (probe_dir / "__init__.py").write_text("", encoding="utf-8")
    (probe_dir / "__main__.py").write_text(_PROBE, encoding="utf-8")
    try:
        outcome = sandbox_exec(tree, ["_cocoder_probe", package, *shlex.split(tests or "")], timeout=120)
    finally:
        for f in probe_dir.iterdir():
            f.unlink()
        probe_dir.rmdir()
    if outcome.status != "ok":
        lines = outcome.stderr.strip().splitlines() or [outcome.status]
        raise UsageError(f"importing {package} in the sandbox failed: {lines[-1][:300]}")
    return {(path, line) for path, line in json.loads(outcome.stdout.strip().splitlines()[-1])}


# module-level functions Python calls while a name is looked up on the module (PEP 562)
MODULE_HOOKS = frozenset({"__getattr__", "__dir__"})


def _blankable(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if not (prefix == "" and child.name in MODULE_HOOKS):
                    found.append((prefix + child.name, child))  # nested functions go with their parent
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return found


def _body_without_docstring(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def blank_source(source: str, keep_lines: AbstractSet[int] = frozenset(), only: set[str] | None = None,
                 filename: str = "<unknown>") -> tuple[str, list[BlankedFunction]]:
    """``source`` with eligible function bodies replaced by the stub, and what was blanked.

    ``keep_lines``: first lines (``def`` or first decorator) of functions that must stay
    filled; ``only``: blank just these qualified names (the simulated coder's failures). Code that
    does not parse is a one-line :class:`UsageError` naming ``filename``:line.
    """
    try:
        tree = parse(source, filename)
    except SyntaxError as exc:
        raise UsageError(f"{filename}:{exc.lineno}: syntax error: {exc.msg}") from exc
    lines = source.splitlines(keepends=True)
    blanked: list[BlankedFunction] = []
    edits: list[tuple[int, int, str]] = []
    for qualname, fn in _blankable(tree):
        body = _body_without_docstring(fn)
        first_lines = {fn.lineno} | {d.lineno for d in fn.decorator_list}
        if not body or first_lines & keep_lines or (only is not None and qualname not in only):
            continue
        # a decorated statement starts at its first decorator
        start = min([body[0].lineno] + [d.lineno for d in getattr(body[0], "decorator_list", [])])
        end = body[-1].end_lineno or body[-1].lineno
        if start == end or start == fn.lineno:
            continue  # ``...`` and one-line bodies stay
        if len(body) == 1 and isinstance(body[0], ast.Raise):
            continue
        indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
        edits.append((start, end, f"{indent}{STUB}\n"))
        blanked.append(BlankedFunction(qualname, fn.lineno, min(first_lines)))
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1:end] = [text]
    skeleton = "".join(lines)
    try:
        parse(skeleton, filename)
    except SyntaxError as exc:  # our bug, named for a report rather than a traceback
        raise UsageError(f"{filename}:{exc.lineno}: blanking made code that does not parse ({exc.msg})") from exc
    return skeleton, sorted(blanked, key=lambda b: b.lineno)
