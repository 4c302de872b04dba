"""Restatement-safe pruning (issue #51 item 1): pages about third entities that state only true
facts (their own subject's, and one true fact of a question's gold path) never turn a question
the TDP-defended reader answers correctly into a wrong one, on generated worlds and real graphs,
clean and under attack. Before issue #51, TDP's off-subject check (against TKPA's edits) deleted
every statement of a claim that a page about a third entity stated, unless the object's own page
stated it too, so five such pages cut accuracy from 0.96 to 0.70.

The same holds for pages written *as* pages about the question's own entities (``anchored``):
each about an entity of the gold path, stating true facts of it and one true fact of the path
(the anchored-restatement attacker's pages, minus the fake claim)."""

import random
from functools import cache

import pytest

from attacks.graphrag.scenario import poisoned_index
from controllers.graphrag.candidates import interpret_query
from environments.graphrag.agents import answer_chain
from environments.graphrag.corpus import Document
from environments.graphrag.env import is_correct
from environments.graphrag.kg import local_search
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import Query, build_index
from environments.graphrag.real import load_real
from environments.graphrag.world import generate_world
from suites.graphrag.defenses import make_defense


def third_entity_pages(data, question, rng, pages):
    """``pages`` documents, each titled with and about an entity off the question's path: up to
    three true facts of that entity, and, at a random place, one true fact of the gold path."""
    on_path = {question.topic} | {e for f in question.path for e in (f.head, f.tail)}
    by_head = {}
    for f in data.facts:
        by_head.setdefault(f.head, []).append(f)
    subjects = sorted(e for e, fs in by_head.items() if e not in on_path and len(fs) >= 2)
    docs = []
    for k in range(pages):
        z = rng.choice(subjects)
        own = rng.sample(by_head[z], min(3, len(by_head[z])))
        body = [data.table.sentence(f, variant=k) for f in own]
        body.insert(rng.randrange(len(body) + 1), data.table.sentence(rng.choice(question.path), variant=k + 1))
        docs.append(Document(f"third-{question.id}-{k}", data.table.show(z), body))
    return docs


def anchored_pages(data, question, rng, pages):
    """``pages`` documents, each titled with and about an entity of the question's gold path: up
    to three true facts of that entity, and, at a random place, a true fact of the path naming it."""
    docs = []
    for k in range(pages):
        fact = rng.choice(question.path)
        end = rng.choice([fact.head, fact.tail])
        own = sorted((f for f in data.facts if end in (f.head, f.tail) and f != fact),
                     key=lambda f: (f.head, f.relation, f.tail))
        body = [data.table.sentence(f, variant=k) for f in rng.sample(own, min(3, len(own)))]
        body.insert(rng.randrange(len(body) + 1), data.table.sentence(fact, variant=k + 1))
        docs.append(Document(f"anchored-{question.id}-{k}", data.table.show(end), body))
    return docs


PAGES = {"third": third_entity_pages, "anchored": anchored_pages}


def defended_answer(kg, question, defense):
    query = Query(question.text)
    reading = interpret_query(kg, query)
    if reading is None:
        return None
    retrieved = local_search(kg, reading.topic, reading.plan)
    removed = defense(kg, query, retrieved).removed if defense else set()
    rows = [[i, s.head, s.relation, s.tail, s.chunk, s.dated, s.negated]
            for i in retrieved if i not in removed for s in [kg.statements[i]]]
    return answer_chain(rows, reading.topic, reading.plan)


def flips_under_restatement(data, kg, questions, defense, seed, pages=5, kind="third", extract=None):
    """(questions answered correctly before, of them wrong after adding the pages of ``kind``),
    the pages read by ``extract`` (the extractor that built ``kg``; the rules by default)."""
    extract = extract or LexiconExtractor(sorted(data.table.phrases))
    rng = random.Random(seed)
    facts = set(data.facts)
    correct = flipped = 0
    for q in questions:
        before = defended_answer(kg, q, defense)
        if not (before and is_correct(before, q)):
            continue
        docs = PAGES[kind](data, q, rng, pages)
        assert all(c.fact in facts and not c.negated for d in docs for _, c in d.claims)
        # the graph KnowledgeGraph([*kg.statements, *read]) builds, indexed from kg's (tests/graphrag/test_kg_extended.py)
        grown = kg.extended(extract(docs, context=[*data.documents, *docs]))
        after = defended_answer(grown, q, defense)
        correct += 1
        flipped += not (after and is_correct(after, q))
    return correct, flipped


DATASETS = [("world", 1000), ("world", 1001), ("nations", 0), ("umls", 0), ("geonames", 0)]


@cache
def _built(name, seed, extractor="rules"):
    """(data, the extractor, the graph it built) for a dataset, once per module: both kinds of
    pages are read against the same graph, which no test changes (a flip check grows a copy).
    The rules' extractor is the index's default (None)."""
    from environments.graphrag.extractors import make_extractor

    data = generate_world(seed) if name == "world" else load_real(name, seed=seed)
    extract = None if extractor == "rules" else make_extractor(extractor, sorted(data.table.phrases))
    return data, extract, build_index(data.documents, data.table, extractor=extract, community_method="none").kg


@cache
def _poisoned_kg(attack):
    return poisoned_index(generate_world(1000), attack, targets=12, seed=1000, community_method="none").index.kg


@pytest.mark.parametrize("kind", sorted(PAGES))
@pytest.mark.parametrize(("name", "seed"), DATASETS)
def test_true_pages_never_flip_a_correct_tdp_answer(name, seed, kind, request):
    if name in ("nations", "umls"):
        request.getfixturevalue("nations_available")
    data, _, kg = _built(name, seed)
    correct, flipped = flips_under_restatement(data, kg, data.questions, make_defense("tdp"), seed, kind=kind)
    assert correct >= 10 and flipped == 0, (correct, flipped)


@pytest.mark.parametrize("kind", sorted(PAGES))
@pytest.mark.parametrize("attack", ["gragpoison", "frame", "anchored"])
def test_true_pages_never_flip_a_correct_tdp_answer_under_attack(attack, kind):
    data = generate_world(1000)
    correct, flipped = flips_under_restatement(data, _poisoned_kg(attack), data.questions, make_defense("tdp"), 7,
                                               kind=kind)
    assert correct >= 10 and flipped == 0, (correct, flipped)


@pytest.mark.parametrize("kind", sorted(PAGES))
@pytest.mark.parametrize(("name", "seed"), [("world", 1000), ("nations", 0), ("geonames", 0)])
def test_true_pages_never_flip_a_correct_tdp_answer_on_spacy_built_graphs(name, seed, kind, spacy_extract, request):
    """Issue #50 item 4: the same property on graphs the spaCy extractor built, the pages read by
    it too (since fe4a7aa it reads a real graph's relations by their identifiers; world 1001 passed
    too and is left out for time, UMLS and Kinships for the cost of their spaCy index,
    docs/graphrag-spacy.md)."""
    if name == "nations":
        request.getfixturevalue("nations_available")
    data, extract, kg = _built(name, seed, "spacy")
    correct, flipped = flips_under_restatement(data, kg, data.questions, make_defense("tdp"), seed, kind=kind,
                                               extract=extract)
    assert correct >= 10 and flipped == 0, (correct, flipped)
