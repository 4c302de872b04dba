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
