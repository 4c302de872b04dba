"""Function granularity: split a module (or an import cycle) too big for one agent's share.

At file granularity one file can be most of a repository's critical path, and an import cycle
puts its modules in one agent's hands. Here a unit of the condensed graph whose writing work
(output tokens) exceeds ``total / k`` is split into cohesive pieces of its definitions (big
classes split by methods), at most ``k`` per module (``per_agent``: exactly ``k``). Pieces of one unit are written at once by
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
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import NamedTuple

import networkx as nx

from controllers.cocoder.ordering import condense_piece_cycles, ordered_pieces, reference_graph
from environments.cocoder.defs import Item, definition_items, source_view
from environments.cocoder.depgraph import condense, estimate_tokens, module_interfaces

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
                   *, ordered: bool = False, late: bool = False, per_agent: bool = False,
                   read: dict[str, Bodies] | None = None) -> tuple[nx.DiGraph, dict[str, Piece]]:
    """The work graph at function granularity and its pieces (empty when nothing is split).

    ``writable``: module -> the qualified names of its blanked functions (None: every function);
    module sources are read from the graph's ``path`` attributes (the reference code).
    ``ordered``: pieces along the reference graph (hubs first) that wait for what they use;
    otherwise contiguous pieces written at once against each other's stubs. A module is cut into
    ``ceil(tokens / share)`` pieces, or with ``per_agent`` into ``agents`` (more, smaller pieces:
    shorter waits for a late piece that uses them, one more view to read). ``read``: module ->
    its :class:`Bodies`, kept by a caller that splits the same graph with the same ``writable``
    several times (each read parses the module's source).
    """
    total = sum(graph.nodes[m].get("tokens", 0) for m in graph)
    share = total / max(agents, 1)
    dag, component = condense(graph)
    # module -> the modules finished before it (its ancestors outside its own import cycle)
    before = cache(lambda m: {o for c in nx.ancestors(dag, component[m]) for o in dag.nodes[c]["members"]})
    # read lazily, once per module: a graph with nothing to split may carry no sources
    read = {} if read is None else read

    def bodies(m: str) -> Bodies:
        if m not in read:
            read[m] = _bodies(graph, m, writable)
        return read[m]

    pieces: dict[str, Piece] = {}
    items_of: dict[str, list[list[Item]]] = {}
    for c in sorted(dag, key=lambda c: dag.nodes[c]["members"]):
        members = dag.nodes[c]["members"]
        if agents < 2 or sum(graph.nodes[m].get("tokens", 0) for m in members) <= share:
            continue
        for m in members:
            source = Path(graph.nodes[m]["path"]).read_text(encoding="utf-8")
            todo = None if writable is None else writable.get(m, ())
            n = agents if per_agent else min(agents, math.ceil(graph.nodes[m].get("tokens", 0) / share))
            # a class bigger than one balanced piece is split by its members
            items = definition_items(source, todo, class_limit=graph.nodes[m].get("tokens", 0) / max(n, 1))
            chunks: list[list[Item]] = []
            hub, late_pieces = False, 0
            if items and n > 1:
                waits = _pending_names(graph, m, lambda u: bodies(u).provided) if late else {}
                chunks, hub, late_pieces = (ordered_pieces(items, n, share, balanced_pieces, waits,
                                                           {u: before(u) for w in waits.values() for u in w})
                                            if ordered else (balanced_pieces(items, n), False, 0))
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
    work = _work_graph(graph, pieces, items_of, {m: bodies(m) for m in graph}, ordered)
    if ordered:
        condense_piece_cycles(work, pieces)
    return work, pieces


class Bodies(NamedTuple):
    """What a module's bodies to write define and use (the work graph orders by these)."""

    provided: frozenset[str]  # top-level names with something to write (the rest is complete in the skeleton)
    used: frozenset[str]  # names those bodies use
    api: Mapping[str, int]  # top-level name -> tokens of its interface


def _bodies(graph: nx.DiGraph, m: str, writable: Mapping[str, Collection[str]] | None) -> Bodies:
    source = Path(graph.nodes[m]["path"]).read_text(encoding="utf-8")
    items = definition_items(source, None if writable is None else writable.get(m, ()))
    api = {n: estimate_tokens(t) for n, t in module_interfaces(source).items()}
    return Bodies(frozenset(i.qualname.split(".")[0] for i in items),
                  frozenset(n for i in items for n in i.uses), api)


def _pending_names(graph: nx.DiGraph, m: str, provided: Callable[[str], Collection[str]]) -> dict[str, set[str]]:
    """Names ``m`` uses that another module still has to write (an ordering dependency's names with
    bodies; in an import cycle, the other members' too), each with the modules that write it: the
    definitions using them go to late pieces, so the rest of ``m`` starts at once (voluptuous:
    ``Required`` waits for ``validators.Any``, ``Schema``'s own methods need not)."""
    pending: dict[str, set[str]] = {}
    for u in graph.predecessors(m):
        if graph.edges[u, m].get("ordering", True):
            for name in set(graph.edges[u, m].get("names", ())).intersection(provided(u)):
                pending.setdefault(name, set()).add(u)
    return pending


def _work_graph(graph: nx.DiGraph, pieces: dict[str, Piece], items_of: dict[str, list[list[Item]]],
                bodies: Mapping[str, Bodies], ordered: bool) -> nx.DiGraph:
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
        inside = u in unit and unit.get(u) == unit.get(v)
        # only what v's bodies use of u's names with bodies to write orders anything (a constant,
        # a re-export, a name used in a signature or a docstring is in the skeleton already)
        names = set(d.get("names", ())) or (bodies[u].provided if _module_named(u, bodies[v].used) else set())
        wanted = names & bodies[u].provided & bodies[v].used
        if u not in items_of:
            for t in _users(v, wanted, items_of):
                _add(out, u, t, d["tokens"], sorted(d.get("names", ())), d, interface=inside and not ordered)
            continue
        shown = _first_definers(u, wanted, items_of)
        for s in _providers(u, wanted, items_of):
            api = sorted(shown.get(s, ()))
            for t in _users(v, wanted, items_of):
                # a split class's interface crosses once, with its first piece; the others only order
                _add(out, s, t, sum(bodies[u].api.get(n, 0) for n in api), api, d,
                     interface=inside and not ordered)
    for chunks in items_of.values():  # references between pieces of one module
        item = {i.qualname: i for c in chunks for i in c}
        used: dict[tuple[str, str], set[str]] = {}
        for a, b in reference_graph(list(item.values())).edges:
            if chunk_of[a] != chunk_of[b]:
                used.setdefault((chunk_of[a], chunk_of[b]), set()).add(a)
        for (src, dst), quals in sorted(used.items()):
            # ordered: the user waits for the definitions, then gets their interfaces as written (the
            # spec's c_uv, as between modules); at once (or in a cycle): the skeleton's stubs
            api_tokens = sum(item[q].interface_tokens for q in quals)
            _add(out, src, dst, api_tokens, sorted({item[q].name for q in quals}), {}, interface=not ordered,
                 defs=sorted(quals))
    return out


def _module_named(u: str, used: Collection[str]) -> bool:
    """Whether bodies using ``used`` refer to module ``u`` itself (``import pkg.u``, ``pkg.u.name``)."""
    return any(part in used for part in u.split("."))


def _first_definers(u: str, names: AbstractSet[str], items_of: Mapping[str, list[list[Item]]]) -> dict[str, set[str]]:
    """Piece of ``u`` -> the used names whose interface it carries: each name's first defining piece."""
    first: dict[str, set[str]] = {}
    for name in sorted(names):
        k = next(k for k, chunk in enumerate(items_of[u]) if any(i.qualname.split(".")[0] == name for i in chunk))
        first.setdefault(f"{u}#{k}", set()).add(name)
    return first


def _providers(u: str, names: AbstractSet[str], items_of: Mapping[str, list[list[Item]]]) -> list[str]:
    """Pieces of split module ``u`` that define the used names."""
    return [f"{u}#{k}" for k, chunk in enumerate(items_of[u]) if any(i.qualname.split(".")[0] in names for i in chunk)]


def _users(v: str, names: AbstractSet[str], items_of: Mapping[str, list[list[Item]]]) -> list[str]:
    """``v`` (or its pieces) whose definitions use ``names``; none when nothing is used."""
    if not names:
        return []
    if v not in items_of:
        return [v]
    return [f"{v}#{k}" for k, chunk in enumerate(items_of[v]) if any(i.uses & names for i in chunk)]


def _add(out: nx.DiGraph, s: str, t: str, tokens: int, names: list[str], d: Mapping[str, object],
         *, interface: bool, stub_tokens: int | None = None, defs: list[str] | None = None) -> None:
    """``defs``: the sibling definitions a piece uses (their interfaces are what it is shown)."""
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
