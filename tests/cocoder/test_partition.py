import networkx as nx
import pytest

from agentbed.errors import UsageError
from controllers.cocoder.partition import (
    assign_to_agents,
    cocoder_partition,
    communities,
    cut_edges,
    find_hubs,
    keep_cycles_together,
)
from environments.cocoder.depgraph import build_dependency_graph


def star(n):
    g = nx.DiGraph()
    g.add_node("hub", is_init=False, tokens=10)
    for i in range(n):
        g.add_node(f"m{i}", is_init=False, tokens=10)
        g.add_edge("hub", f"m{i}", tokens=5, ordering=True)
    return g


def test_in_hub_by_the_fractional_rule_and_small_repo_guard():
    assert find_hubs(star(12)).in_hubs == ("hub",)
    assert find_hubs(star(4)) == find_hubs(star(4), min_modules=100)  # guard: nothing on a tiny repo
    assert find_hubs(star(4)).in_hubs == ()


def test_out_hub_is_an_aggregator():
    g = star(12).reverse(copy=True)
    hubs = find_hubs(g)
    assert hubs.out_hubs == ("hub",) and hubs.in_hubs == ()


def _require_method(method):
    import importlib.util

    from agentbed.testing import require

    needs = {"leiden": ("graspologic_native", "leiden"), "infomap": ("infomap", "infomap")}
    if method in needs:
        module, extra = needs[method]
        require(importlib.util.find_spec(module) is not None, f"the {method} community detection",
                f"pip install -e '.[{extra}]'")


@pytest.mark.parametrize("method", ["louvain", "greedy", "leiden", "infomap"])
def test_partition_is_seeded_and_covers_every_module(synth_repo, method):
    _require_method(method)
    graph = build_dependency_graph(synth_repo.package_dir)
    a = cocoder_partition(graph, method=method, seed=3)
    b = cocoder_partition(graph, method=method, seed=3)
    assert a == b
    assert sorted(m for g in a for m in g) == sorted(graph.nodes)


def test_hub_heavy_graph_partitions_without_the_published_name_error(synth_repo):
    graph = build_dependency_graph(synth_repo.package_dir)
    groups = cocoder_partition(graph, theta=0.05)  # every module with a few links is a hub
    assert groups and sorted(m for g in groups for m in g) == sorted(graph.nodes)


def test_cycles_stay_in_one_group(synth_repo):
    graph = build_dependency_graph(synth_repo.package_dir)
    for group in [keep_cycles_together(graph, [{m} for m in graph.nodes])]:
        for scc in nx.strongly_connected_components(graph):
            owners = {i for i, g in enumerate(group) if g & scc}
            assert len(owners) == 1


def test_assign_packs_groups_onto_k_agents_and_counts_cut_edges(synth_repo):
    graph = build_dependency_graph(synth_repo.package_dir)
    groups = cocoder_partition(graph)
    owner = assign_to_agents(graph, groups, 2)
    assert set(owner.values()) <= {0, 1}
    for g in groups:
        assert len({owner[m] for m in g}) == 1
    assert all(owner[u] != owner[v] for u, v in cut_edges(graph, owner))
    with pytest.raises(UsageError, match="--team-size"):
        assign_to_agents(graph, groups, 0)


def test_unknown_method_is_a_usage_error():
    with pytest.raises(UsageError, match="--method"):
        communities(nx.path_graph(3), "walktrap")


def test_small_groups_merge_only_when_the_zero_communication_makespan_does_not_grow():
    from controllers.cocoder.partition import merge_small_groups

    g = nx.DiGraph([("a", "b"), ("b", "c")])
    groups = [{"a", "b"}, {"c"}]
    merged = merge_small_groups(g, groups, makespan=lambda gs: 10.0)  # merging costs nothing
    assert sorted(map(sorted, merged)) == [["a", "b", "c"]]
    kept = merge_small_groups(g, groups, makespan=lambda gs: 10.0 * (1 + (len(gs) == 1)))
    assert sorted(map(sorted, kept)) == [["a", "b"], ["c"]]
