"""Hub isolation, community detection and post-processing (CoCoder, arXiv 2606.00953, sec. 3.2).

The published code has two defects we avoid: its hub partition functions assign
``out_in_hubs`` but read ``out_hubs`` (a NameError that makes partitioning fail), and its task
list does not handle dependency cycles. Here every strongly connected component of the ordering
graph ends up inside one group, so a cycle is always written by one agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

from agentbed.errors import UsageError
from environments.cocoder.depgraph import ordering_graph

METHODS = ("louvain", "leiden", "greedy", "infomap")
SMALL_REPO_GUARD = 8  # below this many modules the fractional rule flags everything (spec: 5 modules)


@dataclass(frozen=True)
class Hubs:
    in_hubs: tuple[str, ...]  # many files depend on it: each gets its own group
    out_hubs: tuple[str, ...]  # depends on many files (aggregators): all share one group


def find_hubs(graph: nx.DiGraph, theta: float = 0.4, min_modules: int = SMALL_REPO_GUARD) -> Hubs:
    """The paper's fractional hub rule over non-``__init__`` modules.

    With n such modules, a module depending on more than ``theta * (n - 1)`` others is an
    out-hub, one that more than ``theta * (n - 1)`` others depend on is an in-hub. On a
    repository with fewer than ``min_modules`` modules the rule would flag nearly every module,
    so no hub is isolated there.
    """
    files = [n for n, d in graph.nodes(data=True) if not d.get("is_init")]
    if len(files) < max(min_modules, 2):
        return Hubs((), ())
    fileset = set(files)
    limit = theta * (len(files) - 1)
    in_hubs = tuple(sorted(n for n in files if sum(1 for s in graph.successors(n) if s in fileset) > limit))
    out_hubs = tuple(sorted(n for n in files if n not in in_hubs
                            and sum(1 for p in graph.predecessors(n) if p in fileset) > limit))
    return Hubs(in_hubs, out_hubs)


def _undirected(graph: nx.DiGraph, nodes: Iterable[str]) -> nx.Graph:
    """Symmetric cohesion graph: weight = communication tokens both ways (+1 so no edge is free)."""
    sub = graph.subgraph(nodes)
    und = nx.Graph()
    und.add_nodes_from(sorted(sub.nodes))
    for u, v, d in sorted(sub.edges(data=True)):
        w = float(d.get("tokens", 0)) + 1.0
        if und.has_edge(u, v):
            und.edges[u, v]["weight"] += w
        else:
            und.add_edge(u, v, weight=w)
    return und


def _leiden(und: nx.Graph, seed: int, resolution: float) -> list[set[str]]:
    try:
        import graspologic_native as gn
    except ImportError as exc:
        raise UsageError("--method leiden needs graspologic-native: pip install -e '.[leiden]'") from exc
    edges = [(u, v, d["weight"]) for u, v, d in und.edges(data=True)]
    if not edges:
        return [{n} for n in und.nodes]
    _, labels = gn.leiden(edges, resolution=resolution, seed=seed)
    groups: dict[int, set[str]] = {}
    for node, label in labels.items():
        groups.setdefault(label, set()).add(node)
    isolated = [{n} for n in und.nodes if n not in labels]
    return list(groups.values()) + isolated


def _infomap(graph: nx.Graph, seed: int) -> list[set[str]]:
    """Two-level Infomap (Rosvall & Bergstrom 2008) on the directed dependency graph, as the paper runs it."""
    try:
        import infomap
    except ImportError as exc:
        raise UsageError("--method infomap needs infomap: pip install -e '.[infomap]'") from exc
    names = sorted(graph.nodes)
    index = {n: i for i, n in enumerate(names)}
    flags = f"--two-level --silent --num-trials 1 --seed {seed + 1}"  # Infomap seeds start at 1
    flags += " --directed" if graph.is_directed() else ""
    im = infomap.Infomap(flags)
    for n in names:
        im.add_node(index[n])
    for u, v, d in sorted(graph.edges(data=True)):
        im.add_link(index[u], index[v], float(d.get("weight", 1.0)))
    modules = im.run().modules()
    groups: dict[int, set[str]] = {}
    for i, module in sorted(modules.items()):
        groups.setdefault(module, set()).add(names[i])
    return list(groups.values())


def communities(und: nx.Graph, method: str = "louvain", seed: int = 0, resolution: float = 1.0,
                directed: nx.DiGraph | None = None) -> list[set[str]]:
    """Louvain (Blondel et al. 2008), Leiden (Traag et al. 2019), greedy modularity (Clauset et al.
    2004) on the symmetric cohesion graph, or Infomap on ``directed`` (the same weights) when given."""
    if und.number_of_nodes() == 0:
        return []
    if method == "infomap":
        if directed is None:
            return _infomap(und, seed)
        weighted = nx.DiGraph()
        weighted.add_nodes_from(und.nodes)
        weighted.add_edges_from((u, v, {"weight": float(d.get("tokens", 0)) + 1.0})
                                for u, v, d in directed.edges(data=True) if u in und and v in und)
        return _infomap(weighted, seed)
    if method == "louvain":
        return [set(c) for c in nx.community.louvain_communities(und, weight="weight", resolution=resolution, seed=seed)]
    if method == "greedy":
        return [set(c) for c in nx.community.greedy_modularity_communities(und, weight="weight", resolution=resolution)]
    if method == "leiden":
        return _leiden(und, seed, resolution)
    raise UsageError(f"--method: {method!r} is not one of {', '.join(METHODS)}")


def split_connected(graph: nx.DiGraph, groups: list[set[str]]) -> list[set[str]]:
    """Post-processing step 1: a group that is not weakly connected becomes one group per component."""
    out: list[set[str]] = []
    for group in groups:
        out.extend(set(c) for c in nx.connected_components(graph.subgraph(group).to_undirected()))
    return out


def keep_cycles_together(graph: nx.DiGraph, groups: list[set[str]]) -> list[set[str]]:
    """Merge groups so that every import cycle lies inside one group (written by one agent)."""
    owner = {m: i for i, g in enumerate(groups) for m in g}
    merge = nx.Graph()
    merge.add_nodes_from(range(len(groups)))
    for scc in nx.strongly_connected_components(ordering_graph(graph)):
        ids = sorted({owner[m] for m in scc})
        merge.add_edges_from(zip(ids, ids[1:], strict=False))
    return [set().union(*(groups[i] for i in comp)) for comp in nx.connected_components(merge)]


def attach_inits(graph: nx.DiGraph, groups: list[set[str]]) -> list[set[str]]:
    """Put each ``__init__`` module in the group it shares the most edges with (or its own)."""
    groups = [set(g) for g in groups]
    placed = set().union(*groups) if groups else set()
    for init in sorted(n for n, d in graph.nodes(data=True) if d.get("is_init") and n not in placed):
        links = [0] * len(groups)
        for i, group in enumerate(groups):
            links[i] = sum(1 for n in graph.predecessors(init) if n in group) + sum(
                1 for n in graph.successors(init) if n in group)
        best = max(range(len(groups)), key=lambda i: (links[i], -i)) if groups else None
        if best is None or links[best] == 0:
            groups.append({init})
        else:
            groups[best].add(init)
    return groups


def merge_small_groups(graph: nx.DiGraph, groups: list[set[str]], makespan: Callable[[list[set[str]]], float],
                       max_size: int = 1) -> list[set[str]]:
    """Post-processing step 2 (optional in the paper): merge a group of at most ``max_size``
    modules into its most connected neighbour when the zero-communication makespan does not grow."""
    groups = [set(g) for g in groups]
    changed = True
    while changed:
        changed = False
        base = makespan(groups)
        for i, small in sorted(enumerate(groups), key=lambda p: (len(p[1]), sorted(p[1]))):
            if len(small) > max_size:
                continue
            weights = []
            for j, other in enumerate(groups):
                if j != i:
                    w = sum(1 for a in small for b in other if graph.has_edge(a, b) or graph.has_edge(b, a))
                    if w:
                        weights.append((-w, j))
            for _, j in sorted(weights):
                trial = [g for k, g in enumerate(groups) if k not in (i, j)] + [groups[i] | groups[j]]
                if makespan(trial) <= base + 1e-9:
                    groups, changed = trial, True
                    break
            if changed:
                break
    return groups


def cocoder_partition(graph: nx.DiGraph, *, method: str = "louvain", theta: float = 0.4, seed: int = 0,
                      resolution: float = 1.0, min_modules: int = SMALL_REPO_GUARD,
                      makespan: Callable[[list[set[str]]], float] | None = None) -> list[set[str]]:
    """CoCoder's groups: in-hubs alone, out-hubs together, communities of the rest split into
    connected pieces, cycles kept whole, ``__init__`` modules attached, small groups merged."""
    hubs = find_hubs(graph, theta, min_modules)
    rest = [n for n, d in graph.nodes(data=True)
            if not d.get("is_init") and n not in hubs.in_hubs and n not in hubs.out_hubs]
    groups = split_connected(graph, communities(_undirected(graph, rest), method, seed, resolution,
                                                directed=graph.subgraph(rest)))
    groups += [{h} for h in hubs.in_hubs]
    if hubs.out_hubs:
        groups.append(set(hubs.out_hubs))
    groups = attach_inits(graph, groups)
    groups = keep_cycles_together(graph, groups)
    if makespan is not None:
        groups = merge_small_groups(graph, groups, makespan)
    return canonical(groups)


def canonical(groups: Iterable[set[str]]) -> list[set[str]]:
    """A deterministic order: groups sorted by their smallest member."""
    return sorted((set(g) for g in groups if g), key=lambda g: min(g))


def assign_to_agents(graph: nx.DiGraph, groups: list[set[str]], k: int,
                     apart: Mapping[str, str] | None = None) -> dict[str, int]:
    """Module -> agent 0..k-1. With more groups than agents, groups are packed by work
    (longest processing time first, Graham 1969); a group is never split across agents.
    ``apart``: node -> key; groups sharing a key (pieces of one split module) go to different
    agents while there is one without that key."""
    if k < 1:
        raise UsageError(f"--team-size: {k} must be at least 1")
    apart = apart or {}
    load = [0.0] * k
    keys: list[set[str]] = [set() for _ in range(k)]
    owner: dict[str, int] = {}
    ordered = sorted(groups, key=lambda g: (-sum(graph.nodes[m].get("tokens", 1) for m in g), min(g)))
    for group in ordered:
        mine = {apart[m] for m in group if m in apart}
        agent = min(range(k), key=lambda a: (bool(keys[a] & mine), load[a], a))
        load[agent] += sum(graph.nodes[m].get("tokens", 1) for m in group)
        keys[agent] |= mine
        for m in group:
            owner[m] = agent
    return owner


def cut_edges(graph: nx.DiGraph, owner: Mapping[str, object]) -> list[tuple[str, str]]:
    """Dependency edges whose ends belong to different contexts (each costs a message)."""
    return [(u, v) for u, v in graph.edges if owner[u] != owner[v]]
