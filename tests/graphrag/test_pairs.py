"""``tdp-paired`` (session 26, issue #51): where the graph gives nearly every pair of its entities
one relation (Kinships: a kin term for 10,686 of 10,712 ordered pairs of persons), a candidate
whose pair already carries another relation is out; a step with no candidate left is refused.
Off wherever most pairs are unlinked (generated worlds, GeoNames) or carry several relations at
once (Nations), so there it changes nothing."""

import math
import random

import pytest

import controllers.graphrag.tdp as tdp
from attacks.graphrag.bridged import craft_bridged
from attacks.graphrag.targets import AttackBudget, plan_attack
from controllers.graphrag.candidates import build_conflict
from controllers.graphrag.pairs import contradicted, pair_complete
from controllers.graphrag.tdp import resolve_conflicts
from environments.graphrag.corpus import Statement
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.parse import Interpretation
from environments.graphrag.pipeline import Query, build_index
from environments.graphrag.real import load_real
from suites.graphrag.defenses import TDP_CHECKS, make_defense
from suites.graphrag.training import trained_ranker
from suites.graphrag.whitebox import tdp_surrogate
from tests.graphrag.test_restatement import flips_under_restatement

PEOPLE = [f"p{i}" for i in range(12)]


def _kin(extra=()):
    """Twelve people, one term per ordered pair (``t0`` if the two differ by one, else ``t1``),
    each pair stated on the first person's page; ``extra`` statements on a page of their own."""
    rows = [Statement(a, "t0" if abs(i - j) == 1 else "t1", b, f"page-{a}", f"page-{a}#c0")
            for i, a in enumerate(PEOPLE) for j, b in enumerate(PEOPLE) if a != b]
    rows += [Statement(h, r, t, doc, f"{doc}#c0") for h, r, t, doc in extra]
    return KnowledgeGraph(rows)


def _step(kg, s, r):
    retrieved = set(local_search(kg, s, (r,)))
    return retrieved, build_conflict(kg, retrieved, s, r)


def test_a_candidate_whose_pair_has_its_own_term_is_out():
    kg = _kin([("p0", "t0", "p5", f"fake{k}") for k in range(4)])
    assert pair_complete(kg, "t0") and pair_complete(kg, "t1")
    retrieved, conflict = _step(kg, "p0", "t0")
    assert {c.answer for c in conflict.candidates} == {"p1", "p5"}
    assert [c.answer for c in contradicted(kg, retrieved, conflict)] == ["p5"]  # p0 - p5 is t1 already


def _defended(kg, monkeypatch, **checks):
    monkeypatch.setattr(tdp, "interpret_query", lambda kg, query: Interpretation("p0", ("t0",)))
    retrieved = local_search(kg, "p0", ("t0",))
    removed = resolve_conflicts(kg, Query("Who is p0's t0?"), retrieved, trained_ranker("tdp"), **checks).removed
    return {kg.statements[i].tail for i in retrieved if i not in removed and kg.statements[i].relation == "t0"
            and kg.statements[i].head == "p0"}


def test_the_fake_is_out_and_a_contradicted_truth_refuses_the_step(monkeypatch):
    """Four pages give p0 the t0 object p5, whose pair is t1: ``tdp-disputed``'s ranker and the
    reader's document count would take it (ends and support tie in a complete graph), the pair
    rule removes it. Give the true pair a second term too and nothing is left to answer."""
    pages = [row for k in range(4) for row in (("p0", "t0", "p5", f"fake{k}"), ("p5", "t1", "p7", f"fake{k}"),
                                               ("p5", "t1", "p8", f"fake{k}"))]  # pages about p5
    fake = _kin(pages)
    assert _defended(fake, monkeypatch, pairs=True) == {"p1"}
    assert "p5" in _defended(fake, monkeypatch)
    both = _kin([*pages, ("p0", "t2", "p1", "fake9")])
    assert _defended(both, monkeypatch, pairs=True) == set()


def test_off_where_most_pairs_are_unlinked_or_carry_several_relations(world, nations_available):
    kg = build_index(world.documents, world.table, community_method="none").kg
    assert not any(pair_complete(kg, r) for r in kg.relations())
    for name in ("geonames", "nations"):
        data = load_real(name)
        kg = build_index(data.documents, data.table, community_method="none").kg
        assert not any(pair_complete(kg, r) for r in kg.relations()), name


def test_tdp_paired_answers_as_tdp_disputed_where_the_rule_is_off(world):
    from tests.graphrag.test_restatement import defended_answer

    kg = build_index(world.documents, world.table, community_method="none").kg
    paired, disputed = make_defense("tdp-paired"), make_defense("tdp-disputed")
    assert all(defended_answer(kg, q, paired) == defended_answer(kg, q, disputed) for q in world.questions)


@pytest.mark.parametrize("kind", ["third", "anchored"])
def test_true_pages_never_flip_a_correct_answer_on_kinships(kind, nations_available):
    data = load_real("kinships")
    kg = build_index(data.documents, data.table, community_method="none").kg
    assert sum(pair_complete(kg, r) for r in kg.relations()) >= 20
    correct, flipped = flips_under_restatement(data, kg, data.questions, make_defense("tdp-paired"), 3, kind=kind)
    assert correct >= 10 and flipped == 0, (correct, flipped)


def test_the_surrogate_knows_the_rule(nations_available):
    """The white-box attacker's model of ``tdp-paired`` scores ``bridged``'s pages on Kinships as
    lost wherever the fake's pair already has a term (every target here), as the defense does, and
    a variant whose fake is never read as lost too, even where the rule leaves one other candidate
    (session 26: the first surrogate scored that as the fake's win)."""
    data = load_real("kinships")
    plan = plan_attack(data, data.questions[:20], seed=0)
    paired = tdp_surrogate(trained_ranker("tdp"), data, strict=True, **TDP_CHECKS["tdp-paired"])
    margins = [paired(craft_bridged(data, target, t, random.Random(t), AttackBudget.of(5), on_entity=1, on_object=1,
                                    per_page=3, paged=paged), target)
               for t, target in enumerate(plan.targets[:3]) for paged in (False, True)]
    assert margins == [-math.inf] * 6, margins
