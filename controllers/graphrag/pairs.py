"""A pair's own relation: where a graph links nearly every pair of its entities with one relation.

Kinships (Denham's Alyawarra data, pykeen) states a kin term for 10,686 of its 10,712 ordered pairs
of persons, one term per pair: every person is *someone* to every other. There, a candidate object
o at a step (s, r) whose pair (s, o) the graph already gives another relation r' (one that the graph
rarely states beside r on a pair) is contradicted by the pair's own term, and topology cannot help
otherwise: every candidate has every other person as a common neighbour (issue #51, session 26's
trace: the fake and the truth tie on both of TDP's counts, and the reader counts the attacker's
documents). The same idea as :func:`controllers.graphrag.accounts.functional`, on pairs instead of
subjects: read from the graph's own statistics, never from a schema, and off where the graph leaves
most pairs unlinked (generated worlds, GeoNames), since there a free pair is the rule, not a tell.
"""

from __future__ import annotations

from collections.abc import Collection

from controllers.graphrag.candidates import Candidate, Conflict, document_subject
from environments.graphrag.kg import KnowledgeGraph

COMPLETE = 0.5  # most (subject, object) pairs of the relation's ends carry some relation
MIN_ENDS = 10  # subjects and objects each: a statistic over one or two pairs says nothing


def pair_relations(kg: KnowledgeGraph) -> dict[tuple[str, str], frozenset[str]]:
    """Per ordered pair (head, tail), the relations the graph states of it (negations aside).
    Memoised; a graph that extends another recounts only its new statements' pairs."""
    key = ("pair_relations",)
    cached = kg.memo.get(key)
    if isinstance(cached, dict):
        return cached
    parent = kg.parent
    out: dict[tuple[str, str], set[str]] = {}
    start = 0
    if parent is not None:
        out = {p: set(v) for p, v in pair_relations(parent).items()}
        start = len(parent.statements)
    for s in kg.statements[start:]:
        if not s.negated and s.head != s.tail:
            out.setdefault((s.head, s.tail), set()).add(s.relation)
    frozen = {p: frozenset(v) for p, v in out.items()}
    kg.memo[key] = frozen
    return frozen


def paged_entities(kg: KnowledgeGraph) -> frozenset[str]:
    """The entities some page is about (:func:`document_subject`)."""
    key = ("paged_entities",)
    cached = kg.memo.get(key)
    if isinstance(cached, frozenset):
        return cached
    out = frozenset(filter(None, (document_subject(kg, d) for d in kg.by_doc)))
    kg.memo[key] = out
    return out


def pair_complete(kg: KnowledgeGraph, relation: str) -> bool:
    """Most ordered pairs of a subject of ``relation`` and an object of it carry some relation in
    the graph, and most of those exactly one (:data:`COMPLETE`): a kinship system, where every
    pair has one term. Nations links every pair of its 14 countries with about ten relations at
    once, so a second relation on a pair says nothing there. Only entities some page is about
    (:func:`paged_entities`) count as ends: an attacker who invents people to leave most pairs
    unlinked must write a page about each (Kinships: about a hundred)."""
    key = ("pair_complete", relation)
    if key not in kg.memo:
        pairs = pair_relations(kg)
        paged = paged_entities(kg)
        heads = {h for (h, _), rs in pairs.items() if relation in rs and h in paged}
        tails = {t for (_, t), rs in pairs.items() if relation in rs and t in paged}
        possible = len(heads) * len(tails) - len(heads & tails)
        linked = [rs for (h, t), rs in pairs.items() if h in heads and t in tails]
        single = sum(len(rs) == 1 for rs in linked)
        kg.memo[key] = (min(len(heads), len(tails)) >= MIN_ENDS and len(linked) > COMPLETE * possible
                        and single > COMPLETE * len(linked))
    return bool(kg.memo[key])


def exclusive(kg: KnowledgeGraph, relation: str, other: str) -> bool:
    """Most pairs the graph gives ``relation`` it does not also give ``other`` (the median rule
    of :func:`controllers.graphrag.accounts.functional`, so a few pairs given both cannot move it)."""
    key = ("exclusive", relation, other)
    if key not in kg.memo:
        with_r = [rs for rs in pair_relations(kg).values() if relation in rs]
        kg.memo[key] = 2 * sum(other in rs for rs in with_r) < len(with_r)
    return bool(kg.memo[key])


def contradicted(kg: KnowledgeGraph, alive: Collection[int], conflict: Conflict) -> list[Candidate]:
    """The candidates whose pair (entity, object) the alive statements also give a relation
    exclusive with the step's (:func:`exclusive`), where the graph is pair-complete for the
    step's relation (:func:`pair_complete`); none elsewhere."""
    s, r = conflict.entity, conflict.relation
    if not pair_complete(kg, r):
        return []
    answers = {c.answer for c in conflict.candidates}
    others: dict[str, set[str]] = {}
    for i in kg.incident.get(s, ()):
        st = kg.statements[i]
        if i in alive and st.head == s and st.tail in answers and st.relation != r and not st.negated:
            others.setdefault(st.tail, set()).add(st.relation)
    return [c for c in conflict.candidates if any(exclusive(kg, r, o) for o in sorted(others.get(c.answer, ())))]
