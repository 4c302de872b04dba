"""CoCoder's dependency graph and plans on every pinned repository are exactly what they were
before the import graph came from grimp (issue 37): nodes, edges, their attributes, and the plan
of every strategy. The fixture was written from main at 60b124b, before the change, by
``PYTHONPATH=. .venv/bin/python tests/cocoder/test_graph_unchanged.py --write``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "pinned_graphs.json"
AGENTS = (2, 4)


def _value(value: object) -> object:
    """JSON-comparable; long texts (interfaces) as their length and digest."""
    if isinstance(value, str) and len(value) > 120:
        return f"{len(value)}:{hashlib.sha256(value.encode()).hexdigest()[:16]}"
    if isinstance(value, tuple | list):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in sorted(value.items())}
    return value


def _graph(graph) -> dict:
    return {"nodes": {n: _value({k: v for k, v in d.items() if k != "path"}) for n, d in sorted(graph.nodes(data=True))},
            "edges": {f"{u} -> {v}": _value(d) for u, v, d in sorted(graph.edges(data=True))}}


def _plan(plan) -> dict:
    out = {f.name: _value(getattr(plan, f.name)) for f in dataclasses.fields(plan) if f.name not in ("graph", "pieces")}
    out["pieces"] = {k: _value(dataclasses.asdict(p)) for k, p in sorted(plan.pieces.items())}
    out["graph"] = None if plan.graph is None else sorted(f"{u} -> {v}" for u, v in plan.graph.edges)
    return out


def snapshot(package_dir: Path) -> dict:
    from controllers.cocoder.strategies import STRATEGIES, make_plan
    from environments.cocoder.depgraph import build_dependency_graph

    graph = build_dependency_graph(package_dir)
    out = {"graph": _graph(graph),
           "visible": _graph(build_dependency_graph(package_dir, include_local=False)),
           "no_collapse": _graph(build_dependency_graph(package_dir, collapse_reexports=False)),
           "plans": {}}
    for strategy in STRATEGIES:
        for k in AGENTS:
            out["plans"][f"{strategy}/{k}"] = _plan(make_plan(graph, strategy, k))
    return out


def _pinned() -> dict[str, Path]:
    from environments.cocoder.repos import REPOS, package_base

    return {repo.name: package_base(repo) / repo.package for repo in REPOS}


def test_graphs_and_plans_are_unchanged_on_every_pinned_repository():
    from agentbed.testing import require
    from environments.cocoder.repos import FETCH_COMMAND, REPOS, fetched_repos

    require(len(fetched_repos()) == len(REPOS), "the pinned CoCoder repositories", f"run {FETCH_COMMAND}")
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert sorted(expected) == sorted(_pinned())
    for name, package_dir in _pinned().items():
        got = json.loads(json.dumps(snapshot(package_dir)))
        for part in ("graph", "visible", "no_collapse"):
            assert got[part]["nodes"] == expected[name][part]["nodes"], (name, part)
            assert got[part]["edges"] == expected[name][part]["edges"], (name, part)
        for key, plan in expected[name]["plans"].items():
            # issue 52: file-parallel is capped at the team size; the all-at-once plan the fixture
            # holds is now file-parallel-uncapped's, unchanged but for its name
            if key.startswith("file-parallel/"):
                key = key.replace("file-parallel", "file-parallel-uncapped")
                plan = {**plan, "strategy": "file-parallel-uncapped"}
            assert got["plans"][key] == plan, (name, key)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    FIXTURE.write_text(json.dumps({name: snapshot(d) for name, d in _pinned().items()}, indent=0, sort_keys=True),
                       encoding="utf-8")
