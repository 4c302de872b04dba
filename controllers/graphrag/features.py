"""Topology features of a candidate subgraph, raw and provenance-aware.

Raw features (common neighbours, triangles, clustering, size) are what a plain topology
defense would use; GragPoison's enhancement step fakes them: the poisoned edge gets more common
neighbours and triangles than a clean edge. The provenance-aware features look at where the
structure comes from: whether the documents asserting the claim are corroborated elsewhere,
whether supporting paths are attested by more than one document, whether supporting entities
exist outside the contested documents, their background degree, and their core number once
the candidate's own documents are removed (a fabricated neighbourhood collapses).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache

import networkx as nx
import numpy as np

from controllers.graphrag.candidates import Candidate, Conflict
from environments.graphrag.corpus import Fact
from environments.graphrag.kg import KnowledgeGraph, simple_graph

RAW_FEATURES = ("common_neighbours", "triangles_at_answer", "clustering_at_answer", "subgraph_edges")
PROVENANCE_FEATURES = ("claim_documents", "claim_doc_corroboration", "multi_doc_support_paths",
                       "isolated_support_share", "support_background_degree", "support_core_without_own_docs",
                       "corroborated_claim_docs", "independent_support_paths")
# Counts that evidence for a candidate can only raise (issue #38): more documents restating a
# candidate's claim or its neighbourhood never lower any of them, so a ranker with non-negative
# weights on them (:data:`MONOTONE_FEATURES`) cannot be turned against the truth by restating it.
COUNT_FEATURES = ("attested_support", "support_background_sum", "support_core_sum")
FEATURES = RAW_FEATURES + PROVENANCE_FEATURES + COUNT_FEATURES
MONOTONE_FEATURES = ("common_neighbours", "triangles_at_answer", "subgraph_edges", "claim_documents",
                     "multi_doc_support_paths", "corroborated_claim_docs", "independent_support_paths",
                     *COUNT_FEATURES)


@lru_cache(maxsize=16)
def fact_documents(kg: KnowledgeGraph) -> dict[Fact, frozenset[str]]:
    """Distinct documents asserting each fact (negations excluded)."""
    out: dict[Fact, set[str]] = {}
    for s in kg.statements:
        if not s.negated:
            out.setdefault(s.fact(), set()).add(s.doc)
    return {f: frozenset(d) for f, d in out.items()}


@lru_cache(maxsize=16)
def max_log_degree(kg: KnowledgeGraph) -> float:
    return math.log1p(max((d for _, d in kg.simple.degree()), default=1))


class QueryContext:
    """Per-query structures shared by the features of every candidate."""

    def __init__(self, kg: KnowledgeGraph, retrieved: Iterable[int], conflict: Conflict) -> None:
        self.kg = kg
        self._retrieved_set = set(retrieved)
        self.retrieved = sorted(self._retrieved_set)
        self.conflict = conflict
        self.graph = simple_graph(kg.statements, self.retrieved)
        contested = kg.by_pair.get((conflict.entity, conflict.relation), [])
        self.contest_docs = {kg.statements[i].doc for i in contested}
        self._triangles: dict[str, int] | None = None

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


def _multi_doc(kg: KnowledgeGraph, ids: Iterable[int], min_docs: int = 2) -> bool:
    docs = fact_documents(kg)
    return any(len(docs.get(kg.statements[i].fact(), ())) >= min_docs for i in ids)


def _attested_outside(kg: KnowledgeGraph, ids: Iterable[int], contest_docs: set[str]) -> bool:
    """Some edge among ``ids`` is stated by a document that says nothing about the contested
    (entity, relation): support a claim's own documents cannot supply (cross-document support)."""
    docs = fact_documents(kg)
    return any(docs.get(kg.statements[i].fact(), frozenset()) - contest_docs for i in ids)


def candidate_features(ctx: QueryContext, cand: Candidate) -> np.ndarray:
    kg, s, o = ctx.kg, ctx.conflict.entity, cand.answer
    docs_of_fact = fact_documents(kg)
    own_docs = cand.claim_docs(kg)
    support = sorted(cand.support_nodes)

    corroboration = []
    for doc in own_docs:
        others = [kg.statements[i] for i in kg.by_doc.get(doc, [])
                  if not (kg.statements[i].head == s and kg.statements[i].relation == ctx.conflict.relation)]
        if others:
            corroboration.append(np.mean([bool(docs_of_fact.get(x.fact(), frozenset()) - own_docs) for x in others]))
    strong = 0
    independent = 0
    isolated = 0
    background = []
    outside_sum = 0
    for x in support:
        to_s = [i for i in cand.support if {kg.statements[i].head, kg.statements[i].tail} == {s, x}]
        to_o = [i for i in cand.support if {kg.statements[i].head, kg.statements[i].tail} == {x, o}]
        strong += _multi_doc(kg, to_s) and _multi_doc(kg, to_o)
        independent += _attested_outside(kg, to_s, ctx.contest_docs) and _attested_outside(kg, to_o, ctx.contest_docs)
        isolated += kg.docs_of_entity.get(x, set()) <= ctx.contest_docs
        outside = max(kg.degree(x) - sum(1 for y in (s, o) if kg.simple.has_edge(x, y)), 0)
        background.append(math.log1p(outside) / max_log_degree(kg))
        outside_sum += outside
    pruned = ctx.without_documents(own_docs)
    cores = nx.core_number(pruned) if pruned.number_of_edges() else {}
    top_core = max(cores.values(), default=1) or 1
    core = [cores.get(x, 0) / top_core for x in support]

    g = ctx.graph
    return np.array([
        math.log1p(len(support)),
        math.log1p(ctx.triangles(o)),
        nx.clustering(g, o) if o in g else 0.0,
        math.log1p(len(cand.edges)),
        math.log1p(len(own_docs)),
        float(np.mean(corroboration)) if corroboration else 0.0,
        math.log1p(strong),
        isolated / len(support) if support else 0.0,
        float(np.mean(background)) if background else 0.0,
        float(np.mean(core)) if core else 0.0,
        math.log1p(sum(c >= 0.5 for c in corroboration)),
        math.log1p(independent),
        math.log1p(len(support) - isolated),
        math.log1p(outside_sum),
        math.log1p(sum(cores.get(x, 0) for x in support)),
    ])
