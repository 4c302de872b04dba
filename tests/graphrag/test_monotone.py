"""A defense that true documents cannot weaken (issue #38).

Adding documents that restate true facts (a contested fact's true claim and true facts about
its two ends) never lowers the true answer's TDP score, and never turns a question TDP's
reader answered correctly into a wrong one.
"""

import random

import numpy as np
import pytest

from attacks.graphrag import ATTACKS
from attacks.graphrag.camouflage import camouflage
from attacks.graphrag.scenario import attack_plan, poisoned_index
from attacks.graphrag.targets import AttackBudget
from controllers.graphrag.candidates import build_conflict, interpret_query
from controllers.graphrag.features import MONOTONE_FEATURES, QueryContext, candidate_features
from environments.graphrag.agents import answer_chain
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.env import is_correct
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import Query
from environments.graphrag.world import generate_world
from suites.graphrag.defenses import make_defense
from suites.graphrag.training import trained_ranker


def restatements(data, fact, copies):
    """``copies`` documents, each restating ``fact`` and up to three other true facts about its ends."""
    near = sorted((f for f in data.facts if {f.head, f.tail} & {fact.head, fact.tail} and f != fact),
                  key=lambda f: (f.head, f.relation, f.tail))
    return [Document(f"restate-{fact.head}-{k}", f"About {fact.head}",
                     [data.table.sentence(fact, variant=k)] + [data.table.sentence(f, variant=k) for f in near[3 * k:3 * k + 3]])
            for k in range(copies)]


def with_documents(kg, data, docs):
    extract = LexiconExtractor(sorted(data.table.phrases))
    return KnowledgeGraph([*kg.statements, *extract(docs, context=[*data.documents, *docs])])


def true_score(kg, fact, ranker):
    retrieved = set(local_search(kg, fact.head, (fact.relation,)))
    conflict = build_conflict(kg, retrieved, fact.head, fact.relation)
    if conflict is None:
        return None
    ctx = QueryContext(kg, retrieved, conflict)
    return {c.answer: ranker.score(candidate_features(ctx, c)) for c in conflict.candidates}.get(fact.tail)


def tdp_answer(kg, question):
    query = Query(question.text)
    reading = interpret_query(kg, query)
    if reading is None:
        return None
    retrieved = local_search(kg, reading.topic, reading.plan)
    removed = make_defense("tdp")(kg, query, retrieved).removed
    rows = [[i, s.head, s.relation, s.tail, s.chunk, s.dated, s.negated]
            for i in retrieved if i not in removed for s in [kg.statements[i]]]
    return answer_chain(rows, reading.topic, reading.plan)


def test_tdp_weights_are_non_negative_on_monotone_counts():
    for variant in ("tdp", "tdp-static", "tdp-mix"):
        ranker = trained_ranker(variant)
        assert ranker.features == MONOTONE_FEATURES and np.all(ranker.weights >= 0), variant


@pytest.mark.parametrize("attack", ["gragpoison", "frame", "adaptive"])
def test_restating_true_facts_never_lowers_the_truth_or_flips_a_correct_answer(attack):
    ranker = trained_ranker("tdp")
    checked = flips = 0
    for seed in (1000, 1001):
        data = generate_world(seed)
        built = poisoned_index(data, attack, targets=12, seed=seed, community_method="none")
        for target in built.plan.targets:
            fact = target.fact
            before = true_score(built.index.kg, fact, ranker)
            questions = [q for q in data.questions if q.id in target.questions]
            correct = {q.id for q in questions if (a := tdp_answer(built.index.kg, q)) and is_correct(a, q)}
            for copies in (1, 3):
                kg = with_documents(built.index.kg, data, restatements(data, fact, copies))
                after = true_score(kg, fact, ranker)
                if before is not None and after is not None:
                    assert after >= before - 1e-9, (fact, copies, before, after)
                    checked += 1
                for q in questions:
                    if q.id in correct:
                        answer = tdp_answer(kg, q)
                        flips += not (answer and is_correct(answer, q))
    assert checked >= 5 and flips == 0


def test_restatement_documents_state_only_true_facts():
    data = generate_world(1000)
    fact = Fact(data.questions[0].topic, data.questions[0].plan[0], data.questions[0].path[0].tail)
    for doc in restatements(data, fact, 3):
        assert doc.claims and all(c.fact in set(data.facts) and not c.negated for _, c in doc.claims)


def test_restating_documents_never_delete_the_truth_from_clean_pages_on_nations(nations_available):
    """On Nations (never trained on), the ``restate`` attack's documents (the true claim and true
    facts about its ends, camouflaged as the clean pages are) never make TDP delete a clean
    statement of a question's gold path, and never turn a question TDP's reader answers correctly
    on the clean corpus into a wrong one. Before the off-subject check kept the claims that the
    object's own page states, one restating document about a third country deleted a true claim
    from the clean pages (nations-q1: "ussr expeldiplomats usa" on the page of usa)."""
    from suites.graphrag.report import run_cell
    from suites.graphrag.scenarios import load_dataset, poisoned

    data = load_dataset("nations", 0)
    built = poisoned("nations", 0, "restate", 5, 20, "louvain")
    kg, tdp = built.index.kg, make_defense("tdp")
    deleted = []
    for q in data.questions:
        if q.id not in built.attacker_answers:
            continue
        reading = interpret_query(kg, Query(q.text))
        retrieved = local_search(kg, reading.topic, reading.plan)
        gold = set(q.path)
        deleted += [(q.id, i) for i in tdp(kg, Query(q.text), retrieved).removed
                    if not built.poison[i] and kg.statements[i].fact() in gold and not kg.statements[i].negated]
    assert deleted == []
    clean = {r.task: r.metrics["correct"] for r in run_cell("nations", "none", "tdp").records}
    restated = {r.task: r.metrics["correct"] for r in run_cell("nations", "restate", "tdp").records}
    assert set(restated) <= set(clean) and sum(restated.values()) >= 12
    assert [t for t in restated if clean[t] and not restated[t]] == []


def _read(extract, data, doc):
    return {(s.head, s.relation, s.tail, s.negated) for s in extract([doc], context=[*data.documents, doc])}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_camouflage_padding_adds_nothing_the_extractor_reads(attack):
    """The property above adds restating documents as an attacker writes them; the index
    receives them camouflaged (cut or padded to a clean page's length). Padding must add no
    statement the extractor reads: on Kinships, whose pages are long, the padding of one
    restating document held dozens of hedged sentences ("A novel once imagined that ..."), the
    rule extractor misread a third of them as claims about the document's subject, and those
    false candidates flipped two correct answers through TDP (issue #38; found on Kinships, this
    test runs on development worlds 0-3, where the same padding misread one hedge in world 2)."""
    for seed in (0, 1, 2, 3):
        data = generate_world(seed)
        extract = LexiconExtractor(sorted(data.table.phrases))
        plan = attack_plan(data, 12, seed)
        poisoning = ATTACKS[attack](data, plan, random.Random(seed), budget=AttackBudget.of(5))
        dressed = camouflage(poisoning.added, data, random.Random(f"camouflage-{seed}"))
        for before, after in zip(poisoning.added, dressed, strict=True):
            # since session 18 the dress retitles the page as a clean one is titled, under which the
            # extractor may read a claim the attacker's sentences state that it missed under "Update
            # on X" (a sentence opening "It ..." is the page entity's): the attacker's, no misread
            own = {(c.fact.head, c.fact.relation, c.fact.tail, c.negated) for _, c in before.claims}
            added = _read(extract, data, after) - _read(extract, data, before) - own
            assert not added, (attack, seed, after.title, after.text(), added)
