"""No TDP step removes a claim the walk followed at an earlier step (issue #51 item 1).

Session 20's trace (world 1000 q11 under ``gragpoison``, shape dress): at the second hop the fake
headquarters had pages about both ends and the truth one clean page, so the truth lost the tie;
its unique evidence went with it, and that evidence held the first hop's winning claim (the
person works for the company) on the clean page about the company, a support edge of the loser
(the person lives in the true city). A later step overturned the first hop's decision.
"""

import numpy as np
import pytest

from controllers.graphrag.candidates import build_conflict, interpret_query
from controllers.graphrag.tdp import PairwiseRanker, anchored_ends, resolve_conflicts, spare_followed
from environments.graphrag.corpus import Statement
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.pipeline import Query
from suites.graphrag.scenarios import load_dataset, poisoned
from suites.graphrag.training import trained_ranker

QUESTION = Query("In which city is the employer of Ann Lee headquartered?")


def _page(doc, facts):
    return [Statement(h, r, t, doc, f"{doc}#c0") for h, r, t in facts]


def _blind() -> PairwiseRanker:
    """Zero weights: every conflict is a tie, which pages about the claim's ends break."""
    features = trained_ranker("tdp").features
    return PairwiseRanker(np.zeros(len(features)), features)


@pytest.mark.parametrize("contested_first_hop", [False, True])
def test_a_later_step_never_removes_a_claim_an_earlier_step_followed(contested_first_hop):
    """q11's shape, built directly: Ann Lee works for Acme Labs (her page and the company's page
    say so), Acme Labs is headquartered in Oldtown (the company's page), and two attacker pages,
    one about Acme Labs and one about the fake city, place it in Newtown. The truth is anchored at
    one end and the fake at both, so with zero weights the truth loses the second hop; the first
    hop's claims and Ann Lee's own page stay."""
    ann = _page("ann", [("Ann Lee", "works_for", "Acme Labs"), ("Ann Lee", "lives_in", "Oldtown"),
                        ("Ann Lee", "born_in", "Oldtown")])
    acme = _page("acme", [("Acme Labs", "headquartered_in", "Oldtown"), ("Ann Lee", "works_for", "Acme Labs"),
                          ("Acme Labs", "founded_by", "Bob Ray"), ("Cy Mo", "works_for", "Acme Labs")])
    town = _page("town", [("Oldtown", "located_in", "Land"), ("Bob Ray", "born_in", "Oldtown"),
                          ("Cy Mo", "lives_in", "Oldtown")])
    fakes = _page("fake1", [("Acme Labs", "headquartered_in", "Newtown"), ("Newtown", "located_in", "Land"),
                            ("Ed Ox", "born_in", "Newtown")])
    fakes += _page("fake2", [("Acme Labs", "headquartered_in", "Newtown"), ("Acme Labs", "founded_by", "Bob Ray"),
                             ("Cy Mo", "works_for", "Acme Labs")])
    if contested_first_hop:  # a thin news item gives her another employer: it is about nobody, and loses
        fakes += _page("news", [("Ann Lee", "works_for", "Zed Corp"), ("Ed Ox", "lives_in", "Newtown")])
    kg = KnowledgeGraph(ann + acme + town + fakes)
    reading = interpret_query(kg, QUESTION)
    assert reading is not None and reading.plan == ("works_for", "headquartered_in")
    everything = list(range(len(kg.statements)))
    second = build_conflict(kg, set(everything), "Acme Labs", "headquartered_in")
    assert {c.answer: anchored_ends(kg, "Acme Labs", c) for c in second.candidates} == {"Newtown": 2, "Oldtown": 1}
    truth = next(c for c in second.candidates if c.answer == "Oldtown")
    first_hop = {i for i, s in enumerate(kg.statements) if (s.head, s.relation, s.tail) == ("Ann Lee", "works_for", "Acme Labs")}
    assert first_hop <= truth.support  # the first hop's claim is a support edge of the second hop's loser

    for subject_check in (False, True):
        removed = resolve_conflicts(kg, QUESTION, everything, _blind(), subject_check=subject_check).removed
        assert truth.claims <= removed  # the second hop's decision stands
        assert not first_hop & removed, subject_check
        assert not {i for i, s in enumerate(kg.statements) if s.doc == "ann"} & removed  # her page is not the loser's
        if contested_first_hop:
            assert {i for i, s in enumerate(kg.statements) if s.tail == "Zed Corp"} <= removed


def test_spare_followed_takes_out_only_the_followed_claims():
    assert spare_followed({1, 2, 3}, [2, 5]) == {1, 3}
    assert spare_followed({1, 2}, ()) == {1, 2}


def _pruned_followed_claims(kg: KnowledgeGraph, retrieved: set[int], removed: set[int], topic: str,
                            plan: tuple[str, ...]) -> set[int]:
    """Removed claims of answers the defended walk follows (an answer some claim of which survives),
    read from the verdict alone: a step's winner keeps all its claims, a loser loses all of them."""
    alive, frontier, out = retrieved - removed, {topic}, set()
    for relation in plan:
        nxt: set[str] = set()
        for entity in frontier:
            by_answer: dict[str, set[int]] = {}
            for i in kg.by_pair.get((entity, relation), ()):
                if i in retrieved and not kg.statements[i].negated:
                    by_answer.setdefault(kg.statements[i].tail, set()).add(i)
            for answer, ids in by_answer.items():
                if ids & alive:
                    nxt.add(answer)
                    out |= ids & removed
        frontier = nxt
    return out


@pytest.mark.parametrize(("world", "attack"), [(5, "gragpoison"), (6, "frame")])
def test_every_answer_the_walk_follows_keeps_its_claims(world, attack):
    """On development worlds, with the shipped weights: before this rule, 17 question-cells of worlds
    4-7 under 7 attacks lost a followed claim to a later step (world 5 q6 and q8 under ``gragpoison``;
    world 6 q8, q13 and q18 under ``frame``)."""
    kg = poisoned("world", world, attack, 5, 20, "louvain").index.kg
    ranker = trained_ranker("tdp")
    for q in load_dataset("world", world).questions[:20]:
        reading = interpret_query(kg, Query(q.text))
        if reading is None:
            continue
        retrieved = local_search(kg, reading.topic, reading.plan)
        removed = resolve_conflicts(kg, Query(q.text), retrieved, ranker, subject_check=False).removed
        assert not _pruned_followed_claims(kg, set(retrieved), removed, reading.topic, reading.plan), q.id
