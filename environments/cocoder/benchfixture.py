"""Whether a repository's tests use pytest-benchmark's ``benchmark`` fixture.

pytest-benchmark is otherwise tooling (timing, not testing) and left out of the sandbox; a test
that takes the ``benchmark`` argument errors without it (``fixture 'benchmark' not found``), so
where tests take it and the repository does not define a fixture of that name itself, the plugin
is a test requirement like any other (:func:`environments.cocoder.userrepo.sandbox_requirements`).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from environments.cocoder.facts import parse

PLUGIN = "pytest-benchmark"
FIXTURE = "benchmark"
_SKIP = {".git", ".tox", ".nox", ".venv", "venv", "build", "dist", "node_modules", "__pycache__"}


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    try:
        tree = parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # a file that does not parse is refused elsewhere, with its line
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def uses_benchmark_fixture(root: Path) -> bool:
    """A test function or fixture of a test file or conftest below ``root`` takes ``benchmark``,
    and no function there named ``benchmark`` (the repository's own fixture) provides it."""
    uses = defines = False
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        for name in sorted(files):
            if not (name == "conftest.py" or (name.endswith(".py") and (name.startswith("test") or
                                                                           name.endswith("_test.py")))):
                continue
            for func in _functions(Path(folder) / name):
                defines |= func.name == FIXTURE
                uses |= any(a.arg == FIXTURE for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs])
    return uses and not defines
