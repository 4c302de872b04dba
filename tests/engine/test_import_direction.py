"""Imports point one way (shared/DESIGN.md): suites -> {environments, attacks, controllers} -> agentbed.

* ``agentbed`` (the engine) imports none of the other roles;
* a world (``environments/NAME``) imports only the engine and its own package;
* an adversary or overseer (``attacks/NAME``, ``controllers/NAME``) imports the engine, its own
  package and the world it targets (``environments/NAME``);
* the composition layer (``suites/``) may import everything, and nothing but entry points and
  tests imports it;
* no two modules import each other, lazily or under ``TYPE_CHECKING`` included.

Every import statement counts, wherever it stands in the file.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROLES = ("agentbed", "environments", "attacks", "controllers", "suites")


def _modules() -> dict[str, Path]:
    found = {}
    for role in ROLES:
        for path in sorted((ROOT / role).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported project module) for every import statement in ``path``."""
    out = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                out.append((node.lineno, name))
    return out


@cache
def _edges() -> dict[str, list[tuple[int, str]]]:
    """Every module's imports. Parsed when a test first asks (1.4 s), not at import: each xdist
    worker collects (imports) every test file, and only the one that runs this file needs them."""
    return {m: _imports(m, p) for m, p in MODULES.items()}


def _allowed(src: str, dst: str) -> bool:
    src_role, dst_role = src.split(".")[0], dst.split(".")[0]
    src_pkg, dst_pkg = src.split(".")[:2], dst.split(".")[:2]
    if dst_role == "agentbed":
        return True
    if src_role == "suites":
        return True
    if dst_role == "suites":
        return False
    if src_role == "environments":
        return src_pkg == dst_pkg
    if src_role in ("attacks", "controllers"):
        return src_pkg == dst_pkg or (dst_role == "environments" and dst_pkg[1:] == src_pkg[1:])
    return False  # the engine imports no role


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_the_walk_sees_the_project():
    assert len(MODULES) > 100
    assert any(dst.startswith("environments.") for dst in (d for _, d in _edges()["suites.contracts.suite"]))


def test_imports_point_one_way():
    wrong = [f"{_where(src, line)} imports {dst}" for src, edges in _edges().items() for line, dst in edges
             if not _allowed(src, dst)]
    assert not wrong, "imports against the layering rules:\n" + "\n".join(sorted(set(wrong)))


def test_no_two_modules_import_each_other():
    edges = _edges()
    targets = {m: {d for _, d in imports} for m, imports in edges.items()}
    mutual = sorted(f"{_where(a, next(ln for ln, d in edges[a] if d == b))} <-> "
                    f"{_where(b, next(ln for ln, d in edges[b] if d == a))}"
                    for a in targets for b in targets[a] if a < b and a in targets.get(b, ()))
    assert not mutual, "modules that import each other:\n" + "\n".join(mutual)


def test_the_rules_catch_what_they_forbid():
    assert not _allowed("environments.cocoder.env", "controllers.cocoder.schedule")
    assert not _allowed("environments.contracts.suite", "attacks.contracts.agents")
    assert not _allowed("controllers.graphrag.training", "attacks.graphrag.scenario")
    assert not _allowed("controllers.graphrag.tdp", "environments.cocoder.depgraph")
    assert not _allowed("agentbed.cli", "suites.contracts.suite")
    assert not _allowed("controllers.oversight.dataset", "suites.oversight.benchmarks")
    assert _allowed("controllers.cocoder.schedule", "environments.cocoder.costmodel")
    assert _allowed("suites.cocoder.team", "controllers.cocoder.schedule")
