"""Dependency-aware pieces: hubs first, a piece waits for what it uses, cycles stay simultaneous."""

from pathlib import Path

import networkx as nx
import pytest

from agentbed.testing import require
from controllers.cocoder.chunking import balanced_pieces, split_oversize
from controllers.cocoder.ordering import ordered_pieces
from controllers.cocoder.schedule import simulate
from controllers.cocoder.strategies import make_plan
from environments.cocoder.blanking import blank_source
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.defs import definition_items, merge_definitions, source_view
from environments.cocoder.depgraph import build_dependency_graph, ordering_graph

# a store whose helpers ``_load``/``_save`` every method uses (in-hubs), two independent groups of
# methods, and two functions that call each other (a cycle big enough to be cut)
STORE = '''"""A store."""
import json

ROOT = "db"


class Store:
    def __init__(self, path):
        self.path = path
        self.cache = None

    def _load(self):
        with open(self.path) as fh:
            data = json.load(fh)
        return data

    def _save(self, data):
        with open(self.path, "w") as fh:
            json.dump(data, fh)

    def insert(self, key, value):
        data = self._load()
        data[key] = value
        self._save(data)
        return key

    def insert_many(self, pairs):
        keys = [self.insert(k, v) for k, v in pairs]
        self._save(self._load())
        return keys

    def remove(self, key):
        data = self._load()
        data.pop(key, None)
        self._save(data)

    def search(self, predicate):
        data = self._load()
        hits = [v for v in data.values() if predicate(v)]
        return hits

    def count(self, predicate):
        hits = self.search(predicate)
        return len(hits)
'''
RING = "".join(f"""

def ring{i}(n, seen=()):
    if n <= 0:
        return len(seen)
    step = ring{(i + 1) % 16}(n - 1, (*seen, {i}))
    total = step * 2 - step + sum(seen) * 0
    return total
""" for i in range(16))  # sixteen functions calling the next one round: one cycle, too big for a piece
NO_FAILURES = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)


def _package(tmp_path: Path, big: str) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "store.py").write_text(big)
    (pkg / "small.py").write_text("from pkg.store import Store\n\n\ndef make():\n    s = Store('x')\n    return s\n")
    return pkg


def _split(tmp_path, source=STORE, ordered=True):
    graph = build_dependency_graph(_package(tmp_path, source))
    work, pieces = split_oversize(graph, 3, ordered=ordered)
    return graph, work, pieces


def test_in_hubs_form_the_first_piece_and_the_rest_follows_their_references():
    items = definition_items(STORE, class_limit=100)
    chunks, hub, late = ordered_pieces(items, 2, share=10_000, cut=balanced_pieces)
    names = [[i.qualname for i in c] for c in chunks]
    assert hub and not late and names[0] == ["Store._load", "Store._save"]
    # insert/insert_many and search/count stay together; nothing else crosses pieces
    assert {("Store.insert", "Store.insert_many"), ("Store.search", "Store.count")} <= {
        (a, b) for c in names for a in c for b in c}


def test_hub_pieces_come_first_and_ordered_dependencies_carry_no_missing_charge(tmp_path):
    graph, work, pieces = _split(tmp_path)
    (hub,) = [n for n, p in pieces.items() if p.hub]
    assert "Store._load" in pieces[hub].definitions  # the most used one
    assert not pieces[hub].primary  # the module's imports and globals go with a later piece
    assert set(pieces[hub].definitions) <= {"Store._load", "Store._save"}  # small: hubs only
    others = [n for n, p in pieces.items() if p.module == "pkg.store" and n != hub]
    assert others and all(work.edges[hub, n]["ordering"] for n in others)
    assert all(not work.has_edge(n, hub) for n in others)
    assert not any(d["interface"] for _, _, d in work.edges(data=True))
    plan = make_plan(graph, "cocoder", 3, granularity="ordered")
    assert plan.variant == "split-ordered"
    sched = _schedule(graph, plan)
    turn = {t.module: t for t in sched.turns}
    start, finish = {t.module: t.start for t in sched.turns}, {t.module: t.finish for t in sched.turns}
    for u, v, d in plan.graph.edges(data=True):  # a piece never starts before what it uses is done
        if d["ordering"]:
            delay = 0.0 if plan.context[u] == plan.context[v] else CostModel().transfer_delay(d["tokens"])
            assert start[v] >= finish[u] + delay - 1e-9
    assert all(turn[n].missing_fraction == 0.0 for n in others)
    assert max(start[n] for n in others) >= finish[hub]
    # written at once, the same pieces use each other's stubs and pay for it
    at_once = _schedule(graph, make_plan(graph, "cocoder", 3, granularity="simultaneous"))
    assert any(t.missing_fraction > 0 for t in at_once.turns if t.module.startswith("pkg.store#"))


def test_definitions_that_use_another_module_wait_in_late_pieces_and_the_rest_starts_at_once():
    items = definition_items(STORE, class_limit=100)
    # ``count`` and ``insert_many`` use names other modules still have to write (here: names that
    # happen to be the store's own; ``waits_for`` is whatever the caller says is pending), each
    # waiting for a different module: a late piece each; the rest is split as before
    chunks, hub, late = ordered_pieces(items, 2, share=10_000, cut=balanced_pieces,
                                       waits_for={"search": {"pkg.a"}, "insert": {"pkg.b"}})
    names = [[i.qualname for i in c] for c in chunks]
    assert late == 2 and names[-2:] == [["Store.count"], ["Store.insert_many"]]
    assert not {"Store.count", "Store.insert_many"} & {q for c in names[:-2] for q in c}
    # waiting for the same module, they wait together; what uses a late definition waits too
    chunks, _, late = ordered_pieces(items, 2, share=10_000, cut=balanced_pieces,
                                     waits_for={"search": {"pkg.a"}, "json": {"pkg.a"}})
    assert late == 1 and "Store.insert" in [i.qualname for i in chunks[-1]]  # it uses ``_load``
    # late pieces that would be the whole module are no split at all
    chunks, _, late = ordered_pieces(items, 2, share=10_000, cut=balanced_pieces, waits_for={"path": {"pkg.a"}})
    assert not late


def test_only_the_late_piece_waits_for_the_module_it_uses(tmp_path):
    slow = "def score(x):\n    total = x * 2\n    return total + 1\n"
    helper = "\n\ndef rank(xs):\n    scored = [score(x) for x in xs]\n    return sorted(scored)\n"
    source = "from pkg.slow import score\n" + STORE + helper
    pkg = _package(tmp_path, source)
    (pkg / "slow.py").write_text(slow)
    graph = build_dependency_graph(pkg)
    work, pieces = split_oversize(graph, 3, ordered=True, late=True)
    (late,) = [n for n, p in pieces.items() if p.module == "pkg.store" and "rank" in p.definitions]
    assert pieces[late].definitions == ("rank",) and not pieces[late].primary and pieces[late].late
    assert not any(p.late for n, p in pieces.items() if n != late)
    waiting = [v for v in work.successors("pkg.slow") if v.startswith("pkg.store")]
    assert waiting == [late]  # no other piece of the module waits for pkg.slow
    plan = make_plan(graph, "cocoder", 3, granularity="ordered", failure=NO_FAILURES)
    assert plan.variant in ("split-ordered", "split-ordered-late")


def _schedule(graph, plan):
    work = plan.work_graph(graph)
    spec = {n: graph.nodes[plan.module_of(n)]["api_tokens"] for n in work}
    return simulate(work, plan, CostModel(), {n: work.nodes[n]["tokens"] for n in work}, spec)


def test_pieces_that_use_each_other_stay_simultaneous(tmp_path):
    graph, work, pieces = _split(tmp_path, STORE + RING)  # the ring is cut into pieces
    assert nx.is_directed_acyclic_graph(ordering_graph(work))
    cyclic = [(u, v) for u, v, d in work.edges(data=True) if d["interface"]]
    assert cyclic and all(not work.edges[e]["ordering"] for e in cyclic)
    stubs = work.edge_subgraph(cyclic)
    assert all(nx.has_path(stubs, v, u) for u, v in cyclic)  # only references inside a cycle of pieces
    assert all(work.edges[e]["tokens"] == work.edges[e]["stub_tokens"] for e in cyclic)  # stubs, not bodies
    plan = make_plan(graph, "cocoder", 3, granularity="ordered", cost=CostModel(latency=0.0))
    sched = _schedule(graph, plan)
    turn = {t.module: t for t in sched.turns}
    for u, v in cyclic:  # neither waits for the other, and each pays the missing-dependency term
        assert turn[v].start < turn[u].finish and turn[u].start < turn[v].finish
        assert turn[u].missing_fraction > 0 and turn[v].missing_fraction > 0


@pytest.mark.parametrize("extra", ["", RING])
def test_merged_ordered_pieces_equal_the_reference(tmp_path, extra):
    source = STORE + extra
    _, _, pieces = _split(tmp_path, source)
    mine = [p for p in pieces.values() if p.module == "pkg.store"]
    assert len(mine) > 2
    skeleton, _ = blank_source(source)
    written = [(p.definitions, source_view(source, p.definitions, p.omit if p.primary else None)) for p in mine]
    assert merge_definitions(skeleton, written) == source
    assert merge_definitions(skeleton, reversed(written)) == source


def test_the_planner_picks_by_its_own_estimate(tmp_path):
    graph = build_dependency_graph(_package(tmp_path, STORE))
    assert make_plan(graph, "cocoder", 3, granularity="file").variant == "file"
    chosen = make_plan(graph, "cocoder", 3)
    assert chosen.variant in ("file", "split-simultaneous", "split-ordered", "split-ordered-late")
    assert make_plan(graph, "cocoder", 3, cost=CostModel(latency=600.0)).variant == "file"  # messages too dear


def test_an_ordered_team_run_passes_and_its_manifest_verifies(sandbox, tmp_path):
    from environments.cocoder.tasks import task_ids
    from suites.cocoder.team import TeamConfig, run_team, verify_manifest

    require("tinydb" in task_ids(), "the fetched tinydb repository", "run scripts/fetch-repos tinydb")
    config = TeamConfig(strategy="cocoder", granularity="ordered", failure=NO_FAILURES)
    result = run_team("tinydb", config, 0, tmp_path)
    manifest, m = result.manifest, result.record.metrics
    assert manifest["plan"] == "split-ordered" and m["pass_rate"] == 1.0
    hubs = [n for n, p in manifest["pieces"].items() if p["hub"]]
    assert hubs and verify_manifest(tmp_path / result.record.log.split("/")[-1]) == []
    timeline = manifest["timeline"]
    for hub in hubs:  # the pieces of the hub's module start after it is written
        module = manifest["pieces"][hub]["module"]
        later = [n for n, p in manifest["pieces"].items() if p["module"] == module and n != hub]
        assert later and all(timeline[n][0] >= timeline[hub][1] for n in later)
