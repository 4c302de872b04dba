"""The restating attack on a defense that distrusts well-attested claims (issue #38).

A defense whose score falls as more documents assert a candidate (TDP's trained weight of
-2.09 on ``claim_documents`` before issue #38) can be turned against the truth by restating
it. Per target the attacker writes one document with the fake claim and spends the rest of the
budget on documents that say only true things: the true claim, and true facts about its two
ends taken from the world. Undefended, the restatements only help the truth; the attack
succeeds only where the defense punishes corroboration.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT, AttackBudget, AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def restate_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    table = dataset.table
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        s, r, true = target.fact.head, target.fact.relation, target.fact.tail
        out.add(t, Document(f"rsfk{t:03d}", f"Notes on {s}", [table.sentence(Fact(s, r, target.fake))],
                            origin="poison"), table)
        near = sorted((f for f in dataset.facts if {f.head, f.tail} & {s, true} and f != target.fact),
                      key=lambda f: (f.head, f.relation, f.tail))
        rng.shuffle(near)
        per_doc = STATEMENTS_PER_DOCUMENT - 1
        for j in range(1, budget.documents):
            facts = [target.fact, *near[(j - 1) * per_doc:j * per_doc]]
            body = [table.sentence(f, variant=j) for f in facts]
            out.add(t, Document(f"rstr{t:03d}-{j}", f"About {s}", body, origin="poison"), table)
    return out
