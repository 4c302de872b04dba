import random

import numpy as np
import pytest

from attacks.graphrag import ATTACKS, plan_attack
from attacks.graphrag.scenario import poisoned_index
from attacks.graphrag.targets import AttackBudget, BudgetExceeded, Poisoning
from controllers.graphrag.candidates import build_conflict
from controllers.graphrag.features import FEATURES, QueryContext, candidate_features
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import apply_poisoning


def test_plan_targets_are_shared_and_change_answers(world):
    plan = plan_attack(world, world.questions[:12], seed=1)
    questions = {q.id: q for q in world.questions}
    assert plan.targets
    for t in plan.targets:
        assert t.fake != t.fact.tail
        for qid, answer in t.answers.items():
            assert t.fact in questions[qid].path
            assert answer != questions[qid].answer
    assert plan_attack(world, world.questions[:12], seed=1).by_question().keys() == plan.by_question().keys()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_poisons_the_contested_fact(world, attack):
    plan = plan_attack(world, world.questions[:12], seed=1)
    poisoning = ATTACKS[attack](world, plan, random.Random(0), budget=AttackBudget.of(5))
    docs = apply_poisoning(world.documents, poisoning.added, poisoning.replaced)
    if attack == "tkpa":
        assert not poisoning.added and poisoning.replaced
        changed = sum(a.sentences != b.sentences for a, b in zip(world.documents, docs, strict=False))
        assert changed == len(poisoning.replaced)
    else:
        assert all(d.origin == "poison" for d in poisoning.added)
    built = poisoned_index(world, attack, targets=12, seed=1, community_method="none")
    kg = built.index.kg
    reached = 0
    for t in plan.targets:
        fakes = [i for i in kg.by_pair.get((t.fact.head, t.fact.relation), []) if kg.statements[i].tail == t.fake]
        reached += bool(fakes)
        assert all(built.poison[i] for i in fakes)
    # The poison is prose too: the extractor misses some of its phrasings, as it misses clean ones.
    assert reached >= 0.6 * len(plan.targets)
    untouched = {d.id for d in world.documents} - set(poisoning.replaced)
    assert not any(built.poison[i] for i, s in enumerate(kg.statements) if s.doc in untouched)


def test_gragpoison_enhancement_makes_poison_look_denser(world):
    """The trap the spec describes: raw topology ranks GragPoison's poisoned edge above the clean
    one, while provenance-aware features see through it."""
    built = poisoned_index(world, "gragpoison", targets=12, seed=1, community_method="none")
    kg = built.index.kg
    raw_cn, prov = [], []
    for t in built.plan.targets:
        retrieved = set(local_search(kg, t.fact.head, (t.fact.relation,)))
        conflict = build_conflict(kg, retrieved, t.fact.head, t.fact.relation)
        ctx = QueryContext(kg, retrieved, conflict)
        phi = {c.answer: candidate_features(ctx, c) for c in conflict.candidates}
        clean, poison = phi[t.fact.tail], phi[t.fake]
        raw_cn.append(poison[FEATURES.index("common_neighbours")] - clean[FEATURES.index("common_neighbours")])
        prov.append(clean[FEATURES.index("claim_doc_corroboration")] - poison[FEATURES.index("claim_doc_corroboration")])
    # Poison has more common neighbours on most targets (7 of 11 since camouflage deals its
    # templates from a deck, 8 of 11 before: it cuts some enhancement to a short clean
    # template's length; 0.8 before issue #38).
    assert np.mean(np.array(raw_cn) > 0) >= 0.6
    assert np.mean(np.array(prov) > 0) >= 0.8  # but its documents are not corroborated


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("documents", [1, 2, 5, 8])
def test_every_attack_keeps_to_the_one_budget(world, attack, documents):
    plan = plan_attack(world, world.questions[:12], seed=1)
    budget = AttackBudget.of(documents)
    poisoning = ATTACKS[attack](world, plan, random.Random(0), budget=budget)
    poisoning.check(budget)
    assert poisoning.spend and all(0 < s.documents <= documents for s in poisoning.spend.values())
    assert sum(s.documents for s in poisoning.spend.values()) == len(poisoning.added) + len(poisoning.replaced) \
        or attack in ("tkpa", "tkpa-rules", "tkpa-sourced")  # one edited page can serve two targets


def test_overspending_is_refused():
    poisoning = Poisoning()
    from environments.graphrag.corpus import Document, Fact
    from environments.graphrag.prose import WORLD_FORMS, Writer

    writer = Writer(dict(WORLD_FORMS))
    for j in range(3):
        poisoning.add(0, Document(f"x{j}", "t", [writer.sentence(Fact("A b", "born_in", "C d"))]))
    with pytest.raises(BudgetExceeded, match="target 0"):
        poisoning.check(AttackBudget.of(2))


def test_adaptive_attack_keeps_the_variant_the_surrogate_scores_highest(world):
    from attacks.graphrag.adaptive import adaptive_attack

    plan = plan_attack(world, world.questions[:6], seed=1)
    budget = AttackBudget.of(5)
    seen = []

    def likes_framing(docs, target):  # a stand-in defense model that rewards framing documents
        frames = sum(d.id.startswith("adpf") for d in docs)
        seen.append(frames)
        return float(frames)

    poisoning = adaptive_attack(world, plan, random.Random(0), budget, surrogate=likes_framing)
    poisoning.check(budget)
    # 9 mixes, then 4 splits of anchored pages (no framing document in them)
    assert set(seen) == {0, 1, 2} and len(seen) == 13 * len(plan.targets)
    assert sum(d.id.startswith("adpf") for d in poisoning.added) == 2 * len(plan.targets)
    seen.clear()
    adaptive_attack(world, plan, random.Random(0), budget, surrogate=likes_framing, anchored=False)
    assert len(seen) == 9 * len(plan.targets)  # what TDP's adversarial training searches


def test_anchored_pages_are_about_an_end_of_the_fake_claim_and_restate_only_truths(world):
    """Issue #51: every page of the anchored attacker is about the contested entity or the fake
    object (as TDP reads a page's subject) and states, besides the fake claim and the true
    claim's negation, only true facts of its subject."""
    from attacks.graphrag.adaptive import craft_anchored
    from controllers.graphrag.candidates import document_subject
    from environments.graphrag.corpus import Fact
    from environments.graphrag.kg import KnowledgeGraph
    from environments.graphrag.lexicon import LexiconExtractor

    plan = plan_attack(world, world.questions[:12], seed=1)
    extract = LexiconExtractor(sorted(world.table.phrases))
    facts = set(world.facts)
    anchored = pages = 0
    for t, target in enumerate(plan.targets):
        docs = craft_anchored(world, target, t, random.Random(t), AttackBudget.of(5), on_object=2)
        kg = KnowledgeGraph(extract(docs, context=[*world.documents, *docs]))
        subjects = [document_subject(kg, d.id) for d in docs]
        # the rule extractor misses some sentences, and a page of fewer than 3 statements is
        # about nobody: the attacker then loses that anchor (it does not pick readable phrasings)
        assert all(x in (target.fact.head, None) for x in subjects[:3]), subjects
        assert all(x in (target.fake, None) for x in subjects[3:]), subjects
        anchored += sum(x is not None for x in subjects)
        pages += len(docs)
        for d in docs:
            for _, c in d.claims:
                assert c.fact in facts or c.fact == Fact(target.fact.head, target.fact.relation, target.fake) \
                    or (c.negated and c.fact == target.fact), c
    assert anchored >= 0.5 * pages, (anchored, pages)


def test_white_box_surrogate_agrees_with_the_deployed_defense(world):
    """The attacker's model of TDP runs TDP's feature code with the deployed weights: where it
    says the fake wins on a copy-attacked world, the deployed defense keeps the fake there."""
    from attacks.graphrag.adaptive import craft
    from controllers.graphrag.candidates import build_conflict
    from controllers.graphrag.tdp import resolve_conflicts
    from environments.graphrag.kg import local_search
    from environments.graphrag.pipeline import Query, build_index
    from suites.graphrag.scenarios import poisoned
    from suites.graphrag.training import trained_ranker
    from suites.graphrag.whitebox import tdp_surrogate

    built = poisoned("world", 1000, "none", 5, 12, "none")
    margin = tdp_surrogate(trained_ranker("tdp"), world)
    agree = []
    for t, target in enumerate(built.plan.targets[:4]):
        docs = craft(world, target, t, random.Random(t), AttackBudget.of(5), frames=0, copy_share=1.0)
        says_fake = margin(docs, target) > 0
        index = build_index(world.documents + docs, world.table, community_method="none")
        kg = index.kg
        retrieved = local_search(kg, target.fact.head, (target.fact.relation,))
        assert build_conflict(kg, set(retrieved), target.fact.head, target.fact.relation) is not None
        q = next(q for q in world.questions if q.id in target.questions)
        verdict = resolve_conflicts(kg, Query(q.text), local_search(kg, q.topic, q.plan), trained_ranker("tdp"))
        fake_kept = not any(kg.statements[i].tail == target.fake and kg.statements[i].head == target.fact.head
                            for i in verdict.removed)
        agree.append(says_fake == fake_kept)
    assert sum(agree) >= 3


@pytest.mark.parametrize("budget", [AttackBudget.of(5), AttackBudget(5, 1)])
def test_tkpa_pays_for_every_claim_its_edits_rewrite(world, budget):
    """An edited sentence that also states another fact about the old object rewrites that
    claim too: it counts against the statements budget (it was counted as one sentence)."""
    from attacks.graphrag.tkpa import changed_claims

    plan = plan_attack(world, world.questions[:12], seed=1)
    poisoning = ATTACKS["tkpa"](world, plan, random.Random(0), budget=budget)
    poisoning.check(budget)
    clean = {d.id: d for d in world.documents}
    rewritten = sum(changed_claims(clean[i], d) for i, d in poisoning.replaced.items())
    assert rewritten and sum(s.statements for s in poisoning.spend.values()) == rewritten
