"""The diluting white-box attack on ``tdp-disputed`` (issue #51): second objects for enough
subjects of each contested relation that the defense's own statistic reads it as multi-valued,
paid from the targets' budgets, each target within the one budget."""

import random

from hypothesis import given
from hypothesis import strategies as st

from attacks.graphrag.diluted import POOLED_SHARE, conversions_needed, dilution_pages
from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT
from controllers.graphrag.tdp import functional, single_object_counts
from suites.graphrag.scenarios import load_dataset, poisoned
from suites.graphrag.whitebox import single_subjects


@given(st.integers(1, 200), st.data())
def test_conversions_needed_is_the_fewest_that_turn_the_median_off_one(subjects, data):
    single = data.draw(st.integers(0, subjects))
    k = conversions_needed(subjects, single)
    assert not 2 * (single - k) > subjects  # functional's test, after k second objects
    assert k == 0 or 2 * (single - k + 1) > subjects  # one fewer is not enough


def test_diluted_stays_within_each_targets_budget_and_makes_every_contested_relation_multi_valued():
    """Development world 5 through the grid's path (the attack registered, its white-box knowledge
    wired for ``tdp-disputed``): every target spends at most 5 documents and 20 statements, the
    diluting pages together spend more than one target's budget could, and in the index the
    defense reads, no relation an attack target contests is single-valued."""
    built = poisoned("world", 5, "diluted", 5, 12, "louvain", "tdp-disputed")
    budget = built.budget
    assert built.spend and all(s.documents <= budget.documents and s.statements <= budget.statements
                               for s in built.spend.values())
    data = load_dataset("world", 5)
    pages = dilution_pages(data, built.plan, single_subjects(data), random.Random(5),
                           int(POOLED_SHARE * len(built.plan.targets) * budget.statements))
    assert sum(len(p.claims) for p in pages) > budget.statements  # pooled: no one target could pay it
    assert all(len(p.claims) <= STATEMENTS_PER_DOCUMENT for p in pages)
    kg = built.index.kg
    relations = {t.fact.relation for t in built.plan.targets}
    clean = poisoned("world", 5, "none", 5, 12, "louvain")
    assert any(functional(clean.index.kg, r) for r in relations)  # there was something to dilute
    assert not any(functional(kg, r) for r in relations), {r: single_object_counts(kg)[r] for r in relations}
