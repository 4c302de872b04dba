"""GragPoison-style relation injection and enhancement (Liang et al., "GraphRAG under Fire",
arXiv 2501.14050).

Injection: a competing relation (s, r, v*) written with a temporal marker and an explicit
negation of the old relation, with a reason. Enhancement: up to ``n_support`` supporting
relations linking v* to new leaf entities and the root s to the same leaves, which makes the
poisoned edge look locally dense (more common neighbours, paths and triangles than the clean
edge). Everything fits the shared budget: the injection document, one claim per further
document, and as many leaves as the remaining statements pay for (two statements a leaf).
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import (
    ATTACK_DATE,
    AttackBudget,
    AttackPlan,
    Poisoning,
    invented_names,
    support_relations,
)
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def gragpoison(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
               n_support: int = 5) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    out = Poisoning()
    n_docs = budget.documents
    for t, target in enumerate(plan.targets):
        s, r, old = target.fact.head, target.fact.relation, target.fact.tail
        claim = table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE)
        injection = [table.sentence(Fact(s, r, old), dated=ATTACK_DATE, negated=True),
                     "The change followed a restructuring that was announced last spring.", claim]
        # Each further document words the claim its own way, so one phrasing the extractor misses
        # does not lose the attack.
        bodies = [injection] + [[table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE, variant=j)]
                                for j in range(1, n_docs)]
        left = budget.statements - 2 - (n_docs - 1)
        leaves = invented_names(rng, max(0, min(n_support, left // 2)), taken, "Trust")
        taken.update(leaves)
        rels = support_relations(dataset, rng, 2 * len(leaves))
        for j, leaf in enumerate(leaves):
            home = bodies[1 + j % (n_docs - 1)] if n_docs > 1 else bodies[0]
            home += [table.sentence(Fact(target.fake, rels[2 * j], leaf)), table.sentence(Fact(s, rels[2 * j + 1], leaf))]
        for j, body in enumerate(bodies):
            out.add(t, Document(f"grag{t:03d}-{j}", f"Update on {s}", body, origin="poison"), table)
    return out
