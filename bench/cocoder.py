"""Benchmark: dependency graph + partition + schedule at 100, 1,000 and 10,000 synthetic modules,
and our import-graph build time beside grimp's on the same packages, in one run.

Run: .venv/bin/python bench/cocoder.py [--sizes 100,1000,10000]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

import grimp

from controllers.cocoder.schedule import simulate
from controllers.cocoder.strategies import make_plan
from environments.cocoder.costmodel import CostModel
from environments.cocoder.depgraph import build_dependency_graph
from environments.cocoder.synth import SynthSpec, generate_repo


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - t0


def grimp_time(root: Path, package: str) -> float:
    sys.path.insert(0, str(root))
    try:
        _, seconds = timed(grimp.build_graph, package, cache_dir=None)
    finally:
        sys.path.remove(str(root))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,10000")
    args = parser.parse_args()
    header = ("package", "modules", "edges", "ours graph s", "grimp graph s", "partition s", "schedule s", "groups",
              "makespan (virtual s)")
    print(" | ".join(header), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            package = f"bench{n}"
            repo = generate_repo(SynthSpec(modules=n, hubs=max(1, min(10, n // 100)), cycles=max(1, n // 100), seed=1,
                                           package=package), Path(tmp) / package, with_tests=False)
            graph, t_graph = timed(build_dependency_graph, repo.package_dir, collapse_reexports=False)
            t_grimp = grimp_time(Path(tmp) / package, package)
            plan, t_part = timed(make_plan, graph, "cocoder", 8)
            out = {m: graph.nodes[m]["tokens"] for m in graph}
            spec = {m: graph.nodes[m]["api_tokens"] for m in graph}
            sched, t_sched = timed(simulate, graph, plan, CostModel(), out, spec)
            rows.append((f"synthetic {n}", graph.number_of_nodes(), graph.number_of_edges(), t_graph, t_grimp,
                         t_part, t_sched, len(plan.groups), sched.makespan))
            _print(rows[-1])
    for name in ("gymnasium", "networkx"):
        pkg_dir = Path(importlib.import_module(name).__file__).parent
        graph, t_graph = timed(build_dependency_graph, pkg_dir, collapse_reexports=False)
        t_grimp = grimp_time(pkg_dir.parent, name)
        rows.append((f"installed {name}", graph.number_of_nodes(), graph.number_of_edges(), t_graph, t_grimp,
                     float("nan"), float("nan"), 0, float("nan")))
        _print(rows[-1])


def _print(r: tuple) -> None:
    print(" | ".join([r[0], str(r[1]), str(r[2])] + [f"{x:.3f}" for x in r[3:7]] + [str(r[7]), f"{r[8]:.0f}"]),
          flush=True)


if __name__ == "__main__":
    main()
