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
from typing import Any

from environments.graphrag.corpus import Document, Fact
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
        true = set(dataset.index.get((fact.head, fact.relation), [])) | {fact.tail}  # every true value
        fakes = [e for e in dataset.range_of(fact.relation) if e not in true and e != fact.head]
        rng.shuffle(fakes)
        for fake in fakes:
            answers = {}
            for q in qs:
                path = follow(dataset.index, q.topic, q.plan, override={(fact.head, fact.relation): fake}, along=q.path)
                if path is not None and path[-1].tail not in (*q.accepted, q.topic):
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


STATEMENTS_PER_DOCUMENT = 4


@dataclass(frozen=True)
class AttackBudget:
    """What every attack may spend per target (contested fact): documents added or edited,
    and fact-stating sentences written or edited."""

    documents: int
    statements: int

    @classmethod
    def of(cls, documents: int) -> AttackBudget:
        return cls(documents, STATEMENTS_PER_DOCUMENT * documents)


class BudgetExceeded(ValueError):
    """An attack spent more than the shared budget on a target."""


@dataclass
class Spend:
    documents: int = 0
    statements: int = 0


@dataclass
class Poisoning:
    """What an attack does to the corpus: new documents, and replacements of existing ones,
    with what it spent per target (index into the plan's targets)."""

    added: list = field(default_factory=list)  # list[Document]
    replaced: dict = field(default_factory=dict)  # document id -> edited Document
    spend: dict[int, Spend] = field(default_factory=dict)

    def add(self, target: int, doc: Document, table: Any = None) -> None:
        """Add ``doc``; its cost is one document and the fact claims its sentences make (what
        the attacker wrote, whatever the extractor later reads from it)."""
        self.added.append(doc)
        spent = self.spend.setdefault(target, Spend())
        spent.documents += 1
        spent.statements += len(doc.claims)

    def check(self, budget: AttackBudget) -> None:
        for t, spent in sorted(self.spend.items()):
            if spent.documents > budget.documents or spent.statements > budget.statements:
                raise BudgetExceeded(f"target {t}: spent {spent.documents} documents and {spent.statements} "
                                     f"statements, budget {budget.documents} and {budget.statements}")


def support_relations(dataset: Dataset, rng: random.Random, count: int) -> list[str]:
    """Relations the attacker writes its supporting edges with (drawn from the graph's own)."""
    names = sorted(dataset.table.phrases)
    return [rng.choice(names) for _ in range(count)]
