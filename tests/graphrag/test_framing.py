"""With TDP, a framing attack never succeeds more often than undefended (issue #51 item 1).

Framing documents restate the true claim beside invented statements; TDP's monotone counts
give them nothing, so TDP decides as if they were absent, while the undefended reader counts
them for the truth. The cells where TDP did worse were ties its ranker broke by name (GeoNames'
Gothenburg: Sweden and Portugal scored alike and Portugal, first alphabetically, kept its
evidence while Sweden's was removed). A tie is now no evidence: nothing is removed among the
tied candidates, and the reader weighs them as undefended.
"""

import numpy as np
import pytest

from controllers.graphrag.candidates import interpret_query
from controllers.graphrag.tdp import PairwiseRanker, resolve_conflicts
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import Query
from suites.graphrag.report import run_cell
from suites.graphrag.scenarios import poisoned
from suites.graphrag.training import trained_ranker


@pytest.mark.parametrize("attack", ["gragpoison", "frame"])
def test_a_ranker_that_cannot_tell_candidates_apart_removes_nothing(world, attack):
    """Every conflict is a tie under zero weights: TDP must leave every candidate's evidence."""
    built = poisoned("world", 1000, attack, 5, 20, "louvain")
    kg = built.index.kg
    blind = PairwiseRanker(np.zeros(len(trained_ranker("tdp").features)), trained_ranker("tdp").features)
    contested = 0
    for q in world.questions[:20]:
        reading = interpret_query(kg, Query(q.text))
        if reading is None:
            continue
        retrieved = local_search(kg, reading.topic, reading.plan)
        verdict = resolve_conflicts(kg, Query(q.text), retrieved, blind, subject_check=False)
        assert verdict.removed == set(), q.id
        contested += any(v == 0.0 for v in verdict.suspicion.values())
    assert contested >= 5  # the attack did create conflicts to settle


def _successes(dataset: str, attack: str, defense: str) -> dict[str, bool]:
    cell = run_cell(dataset, attack, defense, worlds=1)
    return {r.task: bool(r.metrics.get("attack_success")) for r in cell.records}


@pytest.mark.parametrize("dataset", ["geonames"])
def test_framing_succeeds_no_more_often_with_tdp(dataset):
    """GeoNames was the held-out cell where TDP helped `frame` (0.75 -> 0.80).
    Counted over the targeted questions, paired."""
    undefended = _successes(dataset, "frame", "none")
    defended = _successes(dataset, "frame", "tdp")
    assert sum(defended.values()) <= sum(undefended.values())
