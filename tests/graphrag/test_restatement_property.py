"""Restatement, as a property (issue #51 item 1): adding pages that state only true facts, about
any entity, never turns a question the TDP-defended reader answers correctly into a wrong one.
Hypothesis draws the pages: how many (1-5), the entity each is about (``third``: any entity off
the question's gold path; ``own``: an entity of the path, the topic or an object on it), which of
its true facts it states (0-4, any subset), which true facts of the question's neighbourhood it
restates beside them (0-3: facts of the gold path, or any true fact with an end on the path),
where they sit on the page and which surface forms they take. ``test_restatement.py`` checks
fixed draws of two kinds on five datasets; this one searches. Generated worlds (development
worlds, with one page per entity and with several, clean and under ``restate`` in the shape
dress, where issue #51's several-pages run saw TDP below the undefended reader; a held-out one
under ``frame``) and real graphs (GeoNames, UMLS). Derandomized: the same examples on every run.
On the development worlds and the real graphs the same draws also check ``tdp-disputed`` on the
questions it answers correctly too: its dispute check refuses only single-valued relations, counted
on pages about their subjects (issue #51; before, a page listing one office of a company disputed
another page listing another)."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import Document
from environments.graphrag.env import is_correct
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import build_index
from environments.graphrag.real import load_real
from environments.graphrag.world import generate_world
from suites.graphrag.defenses import make_defense
from tests.graphrag.test_restatement import defended_answer

# (dataset, seed, attack, clean pages per entity, whose pages are added)
CASES = [("world", 5, "none", "one", "third"), ("world", 1002, "frame", "one", "third"),
         ("geonames", 0, "none", "one", "third"), ("umls", 0, "none", "one", "third"),
         ("world", 5, "none", "several", "third"), ("world", 5, "none", "several", "own"),
         ("world", 6, "restate", "several", "own"), ("world", 5, "none", "one", "own")]


@lru_cache(maxsize=8)  # every case's: world 5's, read first and last, is not built twice
def prepared(name: str, seed: int, attack: str, pages: str = "one"):
    """(dataset, graph, the questions TDP answers correctly on it, the extractor). An attack on
    several pages per entity is dressed as the clean pages are shaped (``dress="shape"``)."""
    data = generate_world(seed, pages=pages) if name == "world" else load_real(name, seed=seed, pages=pages)
    if attack == "none":
        kg = build_index(data.documents, data.table, community_method="none").kg
    else:
        dress = "shape" if pages == "several" else "length"
        kg = poisoned_index(data, attack, targets=12, seed=seed, community_method="none", dress=dress).index.kg
    defense = make_defense("tdp")
    correct = [q for q in data.questions if (a := defended_answer(kg, q, defense)) and is_correct(a, q)]
    return data, kg, correct, LexiconExtractor(sorted(data.table.phrases))


@lru_cache(maxsize=8)
def also_correct(name: str, seed: int, attack: str, pages: str, defense: str) -> frozenset[str]:
    """The questions ``defense`` answers correctly among those TDP does (:func:`prepared`)."""
    _, kg, correct, _ = prepared(name, seed, attack, pages)
    d = make_defense(defense)
    return frozenset(q.id for q in correct if (a := defended_answer(kg, q, d)) and is_correct(a, q))


def development(name: str, seed: int) -> bool:
    """Where ``tdp-disputed`` is checked too: development worlds and the real graphs (worlds 1000
    and up are held out for it)."""
    return name != "world" or seed < 1000


def facts_by_entity(data) -> dict[str, list]:
    """Each entity's facts (as head or tail), in the dataset's order: read by every draw."""
    by_entity: dict[str, list] = {}
    for f in data.facts:
        for e in (f.head, f.tail):
            by_entity.setdefault(e, []).append(f)
    return by_entity


@st.composite
def true_pages(draw, data, question, about="third", by_entity=None):
    """Pages stating only true facts, each titled with and about an entity off the question's
    path (``third``) or on it (``own``); ``by_entity``: :func:`facts_by_entity` of ``data``."""
    on_path = {question.topic} | {e for f in question.path for e in (f.head, f.tail)}
    by_entity = facts_by_entity(data) if by_entity is None else by_entity
    subjects = sorted(e for e in by_entity if (e in on_path) == (about == "own"))
    # the facts with an end on the path: those ends' facts
    near = sorted({f for e in on_path for f in by_entity.get(e, ())}, key=lambda f: (f.head, f.relation, f.tail))
    path = list(question.path)
    docs = []
    for k in range(draw(st.integers(1, 5))):
        z = draw(st.sampled_from(subjects))
        own = sorted(by_entity[z], key=lambda f: (f.head, f.relation, f.tail))
        facts = draw(st.lists(st.sampled_from(own), max_size=4, unique=True))
        restated = draw(st.lists(st.sampled_from(path) | st.sampled_from(near), max_size=3, unique=True))
        for f in restated:
            facts.insert(draw(st.integers(0, len(facts))), f)
        if not facts:
            continue
        body = [data.table.sentence(f, variant=draw(st.integers(0, 5))) for f in facts]
        docs.append(Document(f"prop-{question.id}-{k}", data.table.show(z), body))
    return docs


@pytest.mark.parametrize(("name", "seed", "attack", "pages", "about"), CASES)
def test_true_pages_never_flip_a_correct_tdp_answer(name, seed, attack, pages, about, request):
    if name == "umls":
        request.getfixturevalue("nations_available")
    data, kg, correct, extract = prepared(name, seed, attack, pages)
    assert len(correct) >= 10, len(correct)
    defense = make_defense("tdp")
    # tdp-disputed on the development worlds and real graphs (worlds 1000+ are held out for it, issue #51)
    disputed = make_defense("tdp-disputed")
    facts, by_entity = set(data.facts), facts_by_entity(data)  # once, not per draw
    checked = also_correct(name, seed, attack, pages, "tdp-disputed") if development(name, seed) else frozenset()
    assert not development(name, seed) or len(checked) >= 10, len(checked)

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def prop(draw_from):
        q = draw_from.draw(st.sampled_from(correct), label="question")
        docs = draw_from.draw(true_pages(data, q, about, by_entity), label="pages")
        assert all(c.fact in facts and not c.negated for d in docs for _, c in d.claims)
        # the graph KnowledgeGraph([*kg.statements, *read]) builds, indexed from kg's (tests/graphrag/test_kg_extended.py)
        grown = kg.extended(extract(docs, context=[*data.documents, *docs]))
        after = defended_answer(grown, q, defense)
        assert after and is_correct(after, q), (q.id, after, [d.claims for d in docs])
        if q.id in checked:
            after = defended_answer(grown, q, disputed)
            assert after and is_correct(after, q), ("tdp-disputed", q.id, after, [d.claims for d in docs])

    prop()
