"""Target selection shared by every attack: which fact to contest and which fake answer to push.

Follows GragPoison's relation selection (Liang et al., "GraphRAG under Fire", arXiv 2501.14050):
among the facts on the target questions' reasoning paths, the attacker contests the one shared
by the most target questions, so one injection flips several answers. The fake object is an
entity already seen as an object of the same relation (a plausible answer) that changes the
answer of every question routed through the fact.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from environments.graphrag.corpus import Fact
from environments.graphrag.dataset import Dataset, Question, follow

ATTACK_DATE = "2025/06/01"


@dataclass
class Target:
    fact: Fact  # the clean fact under attack (s, r, t)
    fake: str  # v*, the object the attacker wants believed instead of t
    questions: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)  # question id -> attacker's answer


@dataclass
class AttackPlan:
    targets: list[Target]

    def by_question(self) -> dict[str, Target]:
        return {q: t for t in self.targets for q in t.questions}


def plan_attack(dataset: Dataset, questions: list[Question], seed: int) -> AttackPlan:
    """Contested facts and fakes for ``questions``; questions that admit no fake are left out.
    The plan depends on the dataset and seed only, so every attack hits the same questions."""
    rng = random.Random(seed)
    shared = Counter(f for q in questions for f in set(q.path))
    chosen: dict[Fact, list[Question]] = {}
    for q in questions:
        fact = max(q.path, key=lambda f: (shared[f], -q.path.index(f)))
        chosen.setdefault(fact, []).append(q)
    targets = []
    for fact, qs in chosen.items():
        fakes = [e for e in dataset.range_of(fact.relation) if e not in (fact.tail, fact.head)]
        rng.shuffle(fakes)
        for fake in fakes:
            answers = {}
            for q in qs:
                path = follow(dataset.index, q.topic, q.plan, override={(fact.head, fact.relation): fake})
                if path is not None and path[-1].tail not in (q.answer, q.topic):
                    answers[q.id] = path[-1].tail
            if answers:
                targets.append(Target(fact, fake, list(answers), answers))
                break
    return AttackPlan(targets)


def invented_names(rng: random.Random, count: int, taken: set[str], suffix: str) -> list[str]:
    """Fresh entity names for an attacker's fabricated entities."""
    syllables = ["vor", "tal", "nex", "ori", "plu", "sen", "dax", "mel", "qui", "ras"]
    names: list[str] = []
    while len(names) < count:
        name = "".join(rng.choice(syllables) for _ in range(3)).capitalize() + f" {suffix}"
        if name not in taken and name not in names:
            names.append(name)
    return names


@dataclass
class Poisoning:
    """What an attack does to the corpus: new documents, and replacements of existing ones."""

    added: list = field(default_factory=list)  # list[Document]
    replaced: dict = field(default_factory=dict)  # document id -> edited Document


def support_relations(dataset: Dataset, rng: random.Random, count: int) -> list[str]:
    """Relations the attacker writes its supporting edges with (drawn from the graph's own)."""
    names = sorted(dataset.table.phrases)
    return [rng.choice(names) for _ in range(count)]
