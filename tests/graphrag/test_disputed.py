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
from controllers.graphrag.candidates import build_conflict, interpret_query, walk_plan
from controllers.graphrag.features import FEATURES, QueryContext, candidate_features
from controllers.graphrag.tdp import disputed_entity, functional
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
    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(5)
    at = FEATURES.index("independent_support_paths")
    loose = strict = 0
    for t, target in enumerate(plan.targets):
        notes = craft_bridged(world, target, t, random.Random(t), budget, on_entity=0, on_object=1, per_page=3)
        kg = _grown(world, notes)
        conflict = _conflict(kg, target)
        fake = [c for c in conflict.candidates if c.answer == target.fake] if conflict else []
        if not fake:
            continue
        retrieved = set(local_search(kg, target.fact.head, (target.fact.relation,)))
        loose += candidate_features(QueryContext(kg, retrieved, conflict), fake[0])[at] > 0
        strict += candidate_features(QueryContext(kg, retrieved, conflict, paged_support=True), fake[0])[at] > 0
    assert strict < loose


@pytest.mark.parametrize(("name", "kind"), [("world", "third"), ("nations", "third"), ("nations", "anchored")])
def test_true_pages_never_flip_a_correct_answer(name, kind, world, request):
    """Pages about third entities never create a dispute. Pages about the question's own entities
    can: on world 1000 (``anchored`` kind) 2 of 43 correct answers turn into a refusal, where a clean
    page about the entity already states a misread object and the true page disagrees with it
    (docs/graphrag.md); so that kind is not asserted on worlds."""
    if name == "nations":
        request.getfixturevalue("nations_available")
    data = world if name == "world" else load_real(name)
    kg = build_index(data.documents, data.table, community_method="none").kg
    correct, flipped = flips_under_restatement(data, kg, data.questions, make_defense("tdp-disputed"), 3, kind=kind)
    assert correct >= 10 and flipped == 0, (correct, flipped)
