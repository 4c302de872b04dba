import json

import networkx as nx
import pytest

from controllers.cocoder.chunking import split_oversize
from controllers.cocoder.strategies import make_plan
from environments.cocoder.blanking import blank_source
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.defs import definition_items, merge_definitions, source_view
from environments.cocoder.depgraph import build_dependency_graph, condense, ordering_graph
from environments.cocoder.synth import SynthSpec, generate_repo

FREE_MESSAGES = CostModel(latency=0.0)  # tiny synthetic modules: splitting only pays without message latency
NO_FAILURES = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)  # the plan choice by makespan alone
SOURCE = '''"""A module with a big class."""
from typing import overload

LIMIT = 3


def helper(x):
    """Double."""
    y = x * 2
    return y


class Store:
    """Keeps things."""

    kind = "store"

    def __init__(self):
        self.items = []
        self.count = 0

    @overload
    def get(self, i: int) -> int: ...

    @overload
    def get(self, i: str) -> str: ...

    def get(self, i):
        value = self.items[i]
        return helper(value)

    @property
    def size(self):
        n = len(self.items)
        return n

    def put(self, x):
        self.items.append(x)
        self.count += 1


def tail(store):
    total = store.size
    return total + LIMIT
'''


def _pieces(items, n):
    from controllers.cocoder.chunking import balanced_pieces

    return [[i.qualname for i in p] for p in balanced_pieces(items, n)]


def test_items_split_a_big_class_by_its_methods_and_keep_one_overload_entry():
    whole = [i.qualname for i in definition_items(SOURCE)]
    assert whole == ["helper", "Store", "tail"]
    split = [i.qualname for i in definition_items(SOURCE, class_limit=50)]
    assert split == ["helper", "Store.__init__", "Store.get", "Store.size", "Store.put", "tail"]
    uses = {i.qualname: i.uses for i in definition_items(SOURCE, class_limit=50)}
    assert "helper" in uses["Store.get"] and "int" not in uses["Store.get"]  # signatures are the skeleton's


@pytest.mark.parametrize("n", [2, 3, 4])
def test_merged_pieces_equal_the_reference_when_every_piece_is_right(n):
    skeleton, blanked = blank_source(SOURCE)
    items = definition_items(SOURCE, [b.qualname for b in blanked], class_limit=50)
    pieces = _pieces(items, n)
    assert len(pieces) == n and sorted(q for p in pieces for q in p) == sorted(i.qualname for i in items)
    rest = [q for p in pieces[1:] for q in p]
    written = [(pieces[0], source_view(SOURCE, pieces[0], rest))]
    written += [(p, source_view(SOURCE, p, None)) for p in pieces[1:]]
    for _, text in written:
        compile(text, "piece", "exec")  # every view is a module of its own
    assert merge_definitions(skeleton, written) == SOURCE
    assert merge_definitions(skeleton, reversed(written)) == SOURCE  # deterministic, order-free
    broken = [(written[0][0], "def helper(:\n")] + written[1:]
    merged = merge_definitions(skeleton, broken)  # a piece that does not parse leaves its stubs
    assert "raise NotImplementedError" in merged and merged != SOURCE


def _graph(tmp_path, **spec):
    repo = generate_repo(SynthSpec(**spec), tmp_path)
    return build_dependency_graph(repo.package_dir)


def test_an_oversize_module_is_split_into_disjoint_pieces_on_different_agents(tmp_path):
    graph = _graph(tmp_path, modules=2, functions_per_module=6, seed=0)
    work, pieces = split_oversize(graph, 3)
    share = sum(graph.nodes[m]["tokens"] for m in graph) / 3
    for m in graph:
        mine = [p for p in pieces.values() if p.module == m]
        assert bool(mine) == (graph.nodes[m]["tokens"] > share)
        if mine:
            names = [q for p in mine for q in p.definitions]
            assert len(names) == len(set(names)) and sum(p.primary for p in mine) == 1
    assert nx.is_directed_acyclic_graph(ordering_graph(work))
    plan = make_plan(graph, "cocoder", 3, cost=FREE_MESSAGES, failure=NO_FAILURES)
    by_module: dict[str, set[int]] = {}
    for node, piece in plan.pieces.items():
        by_module.setdefault(piece.module, set()).add(plan.worker[node])
    assert by_module and all(len(w) > 1 for w in by_module.values())
    assert make_plan(graph, "cocoder", 3, granularity="file").pieces == {}
    # a split costs messages: where they outweigh the shorter pieces the file-level plan is kept
    assert make_plan(graph, "cocoder", 3, cost=CostModel(latency=600.0)).pieces == {}


def test_a_cycle_bigger_than_a_share_is_written_against_stub_interfaces(tmp_path):
    graph = _graph(tmp_path, modules=4, seed=0)
    dag, _ = condense(graph)
    (cycle,) = [dag.nodes[c]["members"] for c in dag if len(dag.nodes[c]["members"]) > 1]
    work, pieces = split_oversize(graph, 3)
    assert {p.module for p in pieces.values()} == set(cycle)
    assert nx.is_directed_acyclic_graph(ordering_graph(work))  # no unit holds the whole cycle any more
    inside = [(u, v) for u, v, d in work.edges(data=True) if d.get("interface")]
    assert inside and all(not work.edges[e]["ordering"] for e in inside)
    plan = make_plan(graph, "cocoder", 3, cost=FREE_MESSAGES, failure=NO_FAILURES)
    assert plan.pieces and len({plan.worker[n] for n in pieces}) == len(pieces)


def test_bad_granularity_is_a_usage_error(tmp_path):
    from agentbed.errors import UsageError

    graph = _graph(tmp_path, modules=3, seed=0)
    with pytest.raises(UsageError, match="--granularity"):
        make_plan(graph, "cocoder", 2, granularity="line")


@pytest.mark.parametrize("task,agents", [("synth-2", 3), ("synth-4", 3)])
def test_a_team_with_split_modules_passes_the_sandboxed_tests(sandbox, tmp_path, task, agents):
    from environments.cocoder.costmodel import FailureModel
    from suites.cocoder.team import TeamConfig, run_team, verify_manifest

    perfect = FailureModel(p0=0.0, p_miss=0.0, p_cross=0.0, p_len=0.0)
    config = TeamConfig(strategy="cocoder", agents=agents, failure=perfect, cost=FREE_MESSAGES)
    result = run_team(task, config, 0, tmp_path)
    m, manifest = result.record.metrics, result.manifest
    assert manifest["pieces"] and m["pass_rate"] == 1.0 and m["passed"] == m["reference_tests"]
    assert m["pieces"] > m["modules"] or task == "synth-4"
    manifest_path = tmp_path / result.record.log.split("/")[-1]
    assert verify_manifest(manifest_path) == []
    tampered = json.loads(manifest_path.read_text())
    first = next(n for n, p in tampered["pieces"].items() if p["definitions"]) if task == "synth-2" else None
    if first:
        other = next(n for n, p in tampered["pieces"].items() if p["module"] == tampered["pieces"][first]["module"]
                     and n != first)
        tampered["pieces"][other]["definitions"] += tampered["pieces"][first]["definitions"][:1]
    tampered["agents"][0]["units"] = tampered["agents"][0]["units"][1:]
    manifest_path.write_text(json.dumps(tampered))
    problems = verify_manifest(manifest_path)
    assert any("written by 0 logs" in p for p in problems)
    assert bool(first) == any("claimed by pieces" in p for p in problems)


def test_failures_in_one_piece_are_repaired_by_its_own_agent(sandbox, tmp_path):
    from environments.cocoder.costmodel import FailureModel
    from suites.cocoder.team import TeamConfig, run_team

    config = TeamConfig(strategy="cocoder", failure=FailureModel(p0=0.5), cost=FREE_MESSAGES)
    result = run_team("synth-2", config, 1, tmp_path)
    m = result.record.metrics
    assert m["failed_functions"] > 0 and m["pass_rate_before_repair"] < 1.0
    pieces = result.manifest["pieces"]
    (round_,) = result.manifest["repair_rounds"]
    assert round_["modules"] and set(round_["modules"]) <= set(result.manifest["timeline"])
    for unit in round_["modules"]:  # the leader finds the piece by the line where a test crashed
        if pieces.get(unit, {}).get("definitions"):
            mine = {f"{pieces[unit]['module']}:{d}" for d in pieces[unit]["definitions"]}
            assert any(f in mine or f.rsplit(".", 1)[0] in mine for f in result.manifest["failed"])


def test_a_piece_is_shown_its_siblings_definitions_as_outlines():
    from environments.cocoder.defs import outline_definitions

    skeleton, _ = blank_source(SOURCE)
    view = outline_definitions(skeleton, ["Store.__init__", "tail"])
    compile(view, "view", "exec")
    assert '"""Double."""' in view and '"""Keeps things."""' in view  # own and unsplit text stays
    assert "def tail(store):\n    ...\n" in view and "def __init__(self):\n        ...\n" in view
    assert view.count("raise NotImplementedError") == skeleton.count("raise NotImplementedError") - 2
    assert len(view) < len(skeleton) and outline_definitions(skeleton, []) == skeleton


def test_a_piece_sees_its_own_definitions_and_only_the_siblings_it_uses():
    from environments.cocoder.defs import piece_outline

    skeleton, _ = blank_source(SOURCE)
    siblings = ["helper", "Store.__init__", "Store.size", "Store.put", "tail"]
    view = piece_outline(skeleton, SOURCE, ["Store.get"], siblings)
    compile(view, "view", "exec")
    assert "def helper(x):\n    ...\n" in view and '"""Double."""' not in view  # used: its outline
    assert "def get(self, i):" in view and "@overload" in view  # its own, as in the skeleton
    assert '"""Keeps things."""' in view and 'kind = "store"' in view and "LIMIT = 3" in view
    for unused in ("def __init__", "def size", "def put", "def tail"):
        assert unused not in view
    # the tail piece uses only what is complete in the skeleton (LIMIT) and ``size``, an attribute
    tail_view = piece_outline(skeleton, SOURCE, ["tail"], ["helper", "Store.__init__", "Store.get", "Store.size",
                                                            "Store.put"])
    assert "def size(self):\n        ...\n" in tail_view and "def helper" not in tail_view


BIG = '''class Big:
    """The class split by its methods."""
''' + "".join(f'''
    def step{k}(self, x):
        """Step {k}."""
        total = 0
        for i in range(x):
            total += i * {k} + len(str(i)) - (i % 3)
        return total
''' for k in range(6)) + '''

def helper(x):
    y = [x] * 3
    return sum(y)
'''
USER = '''from pkg.big import Big, helper


def use(x: Big) -> Big:
    """Big appears only in the signature."""
    y = helper(x)
    return y
'''
SHOWER = '''import pkg.big


def show(n):
    b = pkg.big.Big()
    return b.step0(n)
'''


def test_the_work_graph_orders_by_what_bodies_use_and_a_split_class_crosses_once(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    for name, text in {"__init__": "", "big": BIG, "user": USER, "shower": SHOWER}.items():
        (package / f"{name}.py").write_text(text)
    graph = build_dependency_graph(package)
    work, pieces = split_oversize(graph, 3, ordered=True)
    big = sorted(n for n, p in pieces.items() if p.module == "pkg.big")
    assert len(big) > 1 and not any(p.module != "pkg.big" for p in pieces.values())
    defines = {n: {q.split(".")[0] for q in pieces[n].definitions} for n in big}
    # user's body uses helper only (Big is in its signature): it waits for helper's piece alone
    assert sorted(work.predecessors("pkg.user")) == [n for n in big if "helper" in defines[n]]
    # shower reaches Big through the module: it waits for every piece that writes Big's methods,
    # and Big's interface crosses on one edge only
    into_shower = [n for n in big if "Big" in defines[n]]
    assert sorted(work.predecessors("pkg.shower")) == into_shower
    carried = [n for n in into_shower if work.edges[n, "pkg.shower"]["names"] == ["Big"]]
    assert len(carried) == 1 and work.edges[carried[0], "pkg.shower"]["tokens"] > 0
    assert all(work.edges[n, "pkg.shower"]["tokens"] == 0 for n in into_shower if n not in carried)
