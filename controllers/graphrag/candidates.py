"""Conflicting candidate subgraphs: for a query, the evidence behind each competing answer.

A conflict is a step (entity s, relation r) of the query's plan where the retrieved statements
name two or more objects. The candidate subgraph of object o holds the statements asserting
(s, r, o), negations written in the same documents (they argue for o), and the supporting
structure: retrieved statements on paths s - x - o through a third entity x.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from environments.graphrag.kg import KnowledgeGraph
from environments.graphrag.parse import Interpretation, interpret
from environments.graphrag.pipeline import Query


@lru_cache(maxsize=4096)
def interpret_query(kg: KnowledgeGraph, query: Query) -> Interpretation | None:
    """A defense's own reading of the query text (it is never given the gold plan)."""
    return interpret(query.text, kg.entities(), kg.relations(), kg.glosses)


@dataclass
class Candidate:
    answer: str
    claims: set[int] = field(default_factory=set)
    negations: set[int] = field(default_factory=set)
    support: set[int] = field(default_factory=set)  # statements on s - x - o paths
    support_nodes: set[str] = field(default_factory=set)
    # support statements per third entity x: (those linking x to the entity, those linking x to the answer)
    support_by_node: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)

    @property
    def edges(self) -> set[int]:
        return self.claims | self.negations | self.support

    def claim_docs(self, kg: KnowledgeGraph) -> set[str]:
        return {kg.statements[i].doc for i in self.claims}


@dataclass
class Conflict:
    entity: str
    relation: str
    candidates: list[Candidate]


def objects_at(kg: KnowledgeGraph, retrieved: set[int], entity: str, relation: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for i in kg.by_pair.get((entity, relation), []):
        if i in retrieved and not kg.statements[i].negated:
            out.setdefault(kg.statements[i].tail, set()).add(i)
    return out


def build_conflict(kg: KnowledgeGraph, retrieved: set[int], entity: str, relation: str) -> Conflict | None:
    objects = objects_at(kg, retrieved, entity, relation)
    if len(objects) < 2:
        return None
    contested = set(kg.by_pair.get((entity, relation), []))

    def around(node: str) -> dict[str, list[int]]:  # retrieved, uncontested statements at ``node``, by neighbour
        out: dict[str, list[int]] = {}
        for i, other in kg.neighbours.get(node, ()):
            if i in retrieved and i not in contested:
                out.setdefault(other, []).append(i)
        return out

    around_entity = around(entity)
    candidates = []
    for answer, claims in sorted(objects.items()):
        cand = Candidate(answer, claims=set(claims))
        docs = cand.claim_docs(kg)
        cand.negations = {i for i in contested if i in retrieved and kg.statements[i].negated
                          and kg.statements[i].doc in docs}
        around_answer = around(answer)
        for x in set(around_entity) & set(around_answer):
            if x in (entity, answer):
                continue
            cand.support_nodes.add(x)
            cand.support.update(around_entity[x])
            cand.support.update(around_answer[x])
            cand.support_by_node[x] = (around_entity[x], around_answer[x])
        candidates.append(cand)
    return Conflict(entity, relation, candidates)


def walk_plan(kg: KnowledgeGraph, alive: set[int], topic: str, plan: Sequence[str],
              settle: Callable[[Conflict], Iterable[str]],
              check: Callable[[str, str, dict[str, set[int]]], None] | None = None) -> None:
    """Follow a query's plan from its topic over the ``alive`` statements. Unconflicted steps
    follow every object (after ``check`` looked at their claims, and may have shrunk ``alive``);
    at a conflict ``settle`` names the answers to follow (it may shrink ``alive`` in place, as a
    defense that removes evidence does)."""
    frontier = {topic}
    for relation in plan:
        nxt: set[str] = set()
        for entity in sorted(frontier):
            conflict = build_conflict(kg, alive, entity, relation)
            if conflict is None:
                if check is not None:
                    check(entity, relation, objects_at(kg, alive, entity, relation))
                nxt.update(objects_at(kg, alive, entity, relation))
            else:
                nxt.update(settle(conflict))
        frontier = nxt


def document_subject(kg: KnowledgeGraph, doc: str, min_statements: int = 3, share: float = 0.75,
                     long_page: int = 5, long_share: float = 0.5) -> str | None:
    """The entity a document is about, when it has one: taking part in at least ``share`` of its
    (at least ``min_statements``) statements, as an encyclopedia page's subject does; in a page of
    ``long_page`` statements or more, in at least ``long_share`` of them and more than any other
    entity (a long page keeps its subject when several of its sentences were rewritten, as TKPA
    does when two targets share an object; a three-fact news item never has one this way).
    Memoised on the graph (it depends only on the graph's statements)."""
    key = ("document_subject", doc, min_statements, share, long_page, long_share)
    if key not in kg.memo:
        kg.memo[key] = _document_subject(kg, doc, min_statements, share, long_page, long_share)
    return kg.memo[key]


def _document_subject(kg: KnowledgeGraph, doc: str, min_statements: int, share: float,
                      long_page: int, long_share: float) -> str | None:
    ids = kg.by_doc.get(doc, [])
    if len(ids) < min_statements:
        return None
    counts: dict[str, int] = {}
    for i in ids:
        s = kg.statements[i]
        for e in {s.head, s.tail}:
            counts[e] = counts.get(e, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    entity, n = ranked[0]
    if n >= share * len(ids):
        return entity
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    return entity if len(ids) >= long_page and n >= long_share * len(ids) and n > runner_up else None


def off_subject_statement(kg: KnowledgeGraph, entity: str, i: int) -> bool:
    """Statement ``i`` about ``entity`` sits in a page about a third entity, which clean pages do
    only for a neighbour of their subject (prose such as "X was born in Tisro, which lies in
    Venland" on X's page, where the page links X to Tisro itself): an unanchored one's object
    was likely rewritten."""
    doc = kg.statements[i].doc
    subject = document_subject(kg, doc)
    if subject is None or subject in (entity, kg.statements[i].tail):
        return False
    return not any({kg.statements[j].head, kg.statements[j].tail} == {subject, entity}
                   for j in kg.by_doc.get(doc, []) if j != i)


def off_subject_claims(kg: KnowledgeGraph, entity: str, claims: set[int]) -> bool:
    """Cross-document provenance check for an uncontested claim (TKPA's edits leave no
    conflict): one of its statements sits in a page about a third entity."""
    return any(off_subject_statement(kg, entity, i) for i in claims)
