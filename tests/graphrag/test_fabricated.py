"""The fabricating attack on ``tdp-disputed``'s own account (issue #51, session 17's finding, shipped
in session 18): pages about the contested entity, each the fake claim among invented facts naming
it, within the one budget, documents only."""

import random

from attacks.graphrag import ADAPTIVE, ATTACKS, plan_attack
from attacks.graphrag.fabricated import INVENTED, WITNESSES, fabricate
from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT, AttackBudget
from controllers.graphrag.candidates import document_subject
from environments.graphrag.corpus import Fact
from suites.graphrag.scenarios import poisoned


def test_fabricated_is_a_registered_white_box_attack_that_only_adds_documents(world):
    assert ATTACKS["fabricated"] and "fabricated" in ADAPTIVE
    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(5)
    poisoning = ATTACKS["fabricated"](world, plan, random.Random(0), budget=budget)
    poisoning.check(budget)
    assert not poisoning.replaced
    assert all(s.documents == 5 and s.statements == 5 * STATEMENTS_PER_DOCUMENT for s in poisoning.spend.values())
    for t, target in enumerate(plan.targets):
        pages = [[c.fact for _, c in d.claims] for d in poisoning.added if d.id.startswith(f"fabr{t:03d}-")]
        fake = Fact(target.fact.head, target.fact.relation, target.fake)
        claim_pages = [p for p in pages if fake in p]
        witnesses = [p for p in pages if fake not in p]
        assert len(pages) == 5 and len(witnesses) == WITNESSES
        for facts in pages:
            assert len(facts) == STATEMENTS_PER_DOCUMENT and all(f.head == target.fact.head for f in facts)
            # drawn, not copied (one may be true by chance); none gives the step a second object
            assert all(f.relation != target.fact.relation for f in facts if f != fake)
        # the claim pages share their invented facts, and a witness states them without the fake claim
        shared = set(claim_pages[0]) - {fake}
        assert len(shared) == INVENTED and all(set(p) - {fake} == shared for p in claim_pages)
        assert all(shared <= set(w) for w in witnesses)


def test_without_witnesses_each_claim_page_invents_its_own_facts(world):
    plan = plan_attack(world, world.questions[:4], seed=1)
    poisoning = fabricate(world, plan, random.Random(0), AttackBudget.of(5), witnesses=0)
    for t, target in enumerate(plan.targets):
        pages = [[c.fact for _, c in d.claims] for d in poisoning.added if d.id.startswith(f"fabr{t:03d}-")]
        fake = Fact(target.fact.head, target.fact.relation, target.fake)
        assert len(pages) == 5 and all(p[0] == fake for p in pages)
        assert len({frozenset(p[1:]) for p in pages}) > 1


def test_the_index_reads_each_fabricated_page_as_a_page_about_the_contested_entity():
    """Through the grid's path (published, camouflaged, extracted): every page the extractor reads
    the fake claim from is about the contested entity (``document_subject``), so it counts as the
    entity's own account, which is what the attack is for."""
    built = poisoned("world", 5, "fabricated", 5, 12, "louvain")
    kg = built.index.kg
    about = fakes = pages = 0
    for t in built.plan.targets:
        s, r = t.fact.head, t.fact.relation
        docs = {kg.statements[i].doc for i in kg.by_pair.get((s, r), []) if kg.statements[i].tail == t.fake}
        fakes += bool(docs)
        pages += len(docs)
        about += sum(document_subject(kg, d) == s for d in docs)
        assert all(built.poison[i] for i in kg.by_pair.get((s, r), []) if kg.statements[i].tail == t.fake)
    assert fakes >= 0.6 * len(built.plan.targets)
    assert about >= 0.6 * pages  # most pages the fake is read from are read as full pages about the entity
