"""PoisonedRAG-style passages (Zou et al., "PoisonedRAG", USENIX Security 2025).

Per target, one short text per budgeted document that restates the question and asserts the
attacker's answer; no temporal marker, no negation, no supporting structure.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackBudget, AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def poisonedrag(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    questions = {q.id: q for q in dataset.questions}
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        question = questions[target.questions[0]].text
        fake = Fact(target.fact.head, target.fact.relation, target.fake)
        for j in range(min(budget.documents, budget.statements)):
            claim = dataset.table.sentence(fake, variant=j)
            out.add(t, Document(f"prag{t:03d}-{j}", question, [question, claim, "Several sources agree on this."],
                                origin="poison"), dataset.table)
    return out
