"""``tdp-abstain`` (issue #51 item 1): against edits that erase the truth from the index (TKPA),
no ranking can return the true answer, so the defense refuses to answer at a step whose claims
carry an edit's trace (a claim stated on a page about a third entity) instead of answering
what the edited pages say. It never turns an answer into the attacker's, and on a clean corpus,
whose pages state a neighbour's fact only beside their own link to it, it is ``tdp`` exactly."""

import pytest

from attacks.graphrag.scenario import poisoned_index
from controllers.graphrag.candidates import interpret_query
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import Query, build_index
from suites.graphrag.defenses import make_defense
from tests.graphrag.test_restatement import defended_answer


def test_abstaining_is_tdp_on_a_clean_corpus(world):
    kg = build_index(world.documents, world.table, community_method="none").kg
    tdp, abstain = make_defense("tdp"), make_defense("tdp-abstain")
    for q in world.questions:
        query = Query(q.text)
        reading = interpret_query(kg, query)
        if reading is None:
            continue
        retrieved = local_search(kg, reading.topic, reading.plan)
        assert abstain(kg, query, retrieved).removed == tdp(kg, query, retrieved).removed, q.id


@pytest.mark.parametrize("attack", ["tkpa", "tkpa-sourced", "gragpoison"])
def test_abstaining_never_answers_for_the_attacker_where_tdp_does_not(world, attack):
    built = poisoned_index(world, attack, targets=12, seed=1000, community_method="none")
    kg = built.index.kg
    tdp, abstain = make_defense("tdp"), make_defense("tdp-abstain")
    abstained = 0
    for q in world.questions[:12]:
        fake = built.attacker_answers[q.id]
        answer = defended_answer(kg, q, abstain)
        assert answer != fake or defended_answer(kg, q, tdp) == fake, q.id
        abstained += answer is None
    if attack != "gragpoison":  # edits leave their trace on the old object's pages
        assert abstained >= 2, abstained


def _shape(kg, fact, obj):
    """What a corroboration defense sees of the claim (fact's head, relation, ``obj``): the
    subjects of the pages stating it (head / object / other / none; off-subject statements
    left out, as TDP removes them) and whether another object is claimed."""
    from controllers.graphrag.candidates import document_subject, off_subject_statement

    ids = [i for i in kg.by_pair.get((fact.head, fact.relation), []) if not kg.statements[i].negated]
    mine = [i for i in ids if kg.statements[i].tail == obj and not off_subject_statement(kg, fact.head, i)]
    names = {fact.head: "head", obj: "object", None: "none"}
    pages = sorted(names.get(document_subject(kg, kg.statements[i].doc), "other")
                   for i in {kg.statements[i].doc: i for i in mine}.values())
    return tuple(pages), any(kg.statements[i].tail != obj for i in ids)


def test_an_edit_of_the_heads_only_page_leaves_a_clean_facts_shape(world):
    """Why no corroboration defense stops TKPA on some targets (docs/graphrag.md, "Why the edits
    win", class A): where the truth was stated only on its head's page, the edit leaves the fake
    stated once, on that page, uncontested, the very shape of many clean facts; the truth is gone
    from the index, so TDP and tdp-abstain both answer the attacker's answer."""
    import random

    from attacks.graphrag.scenario import attack_plan
    from attacks.graphrag.targets import AttackBudget
    from attacks.graphrag.tkpa import tkpa
    from environments.graphrag.pipeline import apply_poisoning

    plan = attack_plan(world, 12, 1000)
    clean = build_index(world.documents, world.table, community_method="none").kg
    poisoning = tkpa(world, plan, random.Random(1000), AttackBudget.of(5))
    kg = build_index(apply_poisoning(world.documents, (), poisoning.replaced), world.table,
                     community_method="none").kg
    one_page = (("head",), False)
    invisible = [t for t in plan.targets if _shape(clean, t.fact, t.fact.tail) == one_page]
    assert len(invisible) >= 3
    questions = {q.id: q for q in world.questions}
    for t in invisible:
        assert _shape(kg, t.fact, t.fact.tail)[0] == ()  # the truth is gone
        assert _shape(kg, t.fact, t.fake) == one_page
        for qid, fake in t.answers.items():
            for name in ("tdp", "tdp-abstain"):
                assert defended_answer(kg, questions[qid], make_defense(name)) == fake, (qid, name)
    shaped = sum(_shape(clean, f, f.tail) == one_page for q in world.questions for f in q.path)
    assert shaped >= 10  # clean facts of that shape: refusing it would refuse true answers
