"""The knowledge graph built from statements, its communities, summaries and local search.

The graph's statements are indexed by document, (head, relation) pair and entity; its networkx
forms are built when first asked for: ``graph``, a ``MultiDiGraph`` with one edge per statement,
keyed by the statement's index, carrying its relation and provenance (document, chunk), and
``simple``, the undirected weighted projection that communities and degrees use. Communities
follow Microsoft GraphRAG (Edge et al., "From Local to Global: A Graph RAG Approach to
Query-Focused Summarization", 2024): Louvain by default (Blondel et al., 2008, via networkx) or
hierarchical Leiden (Traag et al., 2019) through graspologic-native, as GraphRAG itself calls
it, with ``max_cluster_size=10``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import networkx as nx

from environments.graphrag.corpus import Statement, has_ends, name_key

K = TypeVar("K")
C = TypeVar("C", list, set)
_TOKEN = re.compile(r"[^\W_]+")  # words in any script


class KnowledgeGraph:
    """``glosses``: the descriptions of its relations that the graph is published with (a real
    graph's; ``None`` for a generated world), which readers and defenses parse questions with.
    A statement without both ends (:func:`~environments.graphrag.corpus.has_ends`) is left out:
    an empty name is no entity, and would otherwise be every headless statement's shared neighbour."""

    def __init__(self, statements: Sequence[Statement], glosses: Mapping[str, str] | None = None) -> None:
        self.statements = [s for s in statements if has_ends(s)]
        self.glosses = dict(glosses) if glosses is not None else None
        self.by_doc: dict[str, list[int]] = {}
        self.by_pair: dict[tuple[str, str], list[int]] = {}
        self.incident: dict[str, list[int]] = {}
        self.neighbours: dict[str, list[tuple[int, str]]] = {}  # per entity: (statement, the other end)
        self.doc_of: list[str] = [s.doc for s in self.statements]
        self.docs_of_entity: dict[str, set[str]] = {}
        self.parent: KnowledgeGraph | None = None  # the graph this one extends (:meth:`extended`)
        self._index_from(0)
        self._graph: nx.MultiDiGraph | None = None
        self._simple: nx.Graph | None = None
        self._degree: dict[str, int] | None = None
        self._relations: list[str] | None = None
        self._entities: list[str] | None = None
        self.search_cache: dict[tuple[str, tuple[str, ...], int, int], list[int]] = {}
        self.memo: dict[tuple[object, ...], object] = {}  # per-graph results of pure functions of its statements

    def _index_from(self, start: int) -> None:
        for i in range(start, len(self.statements)):
            s = self.statements[i]
            self.by_doc.setdefault(s.doc, []).append(i)
            self.by_pair.setdefault((s.head, s.relation), []).append(i)
            for entity, other in ((s.head, s.tail), (s.tail, s.head)):
                self.incident.setdefault(entity, []).append(i)
                self.neighbours.setdefault(entity, []).append((i, other))
                self.docs_of_entity.setdefault(entity, set()).add(s.doc)

    def extended(self, statements: Sequence[Statement]) -> KnowledgeGraph:
        """The graph ``KnowledgeGraph([*self.statements, *statements], self.glosses)`` builds,
        indexed from this one's indexes: only the keys the new statements touch are copied, and
        the degrees are this graph's plus the new simple edges. A white-box attacker scores
        thousands of candidate corpora against one clean graph (issue #51: a Kinships corpus
        rebuilt its 10,686 statements about 1,740 times). This graph is left unchanged."""
        kg = KnowledgeGraph((), self.glosses)
        kg.parent = self
        statements = [s for s in statements if has_ends(s)]
        kg.statements = [*self.statements, *statements]
        kg.doc_of = [*self.doc_of, *(s.doc for s in statements)]
        kg.by_doc = _copied(self.by_doc, {s.doc for s in statements})
        kg.by_pair = _copied(self.by_pair, {(s.head, s.relation) for s in statements})
        ends = {e for s in statements for e in (s.head, s.tail)}
        kg.incident, kg.neighbours = _copied(self.incident, ends), _copied(self.neighbours, ends)
        kg.docs_of_entity = _copied(self.docs_of_entity, ends)
        kg._index_from(len(self.statements))
        degree = dict(self._degrees())
        seen: set[frozenset[str]] = set()
        for s in statements:
            pair = frozenset((s.head, s.tail))
            if s.head != s.tail and pair not in seen and not self.simple.has_edge(s.head, s.tail):
                seen.add(pair)
                for end in pair:
                    degree[end] = degree.get(end, 0) + 1
        kg._degree = degree
        return kg

    @property
    def graph(self) -> nx.MultiDiGraph:
        """One edge per statement, ``key`` its index, with its relation, document and chunk
        (built when first asked for: training builds thousands of graphs that never use it)."""
        if self._graph is None:
            self._graph = nx.MultiDiGraph()
            for i, s in enumerate(self.statements):
                self._graph.add_edge(s.head, s.tail, key=i, relation=s.relation, doc=s.doc, chunk=s.chunk)
        return self._graph

    @property
    def simple(self) -> nx.Graph:
        """Undirected simple projection; ``weight`` counts the statements between two entities."""
        if self._simple is None:
            self._simple = simple_graph(self.statements, range(len(self.statements)))
        return self._simple

    def degree(self, entity: str) -> int:
        return self._degrees().get(entity, 0)

    def _degrees(self) -> dict[str, int]:
        """Each entity's degree in :attr:`simple` (entities with none left out)."""
        if self._degree is None:
            self._degree = dict(self.simple.degree())
        return self._degree

    def max_degree(self) -> int:
        return max(self._degrees().values(), default=1)

    def entities(self) -> list[str]:
        if self._entities is None:
            self._entities = sorted(self.incident)
        return list(self._entities)

    def relations(self) -> list[str]:
        if self._relations is None:
            self._relations = sorted({s.relation for s in self.statements})
        return list(self._relations)


def _copied(table: dict[K, C], keys: set[K]) -> dict[K, C]:
    """A shallow copy of ``table`` whose values at ``keys`` are copies (lists or sets) too."""
    out = dict(table)
    for key in keys & out.keys():
        out[key] = out[key].copy()
    return out


def simple_graph(statements: Sequence[Statement], ids: Iterable[int]) -> nx.Graph:
    g = nx.Graph()
    for i in ids:
        s = statements[i]
        if s.head == s.tail:
            continue
        if g.has_edge(s.head, s.tail):
            g[s.head][s.tail]["weight"] += 1
        else:
            g.add_edge(s.head, s.tail, weight=1)
    return g


def communities(kg: KnowledgeGraph, method: str = "louvain", seed: int = 0) -> dict[str, int]:
    """Entity -> community id. ``leiden`` needs the ``leiden`` extra (graspologic-native)."""
    g = kg.simple
    if g.number_of_nodes() == 0:
        return {}
    if method == "louvain":
        parts = nx.community.louvain_communities(g, weight="weight", seed=seed)
        return {node: cid for cid, part in enumerate(sorted(parts, key=lambda p: sorted(p)[0])) for node in part}
    if method == "leiden":
        import graspologic_native as gn

        edges = [(str(u), str(v), float(d["weight"])) for u, v, d in g.edges(data=True)]
        clusters = gn.hierarchical_leiden(edges, max_cluster_size=10, seed=seed)
        return {c.node: c.cluster for c in clusters if c.is_final_cluster}
    raise ValueError(f"community method {method!r} is not louvain or leiden")


def community_summaries(kg: KnowledgeGraph, membership: dict[str, int], max_facts: int = 12,
                        phrase: dict[str, str] | None = None) -> dict[int, str]:
    """A deterministic extractive summary per community: its most connected members and the
    statements among them that the most documents attest (an LLM summariser's stand-in)."""
    members: dict[int, list[str]] = {}
    for entity, cid in membership.items():
        members.setdefault(cid, []).append(entity)
    summaries = {}
    for cid, ents in sorted(members.items()):
        inside = set(ents)
        support: Counter[tuple[str, str, str]] = Counter()
        for e in ents:
            for i in kg.incident.get(e, []):
                s = kg.statements[i]
                if s.head in inside and s.tail in inside and not s.negated:
                    support[(s.head, s.relation, s.tail)] += 1
        top = sorted(ents, key=lambda e: (-kg.degree(e), e))[:8]
        facts = sorted(support.items(), key=lambda kv: (-kv[1], kv[0]))[:max_facts]
        lines = [f"{h} {(phrase or {}).get(r, r)} {t}." for (h, r, t), _ in facts]
        summaries[cid] = f"Community {cid} ({len(ents)} entities; central: {', '.join(top)}). " + " ".join(lines)
    return summaries


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def search_entities(kg: KnowledgeGraph, text: str, k: int = 10) -> list[str]:
    """Seed entities by lexical match, as GraphRAG's local search does before ranking (equal
    matches in case-folded order of their names, :func:`~environments.graphrag.corpus.name_key`)."""
    query = tokens(text)
    lowered = text.lower()
    scored = []
    for entity in kg.incident:
        name = tokens(entity)
        if not name:
            continue
        overlap = len(name & query) / len(name)
        exact = entity.lower() in lowered
        if overlap > 0 or exact:
            scored.append((-(overlap + exact), -len(entity), name_key(entity), entity))
    return [e for *_, e in sorted(scored)[:k]]


def local_search(kg: KnowledgeGraph, topic: str, plan: Sequence[str], *, max_incident: int = 4000,
                 max_network: int = 300) -> list[int]:
    """Statement ids of the query subgraph, following GraphRAG's local search.

    Starting at the topic entity, every hop adds the statements incident to the frontier and
    moves the frontier to the objects of the plan's relation (every candidate, conflicting ones
    included). Then relationships among the selected entities are added, highest combined
    degree first, up to ``max_network``. Results are cached on the graph (it never changes).
    """
    key = (topic, tuple(plan), max_incident, max_network)
    if key not in kg.search_cache:
        kg.search_cache[key] = _local_search(kg, topic, plan, max_incident, max_network)
    return list(kg.search_cache[key])


def _take_incident(kg: KnowledgeGraph, entities: Sequence[str], chosen: dict[int, None], cap: int) -> None:
    """Add to ``chosen`` the statements incident to ``entities``: all of them while they fit within
    ``cap``, else the room left shared out one statement per entity in turn (each entity's in index
    order), so no entity loses its neighbourhood for where its name sorts. Session 22: taken in name
    order, the cap cut the later-named candidates of a step; on Nations under ``restate`` with the
    shape dress (15,599 statements) the truth kept 2 of its 12 support paths where the non-fact
    named before it kept 12, and TDP deleted 6 gold statements (none with the cap shared)."""
    queues = [[i for i in kg.incident.get(e, []) if i not in chosen] for e in entities]
    if len(chosen) + len({i for q in queues for i in q}) <= cap:
        for queue in queues:
            chosen.update(dict.fromkeys(queue))
        return
    heads = [0] * len(queues)
    while len(chosen) < cap:
        took = False
        for k, queue in enumerate(queues):
            while heads[k] < len(queue) and queue[heads[k]] in chosen:
                heads[k] += 1
            if heads[k] < len(queue) and len(chosen) < cap:
                chosen[queue[heads[k]]] = None
                heads[k] += 1
                took = True
        if not took:
            return


def _local_search(kg: KnowledgeGraph, topic: str, plan: Sequence[str], max_incident: int,
                  max_network: int) -> list[int]:
    frontier, selected_entities = {topic}, {topic}
    chosen: dict[int, None] = {}
    for relation in [*plan, None]:
        _take_incident(kg, sorted(frontier), chosen, max_incident)
        if relation is None:
            break
        nxt = {kg.statements[i].tail for e in frontier for i in kg.by_pair.get((e, relation), [])}
        selected_entities |= nxt
        frontier = nxt
    for e in list(selected_entities):
        selected_entities.update(kg.statements[i].head for i in kg.incident.get(e, []) if i in chosen)
        selected_entities.update(kg.statements[i].tail for i in kg.incident.get(e, []) if i in chosen)
    network = [i for e in selected_entities for i in kg.incident.get(e, [])
               if i not in chosen and kg.statements[i].head in selected_entities
               and kg.statements[i].tail in selected_entities]
    network = sorted(set(network), key=lambda i: (-(kg.degree(kg.statements[i].head) + kg.degree(kg.statements[i].tail)), i))
    for i in network[:max_network]:
        chosen.setdefault(i)
    return sorted(chosen)
