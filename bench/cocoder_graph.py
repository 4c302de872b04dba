"""Benchmark: CoCoder's graphs beside grimp's on installed networkx and ray, in one run.

Per package (the copy installed in this virtualenv; tests, docs and examples left out of ours):
- grimp: ``grimp.build_graph`` without its cache (every file scanned);
- import graph: ``environments.cocoder.importgraph.import_graph`` (grimp's scanner, by folder);
- ast alone: Python's parser over the same modules, nothing else (the floor of any ``ast`` build);
- dependency graph, cold: ``build_dependency_graph`` with nothing parsed yet (definitions and
  call sites, re-exports followed: what CoCoder plans on), each module read as its skeleton;
- whole files, cold: the same graph with every line parsed (``whole_files=True``: how it was built
  up to issue 55, and how a task's check still reads a package);
- dependency graph, warm: the same again in the same process (each file parsed once per run).
Every round also checks that the two cold builds gave the same graph (nodes, edges, attributes and
their order); the row says "same" or stops.
Each time is the best of ``--repeat`` rounds (each round runs every measurement once, so a load
spike falls on all of them); the ratio is to grimp. Timings taken while other work
runs on the machine are not results: the load average is printed before and after.

``--fresh`` measures instead in a fresh process per build (nothing imported or parsed before it:
the cold start a user's ``cocoder-plan`` has), grimp, ours and ours with the native reader off
(every file read with ``ast``: the build before it) in turn, and reports process CPU
seconds (all threads; grimp scans on several) beside wall seconds, for the build alone and for the
whole process (interpreter and imports included). The OS page cache is warm: every round reads
the same files, and dropping the cache would slow everyone else on a shared machine.

Run: .venv/bin/python bench/cocoder_graph.py [--packages networkx,ray] [--repeat 3] [--fresh]
     .venv/bin/python bench/cocoder_graph.py --same-on flask,scipy,openai  (graphs compared, no timing)
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grimp
import networkx as nx

from environments.cocoder.depgraph import build_dependency_graph, discover_modules, forget_parsed
from environments.cocoder.importgraph import import_graph


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def parse_all(paths: list[Path]) -> None:
    for path in paths:
        ast.parse(path.read_bytes())


def _installed(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"bench: {name} is not installed in this environment")
    return Path(next(iter(spec.submodule_search_locations)))


def row(name: str, repeat: int) -> str:
    """One package's line of the table."""
    folder = _installed(name)
    paths = list(discover_modules(folder).values())
    graph = import_graph(folder)
    times: dict[str, list[float]] = {k: [] for k in ("grimp", "imports", "ast", "cold", "whole", "warm")}
    built: dict[str, nx.DiGraph] = {}
    for _ in range(repeat):  # one round of every measurement at a time: a load spike hits all of them
        times["grimp"].append(timed(lambda: grimp.build_graph(name, cache_dir=None)))
        times["imports"].append(timed(lambda: import_graph(folder)))
        times["ast"].append(timed(lambda: parse_all(paths)))
        forget_parsed()
        times["cold"].append(timed(lambda: built.__setitem__("cold", build_dependency_graph(folder))))
        forget_parsed()
        times["whole"].append(timed(lambda: built.__setitem__("whole", build_dependency_graph(folder, whole_files=True))))
        forget_parsed()
        build_dependency_graph(folder)
        times["warm"].append(timed(lambda: build_dependency_graph(folder)))
        if _dump(built["cold"]) != _dump(built["whole"]):
            raise SystemExit(f"bench: {name}: the skeleton build's graph differs from the whole-file build's")
    t_grimp, t_imports, t_ast, t_cold, t_whole, t_warm = (min(times[k]) for k in times)
    cells = [f"{t:.3f} ({t / t_grimp:.2f}x)" for t in (t_imports, t_ast, t_cold, t_whole, t_warm)]
    return " | ".join([name, str(len(paths)), str(graph.number_of_edges()), f"{t_grimp:.3f}", *cells, "same"])


# one build in a fresh process that imports only its builder; prints the build's CPU and wall
# seconds and the whole process's CPU at the end (interpreter start-up and imports included)
_CHILD = """
import importlib.util, json, time
from pathlib import Path
{imports}
folder = Path(next(iter(importlib.util.find_spec({name!r}).submodule_search_locations)))
cpu, wall = time.process_time(), time.perf_counter()
{build}
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({{"cpu": cpu, "wall": wall, "process_cpu": time.process_time()}}))
"""
_BUILDERS = {"grimp": ("import grimp", "grimp.build_graph({name!r}, cache_dir=None)"),
             "ours": ("from environments.cocoder.depgraph import build_dependency_graph",
                      "build_dependency_graph(folder)"),
             # the same build with the native reader switched off: every file read with ast, as before it
             "ast": ("from environments.cocoder import facts\nfacts._native_read = None\n"
                     "from environments.cocoder.depgraph import build_dependency_graph",
                     "build_dependency_graph(folder)")}


def fresh_row(name: str, repeat: int) -> str:
    """One package's line of the fresh-process table: best of ``repeat`` for each figure."""
    runs: dict[str, list[dict[str, float]]] = {"grimp": [], "ours": [], "ast": []}
    for _ in range(repeat):
        for builder in runs:  # alternating: a load spike falls on both
            imports, build = _BUILDERS[builder]
            code = _CHILD.format(imports=imports, build=build.format(name=name), name=name)
            # run in this checkout: ``-c`` puts the working directory first on sys.path
            out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                 cwd=Path(__file__).resolve().parent.parent)
            runs[builder].append(json.loads(out.stdout.splitlines()[-1]))
    best = {b: {k: min(r[k] for r in rs) for k in ("cpu", "wall", "process_cpu")} for b, rs in runs.items()}
    g, o, a = best["grimp"], best["ours"], best["ast"]
    return " | ".join([name, f"{g['cpu']:.3f}", f"{o['cpu']:.3f}", f"{o['cpu'] / g['cpu']:.2f}x",
                       f"{a['cpu']:.3f} ({a['cpu'] / g['cpu']:.2f}x)",
                       f"{g['wall']:.3f}", f"{o['wall']:.3f}", f"{o['wall'] / g['wall']:.2f}x",
                       f"{g['process_cpu']:.3f}", f"{o['process_cpu']:.3f}", f"{o['process_cpu'] / g['process_cpu']:.2f}x"])


def _dump(graph: nx.DiGraph) -> tuple:
    """What a plan can see of a graph, orders included."""
    return (list(graph.nodes(data=True)), list(graph.edges(data=True)),
            {n: list(graph.pred[n]) for n in graph}, {n: list(graph.succ[n]) for n in graph})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", default="networkx,ray")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--same-on", default="", metavar="PKGS",
                        help="only check, for these installed packages (comma-separated), that the skeleton build's "
                             "graph is the whole-file build's; no timing")
    parser.add_argument("--fresh", action="store_true", help="each build in a fresh process; CPU and wall seconds")
    args = parser.parse_args()
    if args.fresh:
        from environments.cocoder import nativereader

        print(f"native reader: {'built' if nativereader.read else 'NOT built (run ' + nativereader.BUILD_COMMAND + ')'}")
        _table("package | grimp CPU s | ours CPU s | CPU ratio | ours with ast only CPU s (ratio) | grimp wall s | "
               "ours wall s | wall ratio | grimp process CPU s | ours process CPU s | process CPU ratio", fresh_row, args)
        return
    if args.same_on:
        for name in args.same_on.split(","):
            folder = _installed(name)
            forget_parsed()
            whole = _dump(build_dependency_graph(folder, whole_files=True))
            forget_parsed()
            same = _dump(build_dependency_graph(folder)) == whole
            print(f"{name} | {len(whole[0])} modules | {'same' if same else 'DIFFERENT'}", flush=True)
        return
    _table("package | modules | edges (import graph) | grimp s | import graph s (x grimp) | ast alone s (x grimp) | "
           "dependency graph cold s (x grimp) | whole files cold s (x grimp) | warm s (x grimp) | graphs", row, args)


def _table(header: str, make_row: Callable[[str, int], str], args: argparse.Namespace) -> None:
    """The table, a row per package, between the load averages (a loaded machine's timings are no results)."""
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print(header, flush=True)
    for name in args.packages.split(","):
        print(make_row(name, args.repeat), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
