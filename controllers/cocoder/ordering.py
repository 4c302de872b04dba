"""Dependency-aware pieces: split a unit along the references between its definitions.

Written all at once, a piece that uses a sibling piece's definitions is written against their
stubs and pays the failure model's missing-dependency term. Here the split follows CoCoder's
own rules one level down: definitions that many others use (in-hubs, e.g. a class's
``_read``/``_write`` helpers) form a small piece written first, and the rest is cut along the
weakly connected parts of the reference graph, so pieces share as few references as possible.
A piece then waits for the pieces it uses and receives the interfaces of what it uses of them,
as written (a transfer: latency, tokens, and the cross-group term when another agent wrote
them), instead of writing against stubs. Pieces that use
each other (a cycle) are condensed: they stay simultaneous, against stubs, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence

import networkx as nx

from environments.cocoder.defs import Item
from environments.cocoder.depgraph import ordering_graph

HUB_USERS = 3  # a definition used by at least this many others of its module is an in-hub
HUB_SHARE = 0.5  # the hub piece stays within half a balanced piece: everyone waits for it


def reference_graph(items: Sequence[Item]) -> nx.DiGraph:
    """Definitions as nodes; ``a -> b`` when b's body uses a's name (by name, as ``Item.uses``)."""
    graph = nx.DiGraph()
    by_name: dict[str, list[str]] = {}
    for item in items:
        graph.add_node(item.qualname, tokens=item.tokens)
        by_name.setdefault(item.name, []).append(item.qualname)
    for user in items:
        for name in sorted(user.uses):
            for used in by_name.get(name, ()):
                if used != user.qualname:
                    graph.add_edge(used, user.qualname)
    return graph


def hub_items(ref: nx.DiGraph, limit: float) -> set[str]:
    """In-hubs (most used first) with everything they use, as long as all fit in ``limit`` tokens:
    a big hub piece would only move the bottleneck to the front."""
    chosen: set[str] = set()
    hubs = sorted((q for q in ref if ref.out_degree(q) >= HUB_USERS), key=lambda q: (-ref.out_degree(q), q))
    for hub in hubs:
        closure = (nx.ancestors(ref, hub) | {hub}) - chosen
        if sum(ref.nodes[q]["tokens"] for q in chosen | closure) <= limit:
            chosen |= closure
    return chosen


def ordered_pieces(items: Sequence[Item], n: int, share: float,
                   cut: Callable[[Sequence[Item], int], list[list[Item]]],
                   waits_for: Mapping[str, Collection[str]] | None = None,
                   before: Mapping[str, Collection[str]] | None = None) -> tuple[list[list[Item]], bool, int]:
    """The pieces of one module (source order inside each), whether the first is a hub piece and
    how many at the end are late pieces.

    With ``waits_for`` (name -> the other modules that still have its body to write), the
    definitions whose bodies wait for such names, directly or through a definition they use, go to
    *late* pieces, one per set of modules waited for (``late_items``; ``before``: module -> the
    modules finished before it, so waiting for both is waiting for it): only they wait for other
    modules, the rest can start at once. After the hub piece, every weakly connected part of the
    rest stays whole unless it is itself bigger than ``share`` (the repository's per-agent share:
    then ``cut`` splits it like an oversize module, in used-first order); the parts are packed onto
    ``n`` pieces, largest first onto the lightest.
    """
    index = {item.qualname: i for i, item in enumerate(items)}
    every = reference_graph(items)
    late = late_items(items, every, waits_for or {}, before or {})
    early = [item for item in items if item.qualname not in late]
    ref = every.subgraph(item.qualname for item in early)
    hubs = hub_items(ref, HUB_SHARE * sum(item.tokens for item in early) / max(n, 1))
    rest = [item for item in early if item.qualname not in hubs]
    parts: list[list[Item]] = []
    for comp in sorted(nx.weakly_connected_components(ref.subgraph(i.qualname for i in rest)),
                       key=lambda c: min(index[q] for q in c)):
        members = [item for item in rest if item.qualname in comp]
        size = sum(item.tokens for item in members)
        big = size > share and len(members) > 1
        parts += cut(_used_first(ref, members), math.ceil(size / share)) if big else [members]
    bins: list[list[Item]] = [[] for _ in range(max(1, n))]
    load = [0] * len(bins)
    for part in sorted(parts, key=lambda p: (-sum(i.tokens for i in p), index[p[0].qualname])):
        target = min(range(len(bins)), key=lambda b: (load[b], b))
        bins[target] += part
        load[target] += sum(i.tokens for i in part)
    pieces = [sorted(b, key=lambda i: index[i.qualname]) for b in bins if b]
    hub = [item for item in early if item.qualname in hubs]
    tails = [[item for item in items if late.get(item.qualname) == waited]
             for waited in sorted(set(late.values()), key=lambda w: (len(w), sorted(w)))]
    return ([hub] if hub else []) + pieces + tails, bool(hub), len(tails)


def late_items(items: Sequence[Item], ref: nx.DiGraph, waits_for: Mapping[str, Collection[str]],
               before: Mapping[str, Collection[str]] | None = None) -> dict[str, frozenset[str]]:
    """Definition -> the modules it waits for: those defining the ``waits_for`` names its body
    uses, and those the definitions it uses (the reference graph ``ref``) wait for, less those
    finished ``before`` another of them (voluptuous: waiting for ``error`` and ``schema_builder``
    is waiting for ``schema_builder``). Definitions that wait for nothing are left out; so is
    everything when nothing could start early."""
    dag = nx.condensation(ref)  # definitions that use each other wait together
    waited: dict[int, frozenset[str]] = {}
    by_name = {item.qualname: item for item in items}
    for c in nx.topological_sort(dag):
        own = {m for q in dag.nodes[c]["members"] for name in by_name[q].uses & waits_for.keys()
               for m in waits_for[name]}
        waited[c] = frozenset(own.union(*(waited[p] for p in dag.predecessors(c))))
    before = before or {}
    last = {c: frozenset(m for m in w if not any(m in before.get(o, ()) for o in w)) for c, w in waited.items()}
    late = {q: last[dag.graph["mapping"][q]] for q in ref if waited[dag.graph["mapping"][q]]}
    return late if len(late) < len(items) else {}


def _used_first(ref: nx.DiGraph, members: Sequence[Item]) -> list[Item]:
    """``members`` with each reference cycle together and every definition after those it uses
    (ties in source order): a contiguous cut of this order leaves mostly one-way references."""
    index = {item.qualname: k for k, item in enumerate(members)}
    dag = nx.condensation(ref.subgraph(index))
    first = {c: min(index[q] for q in dag.nodes[c]["members"]) for c in dag}
    by_name = {item.qualname: item for item in members}
    return [by_name[q] for c in nx.lexicographical_topological_sort(dag, key=first.get)
            for q in sorted(dag.nodes[c]["members"], key=index.__getitem__)]


def condense_piece_cycles(work: nx.DiGraph, pieces: Collection[str]) -> None:
    """Pieces that use each other cannot wait for each other: the references inside such a cycle
    become interface edges (written at once against stubs, charged as missing, the stub's tokens
    transferred); every other reference keeps ordering the work. Cycles of whole modules that
    were not split stay ordering edges: the scheduler gives such a cycle to one agent."""
    order = ordering_graph(work)
    for comp in nx.strongly_connected_components(order):
        if len(comp) < 2 or not set(comp) <= set(pieces):
            continue
        for u, v in order.subgraph(comp).edges:
            edge = work.edges[u, v]
            edge.update(ordering=False, interface=True, tokens=edge.get("stub_tokens", edge["tokens"]))
