"""Training data for the TDP ranker: conflicts in generated worlds under non-adaptive attacks.

Worlds used for training never overlap the evaluation worlds (different seeds), the real
graphs are never used, and the adaptive attack (KEPo) is held out. Training takes seconds and
is fully determined by the seeds, so the weights are recomputed instead of shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from attacks.graphrag.scenario import poisoned_index
from controllers.graphrag.candidates import Conflict, walk_plan
from controllers.graphrag.features import FEATURES, RAW_FEATURES, QueryContext, candidate_features
from controllers.graphrag.tdp import PairwiseRanker, fit_pairwise
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.world import generate_world

TRAIN_WORLDS = tuple(range(4))  # evaluation worlds start at 1000
TRAIN_ATTACKS = ("poisonedrag", "gragpoison", "community")


def training_pairs(worlds: Sequence[int] = TRAIN_WORLDS, attacks: Sequence[str] = TRAIN_ATTACKS,
                   targets: int = 20) -> list[tuple[np.ndarray, np.ndarray]]:
    """(clean candidate, poisoned candidate) feature pairs from every conflict met on the
    targeted questions' plans."""
    pairs = []
    for seed in worlds:
        data = generate_world(seed)
        for attack in attacks:
            built = poisoned_index(data, attack, targets=targets, seed=seed, community_method="none")
            kg, clean_facts = built.index.kg, set(data.facts)
            for q in data.questions[:targets]:
                pairs += _conflict_pairs(kg, clean_facts, set(local_search(kg, q.topic, q.plan)), q.topic, q.plan)
    return pairs


def _conflict_pairs(kg: KnowledgeGraph, clean_facts: set, alive: set[int], topic: str,
                    plan: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every (clean, poisoned) candidate pair met along one plan, following the clean answers."""
    pairs: list[tuple[np.ndarray, np.ndarray]] = []

    def settle(conflict: Conflict) -> list[str]:
        ctx = QueryContext(kg, alive, conflict)
        phis = {c.answer: candidate_features(ctx, c) for c in conflict.candidates}
        clean = [c.answer for c in conflict.candidates
                 if any(kg.statements[i].fact() in clean_facts for i in c.claims)]
        for good in clean:
            pairs.extend((phis[good], phis[bad]) for bad in phis if bad not in clean)
        return clean or list(phis)

    walk_plan(kg, alive, topic, plan, settle)
    return pairs


@lru_cache(maxsize=4)
def trained_ranker(variant: str = "tdp") -> PairwiseRanker:
    """``tdp``: raw and provenance-aware features; ``tdp-raw``: raw topology features only."""
    features = FEATURES if variant == "tdp" else RAW_FEATURES
    return fit_pairwise(_cached_pairs(), features)


@lru_cache(maxsize=1)
def _cached_pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    return training_pairs()
