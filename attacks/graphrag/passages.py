"""PoisonedRAG-style passages (Zou et al., "PoisonedRAG", USENIX Security 2025).

Per target, ``budget`` short texts that restate the question and assert the attacker's answer;
no temporal marker, no negation, no supporting structure.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def poisonedrag(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: int = 5) -> Poisoning:
    questions = {q.id: q for q in dataset.questions}
    docs = []
    for t, target in enumerate(plan.targets):
        question = questions[target.questions[0]].text
        claim = dataset.table.sentence(Fact(target.fact.head, target.fact.relation, target.fake))
        for j in range(budget):
            docs.append(Document(f"prag{t:03d}-{j}", question, [question, claim, "Several sources agree on this."],
                                 origin="poison"))
    return Poisoning(added=docs)
