"""``tdp-disputed`` (issue #51): TDP that abstains where the contested entity's own pages
disagree, and reads a support link only where a page about one of its ends states it.

``bridged`` anchors the fake claim on a page about the contested entity, written beside the
entity's real page, which states the true object: two pages about one entity that give it
different objects. A clean encyclopedia keeps one account of an entity (a changed job is
retracted on the same page), so the step is refused rather than ranked. Its bridges are notes
about no entity; a link counts as support only where a page about one of its ends states it."""

import random

import pytest

from attacks.graphrag.bridged import craft_bridged
from attacks.graphrag.targets import AttackBudget, plan_attack
from controllers.graphrag.accounts import (
    agreed_objects,
    disputed_entity,
    entity_account,
    functional,
    split_accounts,
)
from controllers.graphrag.candidates import build_conflict, interpret_query, walk_plan
from controllers.graphrag.features import FEATURES, QueryContext, candidate_features, witnessed_paths
from controllers.graphrag.tdp import anchored_ends
from environments.graphrag.corpus import Document
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import Query, build_index
from environments.graphrag.real import load_real
from environments.graphrag.world import generate_world
from suites.graphrag.defenses import make_defense
from tests.graphrag.test_restatement import defended_answer, flips_under_restatement


def _grown(world, docs):
    extract = LexiconExtractor(sorted(world.table.phrases))
    clean = build_index(world.documents, world.table, community_method="none").kg
    return KnowledgeGraph([*clean.statements, *extract(docs, context=[*world.documents, *docs])], glosses=clean.glosses)


def _conflict(kg, target):
    s, r = target.fact.head, target.fact.relation
    return build_conflict(kg, set(local_search(kg, s, (r,))), s, r)


def _fake_support_paths(world, *readings, paged):
    """Per target of twelve, the fake's ``independent_support_paths`` under each reading (keyword
    arguments of :class:`QueryContext`) once ``bridged``'s page about the fake object and its
    bridges (``paged``: as pages about the fake object) are in the graph."""
    plan = plan_attack(world, world.questions[:12], seed=1)
    at = FEATURES.index("independent_support_paths")
    for t, target in enumerate(plan.targets):
        docs = craft_bridged(world, target, t, random.Random(t), AttackBudget.of(5), on_entity=0, on_object=1,
                             per_page=3, paged=paged)
        kg = _grown(world, docs)
        conflict = _conflict(kg, target)
        fake = [c for c in conflict.candidates if c.answer == target.fake] if conflict else []
        if fake:
            retrieved = set(local_search(kg, target.fact.head, (target.fact.relation,)))
            yield tuple(candidate_features(QueryContext(kg, retrieved, conflict, **kw), fake[0])[at] for kw in readings)


def test_a_second_page_about_the_entity_with_another_object_is_a_dispute(world):
    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(5)
    disputed = 0
    for t, target in enumerate(plan.targets):
        entity_page = craft_bridged(world, target, t, random.Random(t), budget, on_entity=1, on_object=0,
                                    per_page=4)[:1]
        object_page = craft_bridged(world, target, t, random.Random(t), budget, on_entity=0, on_object=1,
                                    per_page=4)[:1]
        on_object = _conflict(_grown(world, object_page), target)
        assert on_object is None or not disputed_entity(_grown(world, object_page), on_object)
        kg = _grown(world, entity_page)
        conflict = _conflict(kg, target)
        disputed += conflict is not None and disputed_entity(kg, conflict)
    assert disputed >= len(plan.targets) // 2


def test_pages_listing_different_objects_of_a_multi_valued_relation_are_no_dispute():
    """Development world 5: the graph's own statistics make ``office_in`` multi-valued (most
    companies have several offices) and the relations with one object per subject single-valued.
    Two pages about a company, each listing another of its true offices beside its other true
    facts, are no dispute (``test_restatement_property``'s search found this refusal on world 5)."""
    data = generate_world(5)
    kg = build_index(data.documents, data.table, community_method="none").kg
    assert not functional(kg, "office_in")
    assert all(functional(kg, r) for r in ("born_in", "works_for", "headquartered_in", "located_in", "studied_at"))
    offices: dict[str, list] = {}
    for f in data.facts:
        if f.relation == "office_in":
            offices.setdefault(f.head, []).append(f)
    firm, listed = next((k, v) for k, v in sorted(offices.items()) if len(v) >= 2)
    own = [f for f in data.facts if f.head == firm and f.relation in ("headquartered_in", "founded_by")]
    pages = [Document(f"extra-{k}", data.table.show(firm), [data.table.sentence(f, variant=k) for f in [*own, listed[k]]])
             for k in range(2)]
    extract = LexiconExtractor(sorted(data.table.phrases))
    grown = KnowledgeGraph([*kg.statements, *extract(pages, context=[*data.documents, *pages])], glosses=kg.glosses)
    conflict = build_conflict(grown, set(local_search(grown, firm, ("office_in",))), firm, "office_in")
    assert conflict is not None and not disputed_entity(grown, conflict)


def test_no_clean_step_is_disputed_and_clean_answers_are_kept(world):
    kg = build_index(world.documents, world.table, community_method="none").kg
    tdp, disputed = make_defense("tdp"), make_defense("tdp-disputed")
    kept = conflicts = 0

    def settle(conflict):
        nonlocal conflicts
        conflicts += 1
        assert not disputed_entity(kg, conflict), (conflict.entity, conflict.relation)
        return [c.answer for c in conflict.candidates]

    for q in world.questions:
        reading = interpret_query(kg, Query(q.text))
        if reading is not None:
            walk_plan(kg, set(local_search(kg, reading.topic, reading.plan)), reading.topic, reading.plan, settle)
        kept += defended_answer(kg, q, disputed) == defended_answer(kg, q, tdp)
    assert conflicts and kept >= 0.95 * len(world.questions)


def test_a_note_about_no_entity_attests_no_support(world):
    loose = strict = 0
    for (plain, paged) in _fake_support_paths(world, {}, {"paged_support": True}, paged=False):
        loose += plain > 0
        strict += paged > 0
    assert strict < loose


@pytest.mark.parametrize(("name", "kind"), [("world", "third"), ("nations", "third"), ("nations", "anchored")])
def test_true_pages_never_flip_a_correct_answer(name, kind, world, request):
    """Pages about third entities never create a dispute. Pages about the question's own entities
    can: on world 1000 (``anchored`` kind) 2 of 43 correct answers turned into a refusal (session 12),
    where a clean page about the entity already states a misread object and the true page disagrees
    with it (docs/graphrag.md); so that kind is not asserted on worlds. Since session 16 none does, but
    only because the one left (q39) is now lost before any page is added (the entity's own account)."""
    if name == "nations":
        request.getfixturevalue("nations_available")
    data = world if name == "world" else load_real(name)
    kg = build_index(data.documents, data.table, community_method="none").kg
    correct, flipped = flips_under_restatement(data, kg, data.questions, make_defense("tdp-disputed"), 3, kind=kind)
    assert correct >= 10 and flipped == 0, (correct, flipped)


def test_one_page_witnesses_one_support_path(world):
    """``bridged``'s pages about the fake object list several fabricated links each; counted one
    path per witnessing page (``witnessed``), the fake never has more paths than counted path by
    path, and on some targets fewer."""
    fewer = 0
    for paged, witnessed in _fake_support_paths(world, {"paged_support": True},
                                                {"paged_support": True, "witnessed": True}, paged=True):
        assert witnessed <= paged
        fewer += witnessed < paged
    assert fewer > 0


def test_witnessed_paths_is_a_maximum_matching():
    assert witnessed_paths({}) == 0
    assert witnessed_paths({"a": {"p"}, "b": {"p"}, "c": {"p"}}) == 1
    assert witnessed_paths({"a": {"p", "q"}, "b": {"p"}}) == 2  # a moves to q so that b keeps p
    assert witnessed_paths({"a": {"p", "q"}, "b": {"p", "q"}, "c": {"q"}}) == 2


def test_a_page_giving_the_entity_two_objects_anchors_neither(world):
    """``bridged``'s page about the entity co-signs the true claim beside the fake, so the
    entity's pages do not disagree; on a single-valued relation it anchors neither object."""
    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(5)
    split = 0
    for t, target in enumerate(plan.targets):
        page = craft_bridged(world, target, t, random.Random(t), budget, on_entity=1, on_object=0, per_page=4,
                             paged=True)[:1]
        kg = _grown(world, page)
        conflict = _conflict(kg, target)
        if conflict is None or not functional(kg, target.fact.relation):
            continue
        unanchoring = split_accounts(kg, conflict)
        fake = next((c for c in conflict.candidates if c.answer == target.fake), None)
        if page[0].id in unanchoring and fake is not None:
            assert anchored_ends(kg, target.fact.head, fake) > anchored_ends(kg, target.fact.head, fake, unanchoring)
            split += 1
    assert split >= len(plan.targets) // 2


def test_a_changed_job_is_one_account_and_a_second_page_with_another_object_counts_neither_way(world):
    """Session 16's statistic: a person's page that retracts the old employer gives one object,
    the current one; a page about a one-object subject giving another object (``diluted``'s) leaves
    the subject's pages disagreeing, so it counts neither as one object nor as several."""
    kg = build_index(world.documents, world.table, community_method="none").kg
    changed = sorted(f.head for f in world.natural if f.relation == "works_for")
    agreed = [agreed_objects(kg, (p, "works_for")) for p in changed]
    assert changed and sum(a == frozenset(world.index[(p, "works_for")]) for p, a in zip(changed, agreed, strict=True)) \
        >= len(changed) - 1
    person = next(p for p, a in zip(changed, agreed, strict=True) if a is not None and len(a) == 1)
    other = next(f.tail for f in world.facts if f.relation == "works_for" and f.tail not in agreed_objects(kg, (person, "works_for")))
    own = [f for f in world.facts if f.head == person and f.relation in ("born_in", "studied_at")]
    page = Document("second", world.table.show(person), [world.table.sentence(f) for f in own] +
                    [world.table.sentence(type(own[0])(person, "works_for", other))])
    assert agreed_objects(_grown(world, [page]), (person, "works_for")) is None


def test_a_page_about_the_fake_object_never_outranks_the_entitys_own_account(world):
    """``bridged`` without a page about the entity (a page about the fake object and its links):
    on a single-valued step whose entity's own page states the true object, only that object
    competes (``own_account``), however many support paths the fake was given."""
    plan = plan_attack(world, world.questions[:12], seed=1)
    named = 0
    for t, target in enumerate(plan.targets):
        docs = craft_bridged(world, target, t, random.Random(t), AttackBudget.of(5), on_entity=0, on_object=1,
                             per_page=3, paged=True, spread=True)
        kg = _grown(world, docs)
        conflict = _conflict(kg, target)
        if conflict is None:
            continue
        account = entity_account(kg, conflict, split_accounts(kg, conflict))
        assert target.fake not in account
        named += account == {target.fact.tail}
    assert named >= len(plan.targets) // 2
