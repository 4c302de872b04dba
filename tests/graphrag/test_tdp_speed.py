"""TDP's fast path (issue #37.5) gives the verdicts of the reference path, exactly.

The fast path computes only the features a ranker weighs (:meth:`PairwiseRanker.needed`) and
reuses per-graph and per-conflict structure; the reference (``every_feature=True``) computes
every feature of every candidate, as TDP did before. Removed statements and every suspicion
value must be equal, on generated worlds and on Nations, under several attacks, for each
ranker (the deployed monotone one, ``tdp-static``'s, whose weights are non-zero on triangles
and core numbers, and the unconstrained ``tdp-raw``). Timings are measured by bench/graphrag.py,
never asserted here.
"""

import pytest

from attacks.graphrag.scenario import poisoned_index
from controllers.graphrag.tdp import resolve_conflicts
from environments.graphrag.kg import local_search
from environments.graphrag.pipeline import Query
from environments.graphrag.world import generate_world
from suites.graphrag.training import trained_ranker

ATTACKS = ("gragpoison", "frame", "tkpa", "support")


def _compare(data) -> int:
    rankers = {name: trained_ranker(name) for name in ("tdp", "tdp-static", "tdp-raw")}
    assert rankers["tdp"].needed() < set(rankers["tdp"].features)  # the fast path skips something
    contested = 0
    for attack in ATTACKS:
        built = poisoned_index(data, attack, targets=12, seed=0, community_method="none")
        kg = built.index.kg
        for q in data.questions:
            retrieved = local_search(kg, q.topic, q.plan)
            for name, ranker in rankers.items():
                for keep_sets in (False, True):
                    fast = resolve_conflicts(kg, Query(q.text), retrieved, ranker, keep_sets=keep_sets)
                    slow = resolve_conflicts(kg, Query(q.text), retrieved, ranker, keep_sets=keep_sets,
                                             every_feature=True)
                    assert fast.removed == slow.removed, (attack, name, q.id)
                    assert fast.suspicion == slow.suspicion, (attack, name, q.id)
                    contested += bool(slow.removed)
    return contested


@pytest.mark.parametrize("seed", [1000, 1001, 1002])
def test_fast_tdp_gives_the_reference_verdicts_on_worlds(seed):
    assert _compare(generate_world(seed)) > 20


def test_fast_tdp_gives_the_reference_verdicts_on_nations(nations_available):
    from environments.graphrag.real import load_real

    assert _compare(load_real("nations", seed=0)) > 20
