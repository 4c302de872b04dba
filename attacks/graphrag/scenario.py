"""Build a poisoned GraphRAG index for a dataset: plan targets, run an attack, index the corpus."""

from __future__ import annotations

import inspect
import random
from dataclasses import dataclass, field
from typing import Any

from attacks.graphrag import ATTACKS
from attacks.graphrag.camouflage import camouflage
from attacks.graphrag.globalpoison import GLOBAL_ATTACKS, plan_global
from attacks.graphrag.readable import readable
from attacks.graphrag.targets import AttackBudget, AttackPlan, Spend, plan_attack
from environments.graphrag.corpus import Document
from environments.graphrag.dataset import Dataset, Question
from environments.graphrag.globalsearch import global_questions
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.pipeline import Extractor, Index, apply_poisoning, build_index, poison_labels

NO_ATTACK = "none"


@dataclass
class Poisoned:
    index: Index
    poison: list[bool]
    plan: AttackPlan
    attacker_answers: dict[str, str]
    poison_documents: int
    budget: AttackBudget
    spend: dict[int, Spend]

    def spent(self) -> tuple[float, float]:
        """Mean documents and statements spent per target (0 when nothing was attacked)."""
        if not self.spend:
            return 0.0, 0.0
        n = len(self.plan.targets) or len(self.spend)  # global targets have no fact plan
        return (sum(s.documents for s in self.spend.values()) / n, sum(s.statements for s in self.spend.values()) / n)


AIMS = ("targeted", "conflict")


def target_questions(dataset: Dataset, count: int, aim: str = "targeted") -> list[Question]:
    """``targeted``: the first ``count`` questions; ``conflict``: every question whose gold path
    crosses a natural conflict or a multi-valued relation (an attack on clean ambiguity)."""
    if aim == "conflict":
        return [q for q in dataset.questions if dataset.crosses_conflict(q)]
    return dataset.questions[:count]


def attack_plan(dataset: Dataset, targets: int, seed: int, aim: str = "targeted") -> AttackPlan:
    """The plan every attack on ``dataset`` follows (and the clean run is compared on): it depends
    only on the dataset, the targets and the seed, so the suite lists its questions without
    building an index."""
    return plan_attack(dataset, target_questions(dataset, targets, aim), seed)


@dataclass
class Corpus:
    """The documents an index receives after an attack (before publishing), and what it cost."""

    documents: list[Document]
    plan: AttackPlan
    poison_documents: int = 0
    spend: dict[int, Spend] = field(default_factory=dict)


def poisoned_corpus(dataset: Dataset, attack: str, *, targets: int = 12, budget: int = 5, seed: int = 0,
                    aim: str = "targeted", dress: str = "length", reads: Extractor | None = None,
                    **knowledge: Any) -> Corpus:
    """``dataset``'s documents after ``attack`` (``"none"`` for clean) hits its first ``targets``
    questions (with ``aim="conflict"``: its conflict questions), spending at most ``budget``
    documents (and :data:`STATEMENTS_PER_DOCUMENT` statements each) per target, its new
    documents camouflaged as clean ones (``dress``: :func:`camouflage`'s, ``"length"`` or
    ``"shape"``). ``knowledge`` reaches the attacks that take it (a
    white-box attacker's model of the defense); with ``reads`` (the index's extractor, known to
    the attacker) every added page is re-worded until it reads its claims
    (:func:`attacks.graphrag.readable.readable`)."""
    limit = AttackBudget.of(budget)
    plan = attack_plan(dataset, targets, seed, aim)
    if attack == NO_ATTACK:
        return Corpus(list(dataset.documents), plan)
    attack_fn = ATTACKS[attack]
    accepted = {k: v for k, v in knowledge.items() if k in inspect.signature(attack_fn).parameters}
    poisoning = attack_fn(dataset, plan, random.Random(seed), budget=limit, **accepted)
    poisoning.check(limit)
    added = camouflage(poisoning.added, dataset, random.Random(f"camouflage-{seed}"), dress)
    if reads is not None:
        added = readable(added, dataset, reads)
    return Corpus(apply_poisoning(dataset.documents, added, poisoning.replaced), plan,
                  len(poisoning.added) + len(poisoning.replaced), poisoning.spend)


def poisoned_index(dataset: Dataset, attack: str, *, targets: int = 12, budget: int = 5, seed: int = 0,
                   community_method: str = "louvain", extractor: Extractor | None = None,
                   aim: str = "targeted", dress: str = "length", wording: str = "writer",
                   **knowledge: Any) -> Poisoned:
    """The index of :func:`poisoned_corpus`. The plan depends only on the dataset and seed, so
    every attack, and the clean run, concern the same questions and can be compared pairwise.
    ``wording="read"``: the attacker knows ``extractor`` (the rules' when None) and writes what it
    reads (:mod:`attacks.graphrag.readable`)."""
    reads = None
    if wording == "read":
        reads = extractor if extractor is not None else LexiconExtractor(sorted(dataset.table.phrases))
    corpus = poisoned_corpus(dataset, attack, targets=targets, budget=budget, seed=seed, aim=aim, dress=dress,
                             reads=reads, **knowledge)
    index = build_index(corpus.documents, dataset.table, extractor=extractor, community_method=community_method,
                        seed=seed)
    answers = {q: a for t in corpus.plan.targets for q, a in t.answers.items()}
    return Poisoned(index, poison_labels(index, dataset), corpus.plan, answers, corpus.poison_documents,
                    AttackBudget.of(budget), corpus.spend)


def poisoned_global_index(dataset: Dataset, attack: str, *, budget: int = 5, seed: int = 0,
                          community_method: str = "louvain", extractor: Extractor | None = None) -> Poisoned:
    """The index of ``dataset`` after a global attack (:data:`GLOBAL_ATTACKS`, or ``"none"``)
    aims at every global question, spending at most ``budget`` documents per question."""
    limit = AttackBudget.of(budget)
    targets = plan_global(global_questions(dataset))
    docs, spend, n_poison = dataset.documents, {}, 0
    if attack != NO_ATTACK:
        poisoning = GLOBAL_ATTACKS[attack](dataset, targets, random.Random(seed), limit)
        poisoning.check(limit)
        spend = poisoning.spend
        added = camouflage(poisoning.added, dataset, random.Random(f"camouflage-{seed}"))
        docs = apply_poisoning(docs, added, poisoning.replaced)
        n_poison = len(poisoning.added) + len(poisoning.replaced)
    index = build_index(docs, dataset.table, extractor=extractor, community_method=community_method, seed=seed)
    answers = {t.question: t.fake for t in targets}
    return Poisoned(index, poison_labels(index, dataset), AttackPlan([]), answers, n_poison, limit, spend)
