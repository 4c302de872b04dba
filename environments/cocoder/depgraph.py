"""The static dependency graph of a Python package, from its source with ``ast``.

CoCoder (arXiv 2606.00953, section 3.1) partitions a repository's file dependency graph; the
paper derives it from an LLM-written blueprint, we derive it from the code itself. Nodes are
modules (one per file), an edge ``u -> v`` means v imports u, with:

* ``names``: the symbols of u that v refers to, ``tokens``: their interface size (the
  communication cost c_uv of the spec), ``type_only``: every import of u by v sits under
  ``if TYPE_CHECKING:`` (such an edge orders nothing), ``local``: every import is inside a
  function (kept: it is a real dependency that vanishes once bodies are blanked).
* Node ``work`` = 2 per class + 1 per method + 1 per function + 1 per global (the paper's
  work estimate), ``tokens`` = size of the file, ``interface`` = its signatures.

Relative imports are resolved, and names re-exported through a package ``__init__`` are
followed to the module that defines them so that ``__init__`` does not become a false hub.

What each file defines, imports and uses is read with ``ast`` (``environments.cocoder.facts``):
the re-exports followed through ``name.attr`` uses and the interface sizes need every module's
definitions and call sites, which grimp (``environments.cocoder.importgraph``, the module import
graph) does not give. Each file is parsed as its skeleton, without the function bodies that
import nothing from the package, and ``name.attr`` uses are scanned only in the modules that
import a package module whole (``environments.cocoder.skeleton``): the same graph, for a fraction
of a whole-file parse; ``whole_files=True`` parses every line, as a task's check does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import networkx as nx

from agentbed.errors import UsageError
from environments.cocoder.facts import (
    _STATEMENT_FIELDS,
    MAX_FILE_BYTES,
    ImportRef,
    ModuleFacts,
    _dotted_uses,
    _imports,
    estimate_tokens,
    forget_parsed,
    gc_paused,
    module_interfaces,
    parse,
    parse_module,
)

# the names other modules have always imported from here
__all__ = ["MAX_FILE_BYTES", "build_dependency_graph", "condense", "cycles", "discover_modules",
           "estimate_tokens", "forget_parsed", "module_interfaces", "modules_used_at", "modules_used_by",
           "ordering_graph", "parse", "parse_module"]

SKIPPED_DIRS = {"tests", "test", "__pycache__", "docs", "examples"}


def discover_modules(package_dir: Path) -> dict[str, Path]:
    """Module name -> file for every ``.py`` file of the package (tests and docs excluded)."""
    package_dir = Path(package_dir)
    if not package_dir.is_dir():
        raise UsageError(f"{package_dir}: not a directory")
    root = package_dir.parent
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in SKIPPED_DIRS for part in rel.parts[:-1]) or rel.name.startswith("test_"):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not all(p.isidentifier() for p in parts):
            continue
        found[".".join(parts)] = path
    if not found:
        raise UsageError(f"{package_dir}: no Python modules found (an empty package cannot be a task)")
    return found


def _raw_targets(facts: ModuleFacts, modules: dict[str, ModuleFacts]) -> Iterator[tuple[str, tuple[str, ...], ImportRef]]:
    """(internal target module, names used) for each import, before following re-exports."""
    for ref in facts.imports:
        if ref.names:  # from X import a, b: a submodule X.a is itself the target
            plain = []
            for name in ref.names:
                sub = f"{ref.target}.{name}"
                if sub in modules:
                    yield sub, _attributes_after(facts, name), ref
                elif name != "*":
                    plain.append(name)
                elif ref.target in modules:
                    plain.extend(n for n in modules[ref.target].interfaces if not n.startswith("_"))
            if plain and ref.target in modules:
                yield ref.target, tuple(plain), ref
        elif ref.target in modules:
            yield ref.target, _attributes_after(facts, ref.bound_as), ref


def _attributes_after(facts: ModuleFacts, bound: str) -> tuple[str, ...]:
    """Names used as ``bound.NAME`` in the module: what it takes from a module it imported whole."""
    return facts.names_used_from(bound)


def _follow_reexport(target: str, name: str, modules: dict[str, ModuleFacts], depth: int = 0) -> str:
    """The module that defines ``name`` when ``target`` (an ``__init__``) only re-exports it."""
    facts = modules[target]
    if depth > 10 or not facts.is_init or name in facts.defined:
        return target
    for ref in facts.imports:
        if ref.local or name not in ref.names:
            continue
        sub = f"{ref.target}.{name}"
        if sub in modules:
            return sub
        if ref.target in modules and ref.target != target:
            return _follow_reexport(ref.target, name, modules, depth + 1)
    return target


def build_dependency_graph(package_dir: str | Path, *, collapse_reexports: bool = True,
                           include_local: bool = True, whole_files: bool = False) -> nx.DiGraph:
    """The module dependency graph of the package in ``package_dir`` (see the module docstring).

    ``include_local=False`` drops function-local imports: the graph an agent sees from a
    skeleton whose bodies are blanked. ``whole_files=True`` parses every function body too, so
    that a syntax error anywhere is refused (the graph is the same).
    """
    paths = discover_modules(Path(package_dir))
    with gc_paused():
        modules = {name: parse_module(name, path, whole=whole_files) for name, path in paths.items()}
    graph = nx.DiGraph(package=Path(package_dir).name)
    for name, facts in modules.items():
        graph.add_node(name, path=str(facts.path), is_init=facts.is_init, work=facts.work,
                       tokens=estimate_tokens(facts.source),
                       api_tokens=sum(estimate_tokens(t) for t in facts.interfaces.values()),
                       interface="\n\n".join(facts.interfaces.values()))
    for name, facts in modules.items():
        for dep, dep_names, ref in _targets(facts, modules, collapse_reexports):
            if (include_local or not ref.local) and dep != name:
                _add_ref(graph, modules, dep, name, dep_names, ref)
    return graph


def _targets(facts: ModuleFacts, modules: dict[str, ModuleFacts], collapse_reexports: bool = True
             ) -> Iterator[tuple[str, tuple[str, ...], ImportRef]]:
    """(internal module, names used) for each import; with ``collapse_reexports`` a name imported
    from an ``__init__`` that only re-exports it counts against the module that defines it."""
    for target, names, ref in _raw_targets(facts, modules):
        if not (collapse_reexports and names and modules[target].is_init):
            yield target, names, ref
            continue
        per_target: dict[str, tuple[str, ...]] = {}
        for n in names:
            real = _follow_reexport(target, n, modules)
            per_target[real] = per_target.get(real, ()) + (n,)
        for dep, dep_names in per_target.items():
            yield dep, dep_names, ref


def modules_used_by(paths: Iterable[str | Path], package_dir: str | Path) -> set[str]:
    """The modules of the package in ``package_dir`` that files outside it (tests) import, names
    re-exported through ``__init__`` followed to the modules that define them: where a test that
    fails on an assertion in its own file points."""
    modules = {name: parse_module(name, p) for name, p in discover_modules(Path(package_dir)).items()}
    return {dep for path in paths for dep, _, _ in _targets(parse_module("__outside__", Path(path), whole=True), modules)}


def _statement_at(body: list[ast.stmt], line: int) -> ast.stmt | None:
    """The innermost statement of ``body`` (and the bodies inside it) that spans ``line``."""
    for stmt in body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            inner = [c for name in _STATEMENT_FIELDS for c in getattr(stmt, name, ()) if isinstance(c, ast.stmt)]
            handlers = [c for h in getattr(stmt, "handlers", ()) for c in h.body]
            return _statement_at(inner + handlers, line) or stmt
    return None


def modules_used_at(source: str, module: str, line: int, package_dir: str | Path) -> set[str]:
    """The package's modules that line ``line`` of ``module`` (its text ``source``) takes names
    from, re-exports followed: where an error that surfaces there (an ``ImportError`` or an
    ``AttributeError`` on a name, a call into code that is not traced) comes from. toolz's
    ``curried/__init__.py`` line ``merge_with = toolz.curry(toolz.merge_with)`` uses
    ``toolz.merge_with``, re-exported from ``toolz.dicttoolz``: that module, not the importer."""
    modules = {name: parse_module(name, p) for name, p in discover_modules(Path(package_dir)).items()}
    try:
        tree = parse(source)
    except SyntaxError:
        return set()
    stmt = _statement_at(tree.body, line)
    if stmt is None:
        return set()
    is_init = modules[module].is_init if module in modules else False
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        imports = list(_imports(ast.Module(body=[stmt], type_ignores=[]), module, is_init))
    else:
        named = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        imports = []
        for ref in _imports(tree, module, is_init):
            if ref.names:
                names = tuple(n for n in ref.names if n in named)
                if names:
                    imports.append(ImportRef(ref.target, names, ref.local, ref.type_only, ref.bound_as))
            elif (ref.bound_as or ref.target).split(".")[0] in named:
                imports.append(ref)
    facts = ModuleFacts(module, Path(module), is_init, "", imports=imports, attribute_uses=_dotted_uses(stmt))
    found = {_through_star(dep, name, modules) for dep, names, _ in _targets(facts, modules) for name in names or ("",)}
    return found - {module}


def _through_star(target: str, name: str, modules: dict[str, ModuleFacts], depth: int = 0) -> str:
    """The module that defines ``name`` when the ``__init__`` ``target`` re-exports it with
    ``from .m import *`` (toolz's ``__init__`` re-exports everything that way)."""
    facts = modules[target]
    if depth > 10 or not name or not facts.is_init or name in facts.defined:
        return target
    for ref in facts.imports:
        if "*" in ref.names and ref.target in modules and ref.target != target:
            inner = modules[ref.target]
            if name in inner.defined or inner.is_init:
                found = _through_star(ref.target, name, modules, depth + 1)
                if name in modules[found].defined:
                    return found
    return target


def _add_ref(graph: nx.DiGraph, modules: dict[str, ModuleFacts], dep: str, user: str,
             names: tuple[str, ...], ref: ImportRef) -> None:
    if graph.has_edge(dep, user):
        data = graph.edges[dep, user]
        data["names"] = sorted(set(data["names"]) | set(names))
        data["type_only"] = data["type_only"] and ref.type_only
        data["local"] = data["local"] and ref.local
    else:
        graph.add_edge(dep, user, names=sorted(set(names)), type_only=ref.type_only, local=ref.local)
        data = graph.edges[dep, user]
    api = modules[dep].interfaces
    used = [api[n] for n in data["names"] if n in api]
    data["tokens"] = sum(estimate_tokens(t) for t in used) if used else graph.nodes[dep]["api_tokens"]
    data["ordering"] = not data["type_only"]


def ordering_graph(graph: nx.DiGraph) -> nx.DiGraph:
    """Only the edges that order work (TYPE_CHECKING imports do not)."""
    keep = [(u, v) for u, v, d in graph.edges(data=True) if d.get("ordering", True)]
    out = nx.DiGraph()
    out.add_nodes_from(graph.nodes(data=True))
    out.add_edges_from((u, v, graph.edges[u, v]) for u, v in keep)
    return out


def condense(graph: nx.DiGraph) -> tuple[nx.DiGraph, dict[str, int]]:
    """The DAG of strongly connected components of the ordering graph, and module -> component.

    Import cycles are real (flask has a 19-module one); one component is written as one unit.
    Component nodes carry ``members`` (sorted) and summed ``work``/``tokens``.
    """
    order = ordering_graph(graph)
    dag = nx.condensation(order)
    mapping: dict[str, int] = dag.graph["mapping"]
    for _, data in dag.nodes(data=True):
        members = sorted(data["members"])
        data["members"] = members
        data["work"] = sum(graph.nodes[m]["work"] for m in members)
        data["tokens"] = sum(graph.nodes[m]["tokens"] for m in members)
    for u, v in dag.edges:
        dag.edges[u, v]["tokens"] = 0
    for a, b, data in order.edges(data=True):  # one pass over module edges
        if mapping[a] != mapping[b]:
            dag.edges[mapping[a], mapping[b]]["tokens"] += data.get("tokens", 0)
    return dag, mapping


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Import cycles (ordering edges only) of more than one module, largest first."""
    comps = [sorted(c) for c in nx.strongly_connected_components(ordering_graph(graph)) if len(c) > 1]
    return sorted(comps, key=lambda c: (-len(c), c))
