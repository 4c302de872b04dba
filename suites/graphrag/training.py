"""Training data for the TDP ranker: conflicts in generated worlds, adversarially.

Round 0 trains on PoisonedRAG, GragPoison and community injection. Every further round adds
the copy, support and framing attacks and the white-box adaptive attack aimed at the previous
round's ranker (adversarial training: Madry et al., "Towards Deep Learning Models Resistant to
Adversarial Attacks", ICLR 2018, with a discrete attacker). Held out from every round: the
evaluation worlds (seeds 1000+; training uses 0-3), the real graphs, KEPo, TKPA, and the adaptive attack against the *final* ranker (the one evaluated). Training is
fully determined by the seeds, so the weights are recomputed instead of shipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from attacks.graphrag.scenario import poisoned_index
from controllers.graphrag.candidates import Conflict, walk_plan
from controllers.graphrag.features import (
    MONOTONE_FEATURES,
    RAW_FEATURES,
    QueryContext,
    candidate_features,
)
from controllers.graphrag.tdp import PairwiseRanker, fit_pairwise
from environments.graphrag.dataset import Dataset
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.prose import CORPUS_VERSION
from environments.graphrag.real import load_real
from environments.graphrag.world import generate_world

TRAIN_WORLDS = tuple(range(4))  # evaluation worlds start at 1000
TRAIN_ATTACKS = ("poisonedrag", "gragpoison", "community")
ADVERSARIAL_ATTACKS = ("copy", "support", "frame", "adaptive")
ROUNDS = 2
TRAIN_DRESS = "titled"
MIX_GRAPHS = ("nations",)  # tdp-mix also trains on this real graph; UMLS and Kinships stay held out


def training_pairs(worlds: Sequence[int] = TRAIN_WORLDS, attacks: Sequence[str] = TRAIN_ATTACKS,
                   targets: int = 20, against: PairwiseRanker | None = None,
                   graphs: Sequence[str] = ()) -> list[tuple[np.ndarray, np.ndarray]]:
    """(clean candidate, poisoned candidate) feature pairs from every conflict met on the
    targeted questions' plans of generated worlds and of the real ``graphs``; the adaptive
    attack aims at ``against``."""
    from suites.graphrag.whitebox import tdp_surrogate

    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    sources: list[tuple[str, int]] = [("world", seed) for seed in worlds] + [(name, 0) for name in graphs]
    for source in sources:
        for attack in attacks:
            if attack == "adaptive" and against:  # the 9 mixes the shipped weights were trained on
                data = _source(*source)
                knowledge = {"surrogate": tdp_surrogate(against, data), "anchored": False}
                pairs += _attack_pairs(data, source[1], attack, targets, knowledge)
            else:  # the same pairs in every round and variant that meets them: read once
                pairs += _fixed_attack_pairs(source, attack, targets)
    return pairs


def _source(name: str, seed: int) -> Dataset:
    return generate_world(seed) if name == "world" else load_real(name)


@lru_cache(maxsize=64)
def _fixed_attack_pairs(source: tuple[str, int], attack: str, targets: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """An attack's pairs on one source when they depend on no ranker (every attack but the adaptive
    one aimed at a ranker): rounds 1 and 2 meet the same copy, support and framing pairs, and
    ``tdp-mix`` the generated worlds' pairs of ``tdp`` (retraining: 99 index builds -> 48)."""
    return tuple(_attack_pairs(_source(*source), source[1], attack, targets, {}))


def _attack_pairs(data: Dataset, seed: int, attack: str, targets: int,
                  knowledge: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    # the length dress as the shipped weights were trained on it, with the attacker's own
    # titles (dress="titled"; the default retitles pages since session 18, which moves two
    # weights of one variant by up to 0.09: retraining on it is left to the TDP work)
    built = poisoned_index(data, attack, targets=targets, seed=seed, community_method="none",
                           dress=TRAIN_DRESS, **knowledge)
    kg, clean_facts = built.index.kg, set(data.facts)
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
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


WEIGHTS_FILE = Path(__file__).with_name("tdp_weights.json")
VARIANTS = ("tdp", "tdp-static", "tdp-raw", "tdp-mix")


def recipe() -> dict[str, Any]:
    """Everything training depends on; shipped weights are used only while it is unchanged."""
    return {"worlds": list(TRAIN_WORLDS), "attacks": list(TRAIN_ATTACKS), "adversarial": list(ADVERSARIAL_ATTACKS),
            "rounds": ROUNDS, "features": list(MONOTONE_FEATURES), "raw_features": list(RAW_FEATURES),
            "monotone": True,
            "corpus": CORPUS_VERSION, "mix_graphs": list(MIX_GRAPHS)}


@lru_cache(maxsize=4)
def trained_ranker(variant: str = "tdp") -> PairwiseRanker:
    """The ranker ``variant``, from :data:`WEIGHTS_FILE` when it was written by the current
    :func:`recipe` (training takes about 40 s; ``agentbed graphrag ranker --retrain`` rewrites
    it, and a test checks that retraining reproduces it), else trained now."""
    if WEIGHTS_FILE.is_file():
        shipped = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
        if shipped.get("recipe") == recipe() and variant in shipped.get("rankers", {}):
            weights = shipped["rankers"][variant]
            return PairwiseRanker(np.array(list(weights.values()), dtype=float), tuple(weights))
    return train_ranker(variant)


def write_weights(path: Path = WEIGHTS_FILE) -> dict[str, Any]:
    doc = {"recipe": recipe(), "rankers": {v: train_ranker(v).to_dict() for v in VARIANTS},
           "command": "agentbed graphrag ranker --retrain"}
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def train_ranker(variant: str = "tdp") -> PairwiseRanker:
    """``tdp``: the raw and provenance-aware counts of :data:`MONOTONE_FEATURES` under
    non-negative weights (restating a candidate's evidence never lowers its score),
    adversarially trained (:data:`ROUNDS`, the framing attack among the adversaries);
    ``tdp-static``: the same features, round 0 only (no adaptive attack in training);
    ``tdp-raw``: raw topology features only, round 0; ``tdp-mix``: as ``tdp``, on the generated
    worlds and the real graphs of :data:`MIX_GRAPHS` (a mix of graph shapes)."""
    if variant == "tdp-raw":
        return fit_pairwise(_round_pairs(0), RAW_FEATURES)
    rounds = 0 if variant == "tdp-static" else ROUNDS
    graphs = MIX_GRAPHS if variant == "tdp-mix" else ()
    return fit_pairwise([p for k in range(rounds + 1) for p in _round_pairs(k, graphs)], MONOTONE_FEATURES,
                        nonnegative=True)


@lru_cache(maxsize=8)
def _round_pairs(k: int, graphs: tuple[str, ...] = ()) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    if k == 0:
        return tuple(training_pairs(graphs=graphs))
    previous = fit_pairwise([p for j in range(k) for p in _round_pairs(j, graphs)], MONOTONE_FEATURES,
                            nonnegative=True)
    return tuple(training_pairs(attacks=ADVERSARIAL_ATTACKS, against=previous, graphs=graphs))
