"""The bridged white-box attack (issue #51): anchored pages at both ends of the fake claim and
bridge documents that never state the contested relation, within the one budget."""

import math
import random

from attacks.graphrag.adaptive import ANCHORED_SPLITS, MIXES
from attacks.graphrag.bridged import BRIDGED_SPLITS, DRESS_DRAWS, bridged_attack, craft_bridged
from attacks.graphrag.targets import AttackBudget, plan_attack
from environments.graphrag.corpus import Fact


def test_bridges_state_no_contested_claim_and_fabricate_only_links_to_the_fake(world):
    plan = plan_attack(world, world.questions[:12], seed=1)
    facts = set(world.facts)
    budget = AttackBudget.of(5)
    bridged = 0
    for t, target in enumerate(plan.targets):
        s, r, fake = target.fact.head, target.fact.relation, target.fake
        docs = craft_bridged(world, target, t, random.Random(t), budget, on_entity=1, on_object=1, per_page=3)
        assert len(docs) <= budget.documents and sum(len(d.claims) for d in docs) <= budget.statements
        pages, bridges = docs[:2], docs[2:]
        assert [d.title for d in pages] == [world.table.show(s), world.table.show(fake)]
        assert all(c.fact == Fact(s, r, fake) for d in pages for _, c in d.claims[:1])  # the claim comes first
        for d in bridges:
            assert 0 < len(d.claims) <= 4
            for _, c in d.claims:
                assert (c.fact.head, c.fact.relation) != (s, r) and not c.negated
                assert c.fact in facts or fake in (c.fact.head, c.fact.tail), c
        bridged += bool(bridges)
    assert bridged >= len(plan.targets) // 2


def test_bridged_keeps_the_variant_the_surrogate_scores_highest(world):
    plan = plan_attack(world, world.questions[:4], seed=1)
    budget = AttackBudget.of(5)
    calls = []

    def likes_bridges(docs, target):  # a stand-in defense model that rewards bridge documents
        calls.append(1)
        return float(sum(d.id.startswith("adpc") for d in docs))

    poisoning = bridged_attack(world, plan, random.Random(0), budget, surrogate=likes_bridges)
    poisoning.check(budget)
    variants = len(BRIDGED_SPLITS) + len(MIXES) + len(ANCHORED_SPLITS)
    assert len(calls) == DRESS_DRAWS * variants * len(plan.targets)
    most = max(len(craft_bridged(world, t, 0, random.Random(0), budget, on_entity=e, on_object=o, per_page=n)) - e - o
               for t in plan.targets[:1] for e, o, n in BRIDGED_SPLITS)
    first = [d for d in poisoning.added if d.id.startswith("adpc000")]
    assert len(first) == most


def test_the_strict_surrogate_scores_an_unread_fake_as_lost(world):
    from suites.graphrag.training import trained_ranker
    from suites.graphrag.whitebox import tdp_surrogate

    plan = plan_attack(world, world.questions[:12], seed=1)
    strict = tdp_surrogate(trained_ranker("tdp"), world, strict=True)
    loose = tdp_surrogate(trained_ranker("tdp"), world)
    # no poison at all: the fake is read nowhere, so nothing was won; adaptive's loose model
    # counts a step left without a conflict as won
    unread = [t for t in plan.targets if loose([], t) == math.inf]
    assert unread and all(strict([], t) == -math.inf for t in unread)


def test_against_disputes_the_entity_page_co_signs_and_bridges_are_pages_about_the_fake(world):
    """The attack re-optimised for ``tdp-disputed``: its page about the entity states the true claim
    beside the fake one (a page listing more objects is no dispute) and negates nothing; its bridges
    are pages about the fake object stating only fabricated links to it (``paged`` support), or
    (``spread``) one fabricated link on each page left, padded with true facts of the fake object."""
    from attacks.graphrag.bridged import PAGED_SPLITS

    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(5)
    paged = 0
    for t, target in enumerate(plan.targets):
        s, r, true, fake = target.fact.head, target.fact.relation, target.fact.tail, target.fake
        docs = craft_bridged(world, target, t, random.Random(t), budget, on_entity=1, on_object=1, per_page=4,
                             paged=True)
        assert len(docs) <= budget.documents and sum(len(d.claims) for d in docs) <= budget.statements
        facts = [c.fact for _, c in docs[0].claims]
        assert facts[:2] == [Fact(s, r, fake), Fact(s, r, true)] and not any(c.negated for d in docs for _, c in d.claims)
        for d in docs[2:]:
            assert d.title == world.table.show(fake)
            assert all(fake in (c.fact.head, c.fact.tail) and c.fact not in set(world.facts) for _, c in d.claims)
        paged += len(docs) > 2
        spread = craft_bridged(world, target, t, random.Random(t), budget, on_entity=1, on_object=1, per_page=4,
                               paged=True, spread=True)  # one fabricated link first on each page left
        assert len(spread) <= budget.documents and sum(len(d.claims) for d in spread) <= budget.statements
        for d in spread[2:]:
            first = d.claims[0][1].fact
            assert d.title == world.table.show(fake) and fake in (first.head, first.tail)
            assert first not in set(world.facts) and len(d.claims) >= 3
    assert paged >= len(plan.targets) // 2
    calls = []
    bridged_attack(world, plan_attack(world, world.questions[:1], seed=1), random.Random(0), budget,
                   surrogate=lambda docs, target: calls.append(1) or 0.0, paged=True)
    assert len(calls) == DRESS_DRAWS * (len(BRIDGED_SPLITS) + len(MIXES) + len(ANCHORED_SPLITS) + 2 * len(PAGED_SPLITS))
