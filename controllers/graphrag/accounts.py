"""The contested entity's own account, as TDP reads it: what the pages about a subject state of
one of its relations (:func:`page_accounts`), whether the graph's own statements make that
relation single-valued (:func:`functional`, counted by :func:`single_object_subjects`), and at a
conflict whether the entity's own pages disagree (:func:`disputed_entity`), which pages give it two
objects (:func:`split_accounts`) and which objects they state (:func:`entity_account`). Where a
clean encyclopedia keeps a subject's facts: on the subject's page (issue #51). The defense
(:mod:`controllers.graphrag.tdp`) and the white-box attacker's model of it
(:mod:`suites.graphrag.whitebox`) count with these same functions.
"""

from __future__ import annotations

from collections.abc import Collection

from controllers.graphrag.candidates import Conflict, document_subject
from controllers.graphrag.features import retracting_docs
from environments.graphrag.kg import KnowledgeGraph


def page_accounts(kg: KnowledgeGraph, pair: tuple[str, str]) -> dict[str, frozenset[str]]:
    """Per page about the subject of the (subject, relation) ``pair`` (:func:`document_subject`),
    the objects its statements give the pair, less those the page retracts (a dated "no longer
    works for"): where an encyclopedia keeps the subject's own account, the pages
    :func:`disputed_entity` compares. A statement on a page about something else, or about
    nothing, says nothing of how many objects the subject has."""
    out: dict[str, set[str]] = {}
    retracted: dict[str, set[str]] = {}
    for i in kg.by_pair.get(pair, ()):
        s = kg.statements[i]
        if document_subject(kg, s.doc) == pair[0]:
            (retracted if s.negated else out).setdefault(s.doc, set()).add(s.tail)
    return {d: frozenset(v - retracted.get(d, set())) for d, v in out.items() if v - retracted.get(d, set())}


def agreed_objects(kg: KnowledgeGraph, pair: tuple[str, str]) -> frozenset[str] | None:
    """The objects every page about the subject gives the ``pair`` (:func:`page_accounts`) when
    they all give the same ones; ``None`` when no page does, or when its pages disagree (a page
    lists fewer objects than another, or others). Issue #51's ``diluted`` gave one-object subjects
    a second object on a page of its own, beside their real page; a subject whose own pages
    disagree now tells the statistic nothing either way (:func:`single_object_subjects`)."""
    accounts = set(page_accounts(kg, pair).values())
    return next(iter(accounts)) if len(accounts) == 1 else None


def single_object_subjects(kg: KnowledgeGraph) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Per relation: the subjects whose own pages all give it the same objects
    (:func:`agreed_objects`; a subject whose pages disagree counts neither way) and those of them
    given exactly one object. One counter for the
    defense (:func:`functional`) and the white-box attacker's model of it. Memoised per graph; a
    graph that extends another (:meth:`KnowledgeGraph.extended`, the white-box surrogate's)
    recounts only the subjects its new statements touch."""
    key = ("single_object_subjects",)
    cached = kg.memo.get(key)
    if isinstance(cached, dict):
        return cached
    sets: dict[str, tuple[set[str], set[str]]] = {}

    def count(g: KnowledgeGraph, pair: tuple[str, str]) -> None:
        subjects, single = sets.setdefault(pair[1], (set(), set()))
        subjects.discard(pair[0])
        single.discard(pair[0])
        tails = agreed_objects(g, pair)
        if tails:
            subjects.add(pair[0])
            if len(tails) == 1:
                single.add(pair[0])

    parent = kg.parent
    if parent is not None:
        for r, (subjects, single) in single_object_subjects(parent).items():
            sets[r] = (set(subjects), set(single))
        docs = {s.doc for s in kg.statements[len(parent.statements):]}  # a page's subject may move
        for pair in {(kg.statements[i].head, kg.statements[i].relation) for d in docs for i in kg.by_doc[d]}:
            count(kg, pair)
    else:
        for pair in kg.by_pair:
            count(kg, pair)
    out = {r: (frozenset(a), frozenset(b)) for r, (a, b) in sets.items() if a}
    kg.memo[key] = out
    return out


def functional(kg: KnowledgeGraph, relation: str) -> bool:
    """The graph's own statements give ``relation`` one object per subject: more than half of
    the subjects it is stated of on their own pages (:func:`single_object_subjects`) have exactly
    one object there (the median count is 1), as a person's
    birthplace or a company's headquarters; a company's offices are several. Derived from the
    statistics of the graph the defense reads, not from a schema: neither generated worlds nor
    real graphs declare which relations are single-valued. PARIS's functionality (Suchanek et
    al., VLDB 2011: subjects over subject-object pairs) is the same idea; the median is used
    because a few subjects given many objects cannot move it: turning a single-valued relation
    into a multi-valued one takes a second object for most of its subjects, and (issue #51's
    ``diluted``) each on a page about that subject, as the dispute check reads only those pages.
    Session 16: such a page leaves the subject's pages disagreeing, which counts neither way, so
    an attacker who only adds pages must take nearly every one-object subject out of the count
    (``2 * single - subjects`` pages, not half as many); a true page listing fewer of a subject's
    several objects takes that subject out too, so no count of true pages can turn a relation
    whose subjects are all several-valued (a company's offices) single-valued."""
    subjects, single = single_object_subjects(kg).get(relation, (frozenset(), frozenset()))
    return 2 * len(single) > len(subjects)


def own_page_objects(kg: KnowledgeGraph, conflict: Conflict) -> dict[str, frozenset[str]]:
    """Per page about the contested entity (:func:`document_subject`), the step's candidate
    objects it states, its retracted claims not counted: what the three checks below compare."""
    stated: dict[str, set[str]] = {}
    for c in conflict.candidates:
        for doc in c.claim_docs(kg) - retracting_docs(kg, c):
            if document_subject(kg, doc) == conflict.entity:
                stated.setdefault(doc, set()).add(c.answer)
    return {d: frozenset(v) for d, v in stated.items()}


def disputed_entity(kg: KnowledgeGraph, conflict: Conflict) -> bool:
    """The step's relation is single-valued in the graph (:func:`functional`) and two pages
    about the contested entity (:func:`document_subject`) each state an object of the step that
    the other does not (a page's retracted claims not counted): the entity's own pages disagree,
    where a clean encyclopedia keeps one account of it. A page listing fewer of several objects
    is no dispute, and nor are two pages listing different objects of a multi-valued relation (a
    company's offices): adding a true page must never refuse a true answer (issue #51 item 1).
    An attacker who anchors the fake claim on a page about the entity (issue #51's ``bridged``)
    writes it beside the entity's real page."""
    if not functional(kg, conflict.relation):
        return False
    accounts = sorted(set(own_page_objects(kg, conflict).values()), key=sorted)
    return any(a - b and b - a for k, a in enumerate(accounts) for b in accounts[k + 1:])


def split_accounts(kg: KnowledgeGraph, conflict: Conflict) -> frozenset[str]:
    """Pages about the contested entity that give the step two objects or more (a page's
    retracted claims not counted) where its relation is single-valued (:func:`functional`): a
    page that keeps two birthplaces of one person gives no account of it, and anchors neither
    at the entity (:class:`QueryContext`'s ``unanchoring``). Issue #51's ``bridged`` anchors its
    fake on such a page, co-signing the true claim beside it so that the entity's own pages do not
    disagree (:func:`disputed_entity`). A page stating only true facts of a single-valued relation
    states one object, so a true page never joins this set; a page a misread gave a second object
    anchors neither of the two."""
    if not functional(kg, conflict.relation):
        return frozenset()
    return frozenset(d for d, objects in own_page_objects(kg, conflict).items() if len(objects) > 1)


def entity_account(kg: KnowledgeGraph, conflict: Conflict, unanchoring: Collection[str] = ()) -> frozenset[str]:
    """The step's objects that pages about the contested entity state (:func:`document_subject`;
    a page's retracted claims, and pages in ``unanchoring`` (:func:`split_accounts`), not counted)
    where its relation is single-valued (:func:`functional`): the entity's own account, which
    ``own_account`` ranks above every candidate it does not name. A clean encyclopedia keeps a
    person's birthplace on the person's page; issue #51's white-box attacks won where the truth had
    that page and the fake had a page about its own object and more support paths than the truth.
    An attacker's page about the entity stating the fake alone is a dispute
    (:func:`disputed_entity`), and one co-signing the truth anchors nothing. A true page can only
    add the true object to the account."""
    if not functional(kg, conflict.relation):
        return frozenset()
    skip = set(unanchoring)
    return frozenset(a for d, objects in own_page_objects(kg, conflict).items() if d not in skip for a in objects)
