"""A white-box attack on the set rule of ``tdp-set``: it lists the fake beside the true value.

``tdp-set`` keeps a losing value's evidence in documents that also assert the winner, because a
page listing several values of a relation ("offices in A, B and C") says both hold. An
attacker who knows the rule writes the fake *next to* the true value in half of its documents
(an undated listing: "X works for A and B"), so that when TDP ranks the truth first those claims
survive it, and spends the other half on GragPoison's injection (a dated negation of the true
value and the dated fake claim), which carries the attack when nothing stops it.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import ATTACK_DATE, AttackBudget, AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def coassert_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    table = dataset.table
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        s, r, true = target.fact.head, target.fact.relation, target.fact.tail
        for j in range(budget.documents):
            if j % 2 == 0:  # a listing: both values, neither negated (two statements)
                values = [true, target.fake] if rng.random() < 0.5 else [target.fake, true]
                body = table.several(s, r, values, rng)
            else:
                body = [table.sentence(Fact(s, r, true), dated=ATTACK_DATE, negated=True, variant=j),
                        table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE, variant=j)]
            out.add(t, Document(f"coas{t:03d}-{j}", f"Notes on {s}", body, origin="poison"), table)
    return out
