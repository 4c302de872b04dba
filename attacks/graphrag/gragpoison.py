"""GragPoison-style relation injection and enhancement (Liang et al., "GraphRAG under Fire",
arXiv 2501.14050).

Injection: a competing relation (s, r, v*) written with a temporal marker and an explicit
negation of the old relation, with a reason. Enhancement: ``n_support`` supporting relations
linking v* to new leaf entities and the root s to the same leaves, which makes the poisoned
edge look locally dense (more common neighbours, paths and triangles than the clean edge).
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import ATTACK_DATE, AttackPlan, Poisoning, invented_names, support_relations
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def gragpoison(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: int = 5,
               n_support: int = 5) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    docs = []
    for t, target in enumerate(plan.targets):
        s, r, old = target.fact.head, target.fact.relation, target.fact.tail
        claim = table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE)
        injection = [table.sentence(Fact(s, r, old), dated=ATTACK_DATE, negated=True),
                     "The change followed a restructuring that was announced last spring.", claim]
        leaves = invented_names(rng, n_support, taken, "Trust")
        taken.update(leaves)
        rels = support_relations(dataset, rng, 2 * n_support)
        support = []
        for j, leaf in enumerate(leaves):
            support.append(table.sentence(Fact(target.fake, rels[2 * j], leaf)))
            support.append(table.sentence(Fact(s, rels[2 * j + 1], leaf)))
        n_docs = max(1, budget - 1)
        bodies = [[claim] for _ in range(n_docs)] if budget > 1 else [injection]
        for j, sentence in enumerate(support):
            bodies[(j // 2) % n_docs].append(sentence)
        if budget > 1:
            bodies.insert(0, injection)
        for j, body in enumerate(bodies):
            docs.append(Document(f"grag{t:03d}-{j}", f"Update on {s}", body, origin="poison"))
    return Poisoning(added=docs)
