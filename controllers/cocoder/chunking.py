"""Function granularity: split a module (or an import cycle) too big for one agent's share.

At file granularity one file can be most of a repository's critical path, and an import cycle
puts its modules in one agent's hands. Here a unit of the condensed graph whose writing work
(output tokens) exceeds ``total / k`` is split into cohesive pieces of its definitions (big
classes split by methods), at most ``k`` per module. Pieces of one unit are written at once by
different agents against the shared skeleton (every signature is there), the spec's "written
against stub interfaces": a reference between them is a non-ordering *interface* edge that
still costs a message, counts as cross-group and as missing in the failure model. Dependencies
on other modules are attributed to the pieces whose definitions use the imported names.
``ordered=True`` splits along the references instead (controllers.cocoder.ordering): hub
pieces first, and a piece waits for the pieces it uses unless they use each other; with
``late=True`` the definitions waiting for other modules also get late pieces of their own.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from pathlib import Path

import networkx as nx

from controllers.cocoder.defs import Item, definition_items, source_view
from controllers.cocoder.depgraph import condense, estimate_tokens
from controllers.cocoder.ordering import condense_piece_cycles, ordered_pieces, reference_graph

BALANCE_SLACK = 0.1  # a piece may exceed the most balanced split by 10% to cut fewer references
# "function": the planner picks file-level, simultaneous or ordered pieces (with or without late
# pieces) by its estimate;
# "simultaneous" / "ordered": that split whenever something is big enough; "file": no split
GRANULARITIES = ("function", "simultaneous", "ordered", "file")


@dataclass(frozen=True)
class Piece:
    """A node of the work graph that is part of a split unit."""

    node: str
    module: str
    definitions: tuple[str, ...]  # empty: the whole module (a cycle member small enough to keep whole)
    primary: bool  # also writes the module's remainder (imports, globals, unsplit parts)
    omit: tuple[str, ...]  # for the primary piece: the definitions the other pieces write
    unit: str  # the split unit (its first module): its pieces go to different agents
    hub: bool = False  # the in-hub definitions of an ordered split, written before the pieces using them
    late: bool = False  # definitions waiting for other modules, split off so the rest need not wait


def balanced_pieces(items: Sequence[Item], n: int) -> list[list[Item]]:
    """``items`` (source order) cut into ``n`` contiguous pieces: the fewest references crossing
    pieces among splits whose largest piece is within BALANCE_SLACK of the most balanced one."""
    count = len(items)
    n = max(1, min(n, count))
    size = [0, *accumulate(i.tokens for i in items)]
    partners: list[list[int]] = [[] for _ in items]  # earlier items each item is linked with
    for i, b in enumerate(items):
        for j, a in enumerate(items):
            if j < i and (a.name in b.uses or b.name in a.uses):
                partners[i].append(j)
    # crossing[s][e]: links between items[s:e] and items[:s]
    crossing = [[0] * (count + 1) for _ in range(count + 1)]
    for s in range(count):
        for e in range(s + 1, count + 1):
            crossing[s][e] = crossing[s][e - 1] + bisect_left(partners[e - 1], s)
    limit = _tightest([i.tokens for i in items], n) * (1 + BALANCE_SLACK)
    table: list[list[tuple[float, tuple[int, ...]]]] = [[(math.inf, ())] * (count + 1) for _ in range(n + 1)]
    table[0][0] = (0, ())
    for p in range(1, n + 1):
        for e in range(p, count + 1):
            for s in range(p - 1, e):
                prev = table[p - 1][s]
                if prev[0] < math.inf and size[e] - size[s] <= limit and prev[0] + crossing[s][e] < table[p][e][0]:
                    table[p][e] = (prev[0] + crossing[s][e], (*prev[1], e))
    cuts = table[n][count][1]
    return [list(items[s:e]) for s, e in zip((0, *cuts[:-1]), cuts, strict=True)]


def _tightest(sizes: Sequence[int], n: int) -> int:
    """The smallest largest-piece size of any split of ``sizes`` into at most ``n`` contiguous pieces."""

    def fits(limit: int) -> bool:
        pieces, current = 1, 0
        for x in sizes:
            if current + x > limit:
                pieces, current = pieces + 1, 0
            current += x
        return pieces <= n

    lo, hi = max(sizes), sum(sizes)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid + 1, hi)
    return lo


def split_oversize(graph: nx.DiGraph, agents: int, writable: Mapping[str, Collection[str]] | None = None,
                   *, ordered: bool = False, late: bool = False) -> tuple[nx.DiGraph, dict[str, Piece]]:
    """The work graph at function granularity and its pieces (empty when nothing is split).

    ``writable``: module -> the qualified names of its blanked functions (None: every function);
    module sources are read from the graph's ``path`` attributes (the reference code).
    ``ordered``: pieces along the reference graph (hubs first) that wait for what they use;
    otherwise contiguous pieces written at once against each other's stubs.
    """
    total = sum(graph.nodes[m].get("tokens", 0) for m in graph)
    share = total / max(agents, 1)
    dag, _ = condense(graph)
    # read lazily, once per module: a graph with nothing to split may carry no sources
    provided = cache(lambda m: _provided(graph, m, writable))
    pieces: dict[str, Piece] = {}
    items_of: dict[str, list[list[Item]]] = {}
    for c in sorted(dag, key=lambda c: dag.nodes[c]["members"]):
        members = dag.nodes[c]["members"]
        if agents < 2 or sum(graph.nodes[m].get("tokens", 0) for m in members) <= share:
            continue
        for m in members:
            source = Path(graph.nodes[m]["path"]).read_text(encoding="utf-8")
            todo = None if writable is None else writable.get(m, ())
            n = min(agents, math.ceil(graph.nodes[m].get("tokens", 0) / share))
            # a class bigger than one balanced piece is split by its members
            items = definition_items(source, todo, class_limit=graph.nodes[m].get("tokens", 0) / max(n, 1))
            chunks, hub, late_pieces = [], False, 0
            if items and n > 1:
                waits = _pending_names(graph, m, provided) if late else {}
                chunks, hub, late_pieces = ordered_pieces(items, n, share, balanced_pieces, waits) if ordered else \
                    (balanced_pieces(items, n), False, 0)
            if len(chunks) < 2:
                pieces[m] = Piece(m, m, (), True, (), members[0])
                continue
            items_of[m] = chunks
            quals = [tuple(i.qualname for i in chunk) for chunk in chunks]
            # the module's remainder (imports, globals) goes with the lightest piece that is neither
            # the hub piece (everyone waits for it) nor the late piece (it waits for other modules)
            early = range(int(hub), len(chunks) - late_pieces) or range(int(hub), len(chunks))
            first = min(early, key=lambda j: (sum(i.tokens for i in chunks[j]), j))
            rest = tuple(q for j, chunk in enumerate(quals) if j != first for q in chunk)
            for i, own in enumerate(quals):
                node = f"{m}#{i}"
                pieces[node] = Piece(node, m, own, i == first, rest if i == first else (), members[0], hub and i == 0,
                                     i >= len(chunks) - late_pieces)
    if not pieces:
        return graph, {}
    work = _work_graph(graph, pieces, items_of, {m: provided(m) for m in graph}, ordered)
    if ordered:
        condense_piece_cycles(work, pieces)
    return work, pieces


def _provided(graph: nx.DiGraph, m: str, writable: Mapping[str, Collection[str]] | None) -> set[str]:
    """Top-level names of ``m`` whose definitions have something to write: the rest is complete
    in the skeleton (a protocol, a constant, a function left filled)."""
    source = Path(graph.nodes[m]["path"]).read_text(encoding="utf-8")
    return {i.qualname.split(".")[0] for i in definition_items(source, None if writable is None else writable.get(m, ()))}


def _pending_names(graph: nx.DiGraph, m: str, provided: Callable[[str], set[str]]) -> dict[str, set[str]]:
    """Names ``m`` uses that another module still has to write (an ordering dependency's names with
    bodies; in an import cycle, the other members' too), each with the modules that write it: the
    definitions using them go to late pieces, so the rest of ``m`` starts at once (voluptuous:
    ``Required`` waits for ``validators.Any``, ``Schema``'s own methods need not)."""
    pending: dict[str, set[str]] = {}
    for u in graph.predecessors(m):
        if graph.edges[u, m].get("ordering", True):
            for name in set(graph.edges[u, m].get("names", ())) & provided(u):
                pending.setdefault(name, set()).add(u)
    return pending


def _work_graph(graph: nx.DiGraph, pieces: dict[str, Piece], items_of: dict[str, list[list[Item]]],
                provided: Mapping[str, set[str]], ordered: bool) -> nx.DiGraph:
    nodes_of: dict[str, list[str]] = {}
    for node, piece in pieces.items():
        nodes_of.setdefault(piece.module, []).append(node)
    unit = {p.module: p.unit for p in pieces.values()}
    out = nx.DiGraph(**graph.graph)
    for m, data in graph.nodes(data=True):
        if m not in items_of:
            out.add_node(m, **data)
            continue
        source = Path(data["path"]).read_text(encoding="utf-8")
        for node in nodes_of[m]:
            p = pieces[node]
            view = source_view(source, p.definitions, p.omit if p.primary else None)
            out.add_node(node, **{**data, "tokens": estimate_tokens(view), "work": len(p.definitions), "module": m})
    chunk_of = {i.qualname: f"{m}#{k}" for m, chunks in items_of.items() for k, c in enumerate(chunks) for i in c}
    for u, v, d in graph.edges(data=True):
        names = set(d.get("names", ()))
        inside = u in unit and unit.get(u) == unit.get(v)
        for s in _providers(u, names, provided[u], items_of):
            # only names with bodies to write order anything (a constant is in the skeleton)
            for t in _users(v, names & provided[u] if names else names, nodes_of, items_of):
                _add(out, s, t, d["tokens"], sorted(names), d, interface=inside and not ordered)
    for chunks in items_of.values():  # references between pieces of one module
        item = {i.qualname: i for c in chunks for i in c}
        used: dict[tuple[str, str], set[str]] = {}
        for a, b in reference_graph(list(item.values())).edges:
            if chunk_of[a] != chunk_of[b]:
                used.setdefault((chunk_of[a], chunk_of[b]), set()).add(a)
        for (src, dst), quals in sorted(used.items()):
            stubs = sum(item[q].signature_tokens for q in quals)
            # ordered: the user waits for the bodies; at once (or in a cycle): it gets the stubs
            _add(out, src, dst, sum(item[q].tokens for q in quals) if ordered else stubs,
                 sorted({item[q].name for q in quals}), {}, interface=not ordered, stub_tokens=stubs,
                 defs=sorted(quals))
    return out


def _providers(u: str, names: set[str], provided: set[str], items_of: Mapping[str, list[list[Item]]]
               ) -> list[str]:
    """Pieces of ``u`` that define the used names; none if the names are complete in the skeleton
    (a protocol, a constant, a function left filled): nothing to wait for."""
    if not names:
        return [f"{u}#{k}" for k in range(len(items_of[u]))] if u in items_of else [u]
    if u not in items_of:
        return [u] if names & provided else []
    return [f"{u}#{k}" for k, chunk in enumerate(items_of[u])
            if any(i.qualname.split(".")[0] in names for i in chunk)]


def _users(v: str, names: set[str], nodes_of: Mapping[str, list[str]],
           items_of: Mapping[str, list[list[Item]]]) -> list[str]:
    """Pieces of ``v`` whose definitions use the imported names (all of them when names are unknown)."""
    if v not in items_of:
        return [v]
    if not names:
        return nodes_of[v]
    return [f"{v}#{k}" for k, chunk in enumerate(items_of[v]) if any(i.uses & names for i in chunk)]


def _add(out: nx.DiGraph, s: str, t: str, tokens: int, names: list[str], d: Mapping[str, object],
         *, interface: bool, stub_tokens: int | None = None, defs: list[str] | None = None) -> None:
    """``defs``: the sibling definitions a piece uses (their bodies or stubs are what it is shown)."""
    if s == t:
        return
    ordering = bool(d.get("ordering", True)) and not interface
    stub = tokens if stub_tokens is None else stub_tokens  # what crosses if the edge ends up in a cycle
    if out.has_edge(s, t):
        e = out.edges[s, t]
        e["names"] = sorted(set(e["names"]) | set(names))
        e["tokens"] = max(e["tokens"], tokens)
        e["stub_tokens"] = max(e["stub_tokens"], stub)
        e["ordering"] = e["ordering"] or ordering
        e["interface"] = e["interface"] and interface
        if defs:
            e["defs"] = sorted(set(e.get("defs", ())) | set(defs))
        return
    out.add_edge(s, t, names=names, tokens=tokens, stub_tokens=stub, type_only=bool(d.get("type_only", False)),
                 local=bool(d.get("local", False)), ordering=ordering, interface=interface)
    if defs:
        out.edges[s, t]["defs"] = list(defs)
