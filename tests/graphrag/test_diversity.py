"""tdp-diverse's provenance check: an uncontested claim needs documents of distinct provenance
(pages about distinct entities, or documents about nobody); copies on one subject's pages count
once."""

from controllers.graphrag.diversity import claim_sources, undersourced_claims
from environments.graphrag.corpus import Statement
from environments.graphrag.kg import KnowledgeGraph


def _kg(docs):
    """``docs``: document id -> its (head, relation, tail) facts."""
    return KnowledgeGraph([Statement(h, r, t, d, f"{d}#c0") for d, facts in docs.items() for h, r, t in facts])


def _claims(kg, head, relation):
    out: dict[str, set[int]] = {}
    for i in kg.by_pair[(head, relation)]:
        out.setdefault(kg.statements[i].tail, set()).add(i)
    return out


ANNA_PAGE = [("Anna", "born_in", "Tisro"), ("Anna", "works_for", "Acme"), ("Anna", "studied_at", "U1")]
ANNA_PAGE_2 = [("Anna", "born_in", "Tisro"), ("Anna", "colleague_of", "Bo"), ("Anna", "lives_in", "Venland")]
ACME_PAGE = [("Anna", "works_for", "Acme"), ("Acme", "located_in", "Venland"), ("Acme", "founded_by", "Cy")]


def test_a_fact_on_two_subjects_pages_has_two_sources_and_copies_on_one_subject_count_once():
    kg = _kg({"p1": ANNA_PAGE, "p2": ANNA_PAGE_2, "p3": ACME_PAGE})
    assert len(claim_sources(kg, "Anna", "works_for", "Acme")) == 2  # Anna's page and Acme's
    assert len(claim_sources(kg, "Anna", "born_in", "Tisro")) == 1  # two pages, both about Anna
    assert undersourced_claims(kg, "Anna", "born_in", _claims(kg, "Anna", "born_in"), 2)
    assert not undersourced_claims(kg, "Anna", "works_for", _claims(kg, "Anna", "works_for"), 2)
    assert not undersourced_claims(kg, "Anna", "born_in", _claims(kg, "Anna", "born_in"), 1)


def test_documents_about_nobody_are_each_a_source():
    """A short news item has no subject, so one more stating the claim is one more source: what
    the white-box ``tkpa-sourced`` buys with the rest of its budget."""
    kg = _kg({"p1": ANNA_PAGE, "n1": [("Anna", "studied_at", "U1")]})
    assert len(claim_sources(kg, "Anna", "studied_at", "U1")) == 2
    kg = _kg({"p1": ANNA_PAGE})
    assert undersourced_claims(kg, "Anna", "studied_at", _claims(kg, "Anna", "studied_at"), 2)


def test_tdp_diverse_removes_a_single_source_claim_at_an_uncontested_step():
    import numpy as np

    from controllers.graphrag.features import FEATURES
    from controllers.graphrag.tdp import PairwiseRanker, resolve_conflicts
    from environments.graphrag.pipeline import Query

    kg = _kg({"p1": ANNA_PAGE, "p3": ACME_PAGE})
    ranker = PairwiseRanker(np.zeros(len(FEATURES)), tuple(FEATURES))
    everything = range(len(kg.statements))
    born = _claims(kg, "Anna", "born_in")["Tisro"]
    works = _claims(kg, "Anna", "works_for")["Acme"]
    for text, single, doubled in (("Where was Anna born?", born, set()), ("Who does Anna work for?", set(), works)):
        query = Query(text)
        plain = resolve_conflicts(kg, query, everything, ranker)
        diverse = resolve_conflicts(kg, query, everything, ranker, min_sources=2)
        assert not plain.removed & (born | works)
        assert diverse.removed & (born | works) == single
        assert not diverse.removed & doubled
