"""With TDP, a framing attack never succeeds more often than undefended (issue #51 item 1).

Framing documents restate the true claim beside invented statements; TDP's monotone counts
give them nothing, so TDP decides as if they were absent, while the undefended reader counts
them for the truth. The GeoNames cell where TDP did worse (0.75 -> 0.80) came from a tie its
ranker broke by name (Gothenburg: Sweden and Portugal scored alike and Portugal, first
alphabetically, kept its evidence). A tie now goes to the candidate that more pages about the
claim's entity or its object state; a tie that remains removes nothing and is left to the reader.
"""

import numpy as np
import pytest

from controllers.graphrag.candidates import build_conflict, interpret_query
from controllers.graphrag.tdp import PairwiseRanker, anchored_ends, resolve_conflicts
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import Query
from suites.graphrag.report import run_cell
from suites.graphrag.scenarios import poisoned
from suites.graphrag.training import trained_ranker


@pytest.mark.parametrize("attack", ["gragpoison", "frame"])
def test_ties_go_to_anchored_claims_and_otherwise_remove_nothing(world, attack):
    """Under zero weights every conflict is a tie: a candidate with the most anchored claim
    documents never loses evidence, and when all have as many, none does."""
    built = poisoned("world", 1000, attack, 5, 20, "louvain")
    kg = built.index.kg
    shipped = trained_ranker("tdp")
    blind = PairwiseRanker(np.zeros(len(shipped.features)), shipped.features)
    seen = {True: 0, False: 0}
    for q in world.questions[:20]:
        reading = interpret_query(kg, Query(q.text))
        if reading is None:
            continue
        retrieved = local_search(kg, reading.topic, reading.plan)
        conflict = build_conflict(kg, set(retrieved), reading.topic, reading.plan[0])
        if conflict is None:
            continue
        removed = resolve_conflicts(kg, Query(q.text), retrieved, blind, subject_check=False).removed
        anchors = [anchored_ends(kg, conflict.entity, c) for c in conflict.candidates]
        even = len(set(anchors)) == 1
        seen[even] += 1
        for c, a in zip(conflict.candidates, anchors, strict=True):
            if a == max(anchors):  # with all equal, that is every candidate
                assert not (c.claims & removed), (q.id, c.answer)
            else:
                assert c.claims & removed, (q.id, c.answer)
    assert seen[False] >= 3  # ties the anchors broke


def _successes(dataset: str, attack: str, defense: str) -> dict[str, bool]:
    cell = run_cell(dataset, attack, defense, worlds=1)
    return {r.task: bool(r.metrics.get("attack_success")) for r in cell.records}


@pytest.mark.parametrize(("dataset", "attack"), [("geonames", "frame"), ("world", "frame"), ("world", "adaptive"), ("world", "bridged"),
                                                 ("nations", "frame")])
def test_framing_succeeds_no_more_often_with_tdp(dataset, attack, request):
    """GeoNames was the held-out cell where TDP helped `frame` (0.75 -> 0.80); the others hold
    it on a generated world (1000; `adaptive` searches mixes with framing documents against
    TDP's own ranker, `bridged` pages about both ends and bridges) and a real graph. Counted over
    the targeted questions, paired."""
    if dataset == "nations":
        request.getfixturevalue("nations_available")
    undefended = _successes(dataset, attack, "none")
    defended = _successes(dataset, attack, "tdp")
    assert sum(defended.values()) <= sum(undefended.values())


@pytest.mark.parametrize(("dataset", "attack"), [("geonames", "frame"), ("world", "frame"), ("world", "bridged")])
def test_framing_succeeds_no_more_often_with_tdp_disputed(dataset, attack):
    """The same for ``tdp-disputed`` (issue #51 item 1 names every framing attack, and the variant
    is the one that meets the white-box goal on generated worlds). ``bridged`` aims at it here and at
    ``tdp`` in the undefended cell, so the two cells read different corpora, as the grid's pairs do."""
    undefended = _successes(dataset, attack, "none")
    defended = _successes(dataset, attack, "tdp-disputed")
    assert sum(defended.values()) <= sum(undefended.values())
