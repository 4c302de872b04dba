"""The diluting white-box attack on ``tdp-disputed`` (issue #51): second objects for enough
subjects of each contested relation that the defense's own statistic reads it as multi-valued,
paid from the targets' budgets, each target within the one budget."""

import random

from hypothesis import given
from hypothesis import strategies as st

from attacks.graphrag.diluted import MIN_PAGE, POOLED_SHARE, conversions_needed, dilution_pages
from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT
from controllers.graphrag.accounts import functional, single_object_subjects
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.lexicon import LexiconExtractor
from suites.graphrag.scenarios import load_dataset, poisoned
from suites.graphrag.whitebox import single_subjects


@given(st.integers(1, 200), st.data())
def test_conversions_needed_is_the_fewest_that_turn_the_median_off_one(subjects, data):
    """A subject given a second object on a page of its own counts neither way (its pages
    disagree), so k of them leave single - k of subjects - k."""
    single = data.draw(st.integers(0, subjects))
    k = conversions_needed(subjects, single)
    assert not 2 * (single - k) > subjects - k  # functional's test, after k second objects
    assert k == 0 or 2 * (single - k + 1) > subjects - k + 1  # one fewer is not enough


def test_diluted_stays_within_each_targets_budget_and_cannot_dilute_a_relation_of_one_object_subjects():
    """Development world 5 through the grid's path (the attack registered, its white-box knowledge
    wired for ``tdp-disputed``): every target spends at most 5 documents and 20 statements, and
    (session 16) with a subject whose own pages disagree counted neither way, the pooled budget
    cannot make a relation of one-object subjects multi-valued: every contested relation stays
    single-valued in the index the defense reads, where session 15's statistic lost them all."""
    built = poisoned("world", 5, "diluted", 5, 12, "louvain", "tdp-disputed")
    budget = built.budget
    assert built.spend and all(s.documents <= budget.documents and s.statements <= budget.statements
                               for s in built.spend.values())
    data = load_dataset("world", 5)
    n = len(built.plan.targets)
    pages = dilution_pages(data, built.plan, single_subjects(data), random.Random(5),
                           int(POOLED_SHARE * n * budget.statements), int(POOLED_SHARE * n * budget.documents))
    assert all(len(p.claims) <= STATEMENTS_PER_DOCUMENT for p in pages)
    # each a page about one subject (the defense counts objects only there): every claim names it
    assert all(len(p.claims) >= MIN_PAGE and set.intersection(*({c.fact.head, c.fact.tail} for _, c in p.claims))
               for p in pages)
    kg = built.index.kg
    relations = {t.fact.relation for t in built.plan.targets}
    clean = poisoned("world", 5, "none", 5, 12, "louvain")
    assert any(functional(clean.index.kg, r) for r in relations)  # there was something to dilute
    assert all(functional(kg, r) for r in relations), {r: single_object_subjects(kg)[r] for r in relations}


def test_second_objects_count_only_on_pages_about_their_subject():
    """``tdp-disputed``'s statistic reads a subject's objects only on pages about the subject
    (issue #51): second objects of one-object subjects, four subjects to a page (the session-13
    ``diluted`` pages, about no one), leave every relation's counts as they were; the same second
    objects each on a page about its subject among two of its true facts convert those subjects."""
    data = load_dataset("world", 5)
    clean = poisoned("world", 5, "none", 5, 12, "louvain").index.kg
    counts = single_object_subjects(clean)
    relation = "works_for"
    assert functional(clean, relation)
    subjects, single = counts[relation]
    people = sorted(single)[:8]
    second = [Fact(s, relation, next(o for o in data.range_of(relation) if o not in data.index.get((s, relation), [])))
              for s in people]
    read = LexiconExtractor(sorted(data.table.phrases))

    def grown(docs):
        return clean.extended(read(docs, context=[*data.documents, *docs]))

    mixed = [Document(f"mix{k}", "Notes", [data.table.sentence(f) for f in second[k:k + 4]]) for k in range(0, 8, 4)]
    assert single_object_subjects(grown(mixed))[relation] == counts[relation]
    own = [Document(f"own{k}", data.table.show(f.head),
                    [data.table.sentence(x) for x in [f, *[t for t in data.facts if t.head == f.head
                                                              and t.relation != relation][:2]]])
           for k, f in enumerate(second)]
    after = single_object_subjects(grown(own))[relation]
    # session 16: a converted subject's own pages now disagree, so it counts neither way: none turns
    # multi-valued, every one that stops counting as single leaves the subjects too
    converted = single - after[1]
    assert converted <= set(people) and len(converted) >= 6 and after[0] == subjects - converted
