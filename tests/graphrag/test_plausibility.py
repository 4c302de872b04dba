"""tdp-plausible's rule check: rules mined from the graph at hand flag an edited claim that no
conflict exposes, and leave alone claims of relations without a strong rule."""

from controllers.graphrag.plausibility import RuleMiner, implausible_claims
from environments.graphrag.corpus import Statement
from environments.graphrag.kg import KnowledgeGraph


def _kg(facts):
    return KnowledgeGraph([Statement(h, r, t, f"d{i}", f"d{i}#c0") for i, (h, r, t) in enumerate(facts)])


def _firms(edited=None):
    """Two firms of five colleagues each (a chain of colleague_of), everyone at their firm;
    ``edited`` names a person whose employer was rewritten to the other firm."""
    facts = []
    for firm, staff in (("Acme", [f"a{i}" for i in range(5)]), ("Brix", [f"b{i}" for i in range(5)])):
        facts += [(p, "colleague_of", q) for p, q in zip(staff, staff[1:], strict=False)]
        facts += [(p, "works_for", "Brix" if p == edited else firm) for p in staff]
    facts += [(p, "studied_at", u) for p, u in (("a0", "U1"), ("a1", "U2"), ("b0", "U1"), ("b3", "U2"))]
    return facts


def _claims(kg, head, relation):
    out: dict[str, set[int]] = {}
    for i in kg.by_pair[(head, relation)]:
        out.setdefault(kg.statements[i].tail, set()).add(i)
    return out


def test_an_edited_employer_that_the_colleagues_contradict_is_flagged():
    kg = _kg(_firms(edited="a2"))
    miner = RuleMiner(kg)
    assert miner.predicted("a2", "works_for", 0.6) == {"Acme"}
    assert implausible_claims(kg, "a2", "works_for", _claims(kg, "a2", "works_for"), 0.6)
    # a clean colleague's employer is what the rule predicts
    assert not implausible_claims(kg, "a3", "works_for", _claims(kg, "a3", "works_for"), 0.6)
    # the threshold is a confidence: above what the graph supports, nothing is checked
    assert not implausible_claims(kg, "a2", "works_for", _claims(kg, "a2", "works_for"), 0.99)


def test_a_relation_without_a_strong_rule_is_never_checked():
    kg = _kg(_firms())
    for person in ("a0", "a1", "b0", "b3"):
        assert not implausible_claims(kg, person, "studied_at", _claims(kg, person, "studied_at"), 0.6)


def test_a_birth_city_whose_country_contradicts_the_citizenship_is_flagged():
    facts = [("C1", "located_in", "X"), ("C2", "located_in", "X"), ("C3", "located_in", "Y"), ("C4", "located_in", "Y")]
    people = [("p0", "C1", "X"), ("p1", "C2", "X"), ("p2", "C3", "Y"), ("p3", "C4", "Y"), ("p4", "C1", "X"),
              ("p5", "C3", "X")]  # p5's birth city was rewritten: the citizenship still says X
    for p, city, country in people:
        facts += [(p, "born_in", city), (p, "citizen_of", country)]
    kg = _kg(facts)
    assert implausible_claims(kg, "p5", "born_in", _claims(kg, "p5", "born_in"), 0.6)
    assert not any(implausible_claims(kg, p, "born_in", _claims(kg, p, "born_in"), 0.6) for p, *_ in people[:5])


def test_a_rule_needs_support_not_just_confidence():
    """One coincidental path of confidence 1 is no rule (minimum support 3)."""
    kg = _kg([("p", "lives_in", "C"), ("F", "headquartered_in", "C"), ("p", "works_for", "G"),
              ("q", "works_for", "G")])
    assert RuleMiner(kg).strong("works_for", 0.6) == set()


def test_tdp_plausible_removes_what_tdp_removes_and_more_under_tkpa():
    """On a development world (neither training nor evaluation), the rule check only adds to
    TDP's removals, and some of what it adds is TKPA's edits."""
    from attacks.graphrag.scenario import poisoned_index
    from environments.graphrag.kg import local_search
    from environments.graphrag.pipeline import Query
    from environments.graphrag.world import generate_world
    from suites.graphrag.defenses import make_defense

    world = generate_world(4)
    built = poisoned_index(world, "tkpa", targets=12, seed=4, community_method="none")
    kg = built.index.kg
    tdp, plausible = make_defense("tdp"), make_defense("tdp-plausible")
    extra_poison = 0
    for qid in {q for t in built.plan.targets for q in t.questions}:
        q = next(x for x in world.questions if x.id == qid)
        retrieved = local_search(kg, q.topic, q.plan)
        base, more = tdp(kg, Query(q.text), retrieved), plausible(kg, Query(q.text), retrieved)
        assert base.removed <= more.removed
        extra_poison += sum(built.poison[i] for i in more.removed - base.removed)
    assert extra_poison > 0


def test_white_box_tkpa_edits_the_rules_evidence_within_the_budget():
    """tkpa-rules with the defense's model spends more than TKPA, within the one budget (the
    index builder checks it), by editing more of the clean corpus (development world 4)."""
    from attacks.graphrag.scenario import poisoned_index
    from environments.graphrag.world import generate_world
    from suites.graphrag.defenses import PLAUSIBILITY_RATE
    from suites.graphrag.whitebox import rule_repairs

    world = generate_world(4)
    plain = poisoned_index(world, "tkpa", targets=12, seed=4, community_method="none")
    white = poisoned_index(world, "tkpa-rules", targets=12, seed=4, community_method="none",
                           repairs=rule_repairs(world, PLAUSIBILITY_RATE))
    assert white.poison_documents > plain.poison_documents
    assert white.spent()[1] > plain.spent()[1]
