"""Topology features of a candidate subgraph, raw and provenance-aware.

Raw features (common neighbours, triangles, clustering, size) are what a plain topology
defense would use; GragPoison's enhancement step fakes them: the poisoned edge gets more common
neighbours and triangles than a clean edge. The provenance-aware features look at where the
structure comes from: whether the documents asserting the claim are corroborated elsewhere,
whether supporting paths are attested by more than one document, whether supporting entities
exist outside the contested documents, their background degree, and their core number once
the candidate's own documents are removed (a fabricated neighbourhood collapses).

``anchored_corroborated_ends`` counts the claim's ends (its entity, its object) about which a
claim document is written (:func:`document_subject`), where an encyclopedia keeps the fact,
whose other statements are mostly stated elsewhere: 0, 1 or 2. Issue #51: without the anchor, a
three-sentence attacker document with two copied true facts counted as much as a clean page
about either end; counting documents rather than ends, five attacker pages written about the
entity (true facts of it copied around the fake claim) outweighed its one real page. A page that
also retracts the claim ("no longer works for X", :func:`retracting_docs`) anchors nothing: an
employer's change left the old one stated on two pages and the new one on one.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from functools import cached_property, lru_cache

import networkx as nx
import numpy as np

from controllers.graphrag.candidates import Candidate, Conflict, document_subject
from environments.graphrag.corpus import Fact
from environments.graphrag.kg import KnowledgeGraph, simple_graph

RAW_FEATURES = ("common_neighbours", "triangles_at_answer", "clustering_at_answer", "subgraph_edges")
PROVENANCE_FEATURES = ("claim_documents", "claim_doc_corroboration", "multi_doc_support_paths",
                       "isolated_support_share", "support_background_degree", "support_core_without_own_docs",
                       "anchored_corroborated_ends", "independent_support_paths")
# Counts that evidence for a candidate can only raise (issue #38): more documents restating a
# candidate's claim or its neighbourhood never lower any of them, so a ranker with non-negative
# weights on them (:data:`MONOTONE_FEATURES`) cannot be turned against the truth by restating it.
COUNT_FEATURES = ("attested_support", "support_background_sum", "support_core_sum")
FEATURES = RAW_FEATURES + PROVENANCE_FEATURES + COUNT_FEATURES
MONOTONE_FEATURES = ("common_neighbours", "triangles_at_answer", "subgraph_edges", "claim_documents",
                     "multi_doc_support_paths", "anchored_corroborated_ends", "independent_support_paths",
                     *COUNT_FEATURES)
# Features that need core numbers without a candidate's documents (the costliest structure).
_NEEDS_CORES = ("support_core_without_own_docs", "support_core_sum")


@lru_cache(maxsize=16)
def fact_documents(kg: KnowledgeGraph) -> dict[Fact, frozenset[str]]:
    """Distinct documents asserting each fact (negations excluded); a graph that extends another
    (:meth:`KnowledgeGraph.extended`) adds its new statements' documents to the other's."""
    if kg.parent is not None:
        grown = dict(fact_documents(kg.parent))
        for s in kg.statements[len(kg.parent.statements):]:
            if not s.negated:
                grown[s.fact()] = grown.get(s.fact(), frozenset()) | {s.doc}
        return grown
    out: dict[Fact, set[str]] = {}
    for s in kg.statements:
        if not s.negated:
            out.setdefault(s.fact(), set()).add(s.doc)
    return {f: frozenset(d) for f, d in out.items()}


@lru_cache(maxsize=16)
def max_log_degree(kg: KnowledgeGraph) -> float:
    return math.log1p(kg.max_degree())


class QueryContext:
    """Per-query structures shared by the features of every candidate."""

    def __init__(self, kg: KnowledgeGraph, retrieved: Iterable[int], conflict: Conflict,
                 paged_support: bool = False, witnessed: bool = False,
                 unanchoring: Collection[str] = frozenset()) -> None:
        self.kg = kg
        self.paged_support = paged_support  # support is attested only by a page about an end of its link
        self.witnessed = witnessed  # one page witnesses one support path (:func:`witnessed_paths`)
        self.unanchoring = frozenset(unanchoring)  # pages that anchor no claim at the entity
        self._retrieved_set = set(retrieved)
        self.conflict = conflict
        self.contested = frozenset(kg.by_pair.get((conflict.entity, conflict.relation), []))  # every (s, r, *) statement
        self.contest_docs = {kg.doc_of[i] for i in self.contested}
        self._triangles: dict[str, int] | None = None

    @cached_property
    def retrieved(self) -> list[int]:
        """The retrieved statements in index order (sorted when a feature needs them)."""
        return sorted(self._retrieved_set)

    @cached_property
    def graph(self) -> nx.Graph:
        """The retrieved statements as a weighted simple graph (built when a feature needs it)."""
        return simple_graph(self.kg.statements, self.retrieved)

    def without_documents(self, docs: set[str]) -> nx.Graph:
        """The retrieved graph minus every statement from ``docs``."""
        g = self.graph.copy()
        for doc in docs:
            for i in self.kg.by_doc.get(doc, []):
                s = self.kg.statements[i]
                if g.has_edge(s.head, s.tail) and i in self._retrieved_set:
                    g[s.head][s.tail]["weight"] -= 1
                    if g[s.head][s.tail]["weight"] <= 0:
                        g.remove_edge(s.head, s.tail)
        return g

    def triangles(self, node: str) -> int:
        if self._triangles is None:
            self._triangles = nx.triangles(self.graph)
        return self._triangles.get(node, 0)


@lru_cache(maxsize=16)
def statement_documents(kg: KnowledgeGraph) -> list[frozenset[str]]:
    """Per statement, the distinct documents asserting its fact (:func:`fact_documents`)."""
    docs = fact_documents(kg)
    if kg.parent is None:
        return [docs.get(s.fact(), frozenset()) for s in kg.statements]
    before, base = fact_documents(kg.parent), kg.parent.statements
    out = [*statement_documents(kg.parent), *(docs.get(s.fact(), frozenset()) for s in kg.statements[len(base):])]
    for f in {s.fact() for s in kg.statements[len(base):]}:
        if docs.get(f) != before.get(f):  # the earlier statements of a restated fact
            for i in kg.by_pair.get((f.head, f.relation), []):
                if i < len(base) and base[i].tail == f.tail:
                    out[i] = docs[f]
    return out


def _multi_doc(kg: KnowledgeGraph, ids: Iterable[int], min_docs: int = 2) -> bool:
    docs = statement_documents(kg)
    return any(len(docs[i]) >= min_docs for i in ids)


def attesting_pages(kg: KnowledgeGraph, ids: Iterable[int], contest_docs: set[str], paged: bool = False) -> set[str]:
    """The documents stating an edge among ``ids`` that say nothing about the contested (entity,
    relation): support a claim's own documents cannot supply (cross-document support).
    ``paged``: those of them that are pages about an end of the edge they state
    (:func:`document_subject`), where an encyclopedia keeps a link; a note about a third entity
    or about none attests nothing (issue #51: ``bridged``'s bridge notes)."""
    docs = statement_documents(kg)
    out: set[str] = set()
    for i in ids:
        ends = (kg.statements[i].head, kg.statements[i].tail)
        out |= {d for d in docs[i] - contest_docs if not paged or document_subject(kg, d) in ends}
    return out


def witnessed_paths(witnesses: dict[str, set[str]]) -> int:
    """The most support paths (keys: their third entity) that distinct pages can witness, one
    page per path: the size of a maximum matching between paths and the pages attesting their
    link to the answer (augmenting paths; Berge, PNAS 1957). Issue #51: one attacker page about
    the fake object listing fifteen fabricated links counted as fifteen independent paths, where
    a clean answer's paths are witnessed by the pages of fifteen different entities. More pages
    can only raise it, so a true page never lowers a true answer's count."""
    owner: dict[str, str] = {}

    def augment(path: str, seen: set[str]) -> bool:
        for page in sorted(witnesses[path] - seen):
            seen.add(page)
            if page not in owner or augment(owner[page], seen):
                owner[page] = path
                return True
        return False

    return sum(augment(path, set()) for path in sorted(witnesses))


def _support_by_node(kg: KnowledgeGraph, cand: Candidate, s: str, o: str) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The candidate's support statements grouped by their third entity: those linking it to
    ``s``, and those linking it to ``o`` (as :func:`build_conflict` recorded them)."""
    if cand.support_by_node or not cand.support:
        return ({x: a for x, (a, _) in cand.support_by_node.items()},
                {x: b for x, (_, b) in cand.support_by_node.items()})
    to_s: dict[str, list[int]] = {}
    to_o: dict[str, list[int]] = {}
    for i in cand.support:
        st = kg.statements[i]
        ends = {st.head, st.tail}
        for end, out in ((s, to_s), (o, to_o)):
            if end in ends and len(ends) == 2:
                out.setdefault(next(iter(ends - {end})), []).append(i)
    return to_s, to_o


def retracting_docs(kg: KnowledgeGraph, cand: Candidate) -> set[str]:
    """The candidate's claim documents that also negate its claim (a dated retraction)."""
    return {kg.statements[i].doc for i in cand.negations if kg.statements[i].tail == cand.answer}


def candidate_features(ctx: QueryContext, cand: Candidate, needed: Collection[str] | None = None) -> np.ndarray:
    """The candidate's feature vector (in :data:`FEATURES` order). With ``needed``, only those
    features are computed and the others are left at 0: a ranker that weighs the others 0 scores
    the same, bit for bit (``tests/graphrag/test_tdp_speed.py`` compares verdicts), and skips the
    costly structure (the retrieved graph's triangles, core numbers without the candidate's
    documents)."""
    wanted = set(FEATURES if needed is None else needed)

    def want(*names: str) -> bool:
        return not wanted.isdisjoint(names)

    kg, s, o = ctx.kg, ctx.conflict.entity, cand.answer
    own_docs = cand.claim_docs(kg)
    support = sorted(cand.support_nodes)

    corroboration = []
    anchored: set[str | None] = set()  # ends (s, o) a claim document about them, mostly corroborated, is written on
    if want("claim_doc_corroboration", "anchored_corroborated_ends"):
        docs_of = statement_documents(kg)
        contested = ctx.contested
        retracted = retracting_docs(kg, cand)
        for doc in own_docs:
            others = [i for i in kg.by_doc.get(doc, []) if i not in contested]
            if others:
                # the share of 0/1 values: exact, as np.mean gives it
                corroboration.append(sum(bool(docs_of[i] - own_docs) for i in others) / len(others))
                if corroboration[-1] >= 0.5 and doc not in retracted:
                    anchored.add(document_subject(kg, doc) if doc not in ctx.unanchoring else None)
    strong = independent = isolated = outside_sum = 0
    witnesses: dict[str, set[str]] = {}  # per independent path, the pages attesting its link to the answer
    background = []
    by_s, by_o = _support_by_node(kg, cand, s, o)
    do_strong, do_independent = want("multi_doc_support_paths"), want("independent_support_paths")
    do_isolated = want("isolated_support_share", "attested_support")
    do_outside = want("support_background_degree", "support_background_sum")
    for x in support if do_strong or do_independent or do_isolated or do_outside else ():
        to_s, to_o = by_s.get(x, []), by_o.get(x, [])
        if do_strong:
            strong += _multi_doc(kg, to_s) and _multi_doc(kg, to_o)
        if do_independent and (pages := attesting_pages(kg, to_o, ctx.contest_docs, ctx.paged_support)) \
                and attesting_pages(kg, to_s, ctx.contest_docs, ctx.paged_support):
            independent += 1
            witnesses[x] = pages
        if do_isolated:
            isolated += kg.docs_of_entity.get(x, set()) <= ctx.contest_docs
        if do_outside:
            outside = max(kg.degree(x) - sum(1 for y in (s, o) if kg.simple.has_edge(x, y)), 0)
            background.append(math.log1p(outside) / max_log_degree(kg))
            outside_sum += outside
    if ctx.witnessed:
        independent = witnessed_paths(witnesses)
    cores: dict[str, int] = {}
    core: list[float] = []
    if want(*_NEEDS_CORES):
        pruned = ctx.without_documents(own_docs)
        cores = nx.core_number(pruned) if pruned.number_of_edges() else {}
        top_core = max(cores.values(), default=1) or 1
        core = [cores.get(x, 0) / top_core for x in support]

    g = ctx.graph if want("clustering_at_answer") else None
    return np.array([
        math.log1p(len(support)),
        math.log1p(ctx.triangles(o)) if want("triangles_at_answer") else 0.0,
        (nx.clustering(g, o) if o in g else 0.0) if g is not None else 0.0,
        math.log1p(len(cand.edges)),
        math.log1p(len(own_docs)),
        float(np.mean(corroboration)) if corroboration and want("claim_doc_corroboration") else 0.0,
        math.log1p(strong),
        isolated / len(support) if support and do_isolated else 0.0,
        float(np.mean(background)) if background else 0.0,
        float(np.mean(core)) if core else 0.0,
        math.log1p(len(anchored & {s, o})),
        math.log1p(independent),
        math.log1p(len(support) - isolated) if do_isolated else 0.0,
        math.log1p(outside_sum),
        math.log1p(sum(cores.get(x, 0) for x in support)),
    ])
