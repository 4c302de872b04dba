"""``KnowledgeGraph.extended`` (issue #51): a graph extended by new statements is the graph built
from all of them, index for index, and the white-box surrogate scores the same on either.

Hypothesis draws the base (a prefix of world 1000's statements, or of a small alphabet's) and the
statements added: new documents and documents the base already has, facts the base states
(restatements) and new ones, negations, self-loops, new entities."""

from __future__ import annotations

import math
import random
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attacks.graphrag.bridged import craft_bridged
from attacks.graphrag.targets import AttackBudget, plan_attack
from controllers.graphrag.accounts import single_object_subjects
from controllers.graphrag.features import fact_documents, max_log_degree, statement_documents
from environments.graphrag.corpus import Statement
from environments.graphrag.kg import KnowledgeGraph
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.world import generate_world

ENTITIES = ["A", "B", "C", "D", "E"]


@lru_cache(maxsize=1)
def world_statements() -> list[Statement]:
    data = generate_world(1000)
    return LexiconExtractor(sorted(data.table.phrases))(data.documents)


def statements(pool_docs: list[str]):
    return st.builds(Statement, st.sampled_from(ENTITIES), st.sampled_from(["r", "s"]), st.sampled_from(ENTITIES),
                     st.sampled_from(pool_docs), st.just("c0"), st.booleans(), st.sampled_from(["", "2020"]))


def assert_same(grown: KnowledgeGraph, built: KnowledgeGraph) -> None:
    assert grown.statements == built.statements and grown.doc_of == built.doc_of
    for name in ("by_doc", "by_pair", "incident", "neighbours", "docs_of_entity"):
        assert getattr(grown, name) == getattr(built, name), name
    assert grown.entities() == built.entities() and grown.relations() == built.relations()
    assert all(grown.degree(e) == built.degree(e) for e in built.entities())
    assert grown._degrees() == dict(built.simple.degree())
    assert fact_documents(grown) == fact_documents(built)
    assert statement_documents(grown) == statement_documents(built)
    assert max_log_degree(grown) == max_log_degree(built)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_an_extended_small_graph_is_the_rebuilt_one(data):
    base = data.draw(st.lists(statements(["d0", "d1", "d2"]), max_size=12), label="base")
    added = data.draw(st.lists(statements(["d1", "d3", "d4"]), max_size=8), label="added")
    parent = KnowledgeGraph(base)
    before = (dict(parent.by_doc), {k: list(v) for k, v in parent.by_pair.items()}, dict(parent._degrees()))
    assert_same(parent.extended(added), KnowledgeGraph([*base, *added]))
    # tdp-disputed's single-valued relations: recounted for the subjects of the pages the new statements touch
    assert single_object_subjects(parent.extended(added)) == single_object_subjects(KnowledgeGraph([*base, *added]))
    # the graph extended is left as it was
    assert (parent.by_doc, parent.by_pair, parent._degrees()) == before
    assert_same(parent, KnowledgeGraph(base))


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_an_extended_world_graph_is_the_rebuilt_one(data):
    clean = world_statements()
    cut = data.draw(st.integers(len(clean) // 2, len(clean)), label="cut")
    picks = data.draw(st.lists(st.integers(0, len(clean) - 1), max_size=20), label="restated")
    docs = data.draw(st.lists(st.sampled_from(["new-a", "new-b", clean[0].doc]), min_size=len(picks),
                              max_size=len(picks)), label="docs")
    added = [Statement(clean[i].head, clean[i].relation, clean[i].tail, d, "c0", bool(i % 3 == 0))
             for i, d in zip(picks, docs, strict=False)]
    base = clean[:cut]
    assert_same(KnowledgeGraph(base).extended(added), KnowledgeGraph([*base, *added]))


def test_the_surrogate_scores_bridged_pages_as_on_a_rebuilt_graph(world, monkeypatch):
    """The surrogate's margin on the extended graph equals its margin on a graph rebuilt from every
    statement (as it was computed before ``extended``), for bridged's pages on world 1000's targets."""
    from suites.graphrag.training import trained_ranker
    from suites.graphrag.whitebox import tdp_surrogate

    ranker = trained_ranker("tdp")
    plan = plan_attack(world, world.questions[:8], seed=1)
    corpora = [(craft_bridged(world, target, t, random.Random(t), AttackBudget.of(5), on_entity=1, on_object=1,
                              per_page=4), target) for t, target in enumerate(plan.targets)]
    fast = tdp_surrogate(ranker, world, strict=True)
    got = [fast(docs, target) for docs, target in corpora]
    monkeypatch.setattr(KnowledgeGraph, "extended", lambda self, new: KnowledgeGraph([*self.statements, *new]))
    rebuilt = tdp_surrogate(ranker, world, strict=True)
    assert got == [rebuilt(docs, target) for docs, target in corpora]
    assert any(math.isfinite(m) for m in got)
