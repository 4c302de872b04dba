"""CoCoder's module import graph, built with grimp (its Rust scanner parses every file once).

grimp answers which module imports which, with line numbers; it does not give what CoCoder's
dependency graph needs beyond that: the names each import takes, the definitions those names
resolve to through an ``__init__``'s re-exports, interface sizes and work estimates. Those stay
with our own extraction (``environments.cocoder.depgraph``), which, for identical results,
still reads every module's definitions and call sites with ``ast``.

The packages are given by directory, not by name: grimp's own ``build_graph`` finds a package
through ``importlib`` and ``sys.path``, so a checkout named like a package already imported
(``networkx`` in this process) would be scanned from the wrong place, and editing ``sys.path``
races with the threads the demo runs. So the directories go to grimp's module finder and scanner
(grimp==3.20 is pinned; tests/cocoder/test_importgraph.py covers the calls).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

import networkx as nx
from grimp.application.config import settings
from grimp.application.scanning import scan_imports

from agentbed.errors import UsageError
from environments.cocoder.depgraph import discover_modules

_GRIMP_LOCK = threading.Lock()  # grimp's module finder keeps the file system it is handed


def scan(package_dirs: Iterable[str | Path]) -> dict[str, dict[str, list[int]]]:
    """Importer -> {imported module -> line numbers}: grimp's direct imports between the modules
    of the packages in ``package_dirs`` (each a top-level package's folder: a regular package,
    a namespace package, or one under ``src/``; imports across them count as internal)."""
    dirs = [Path(d).resolve() for d in package_dirs]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"{d}: not a directory")
    with _GRIMP_LOCK:
        import grimp.main  # noqa: F401  grimp configures its settings (finder, file system) on import

        file_system = settings.FILE_SYSTEM
        found = {settings.MODULE_FINDER.find_package(package_name=d.name, package_directory=str(d),
                                                     file_system=file_system) for d in dirs}
        scanned = scan_imports([f for package in found for f in package.module_files], found_packages=found,
                               include_external_packages=False, exclude_type_checking_imports=False)
    imports: dict[str, dict[str, list[int]]] = {}
    for module_file, direct in scanned.items():
        lines: dict[str, list[int]] = imports.setdefault(module_file.module.name, {})
        for imp in direct:
            lines.setdefault(imp.imported.name, []).append(imp.line_number)
    return imports


def import_graph(*package_dirs: str | Path) -> nx.DiGraph:
    """The import graph of the packages in ``package_dirs``: a node per module CoCoder works on
    (``discover_modules``: tests, docs and examples left out), an edge ``u -> v`` when v imports
    u (the direction of ``build_dependency_graph``), with the import's ``lines`` in v."""
    if not package_dirs:
        raise UsageError("import_graph: no package folder given")
    graph = nx.DiGraph(packages=[Path(d).name for d in package_dirs])
    for d in package_dirs:
        for name, path in discover_modules(Path(d)).items():
            graph.add_node(name, path=str(path), is_init=path.name == "__init__.py")
    for importer, imported in scan(package_dirs).items():
        if importer not in graph:
            continue
        for module, lines in imported.items():
            if module in graph and module != importer:
                graph.add_edge(module, importer, lines=sorted(lines))
    return graph
