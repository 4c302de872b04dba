"""A KEPo-style adaptive attack (arXiv 2603.11501): it fabricates background support on purpose.

Aimed at topology defenses. The contested relation is told as a knowledge evolution path
(a dated negation of the old relation, an invented event, the new relation), and every
fabricated supporting entity gets its own background: edges to well-connected existing
entities, each written in two separate documents that do not mention the contested
relation, and links between the attack texts that enlarge the poisoned community. The
fabrications thereby gain what provenance-aware features look for: several documents per
edge, background degree, documents outside the contested ones.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import ATTACK_DATE, AttackPlan, Poisoning, invented_names, support_relations
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def kepo(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: int = 5, n_support: int = 5) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    degree: dict[str, int] = {}
    for f in dataset.facts:
        degree[f.head] = degree.get(f.head, 0) + 1
        degree[f.tail] = degree.get(f.tail, 0) + 1
    hubs = sorted(degree, key=lambda e: (-degree[e], e))[:20]
    docs = []
    for t, target in enumerate(plan.targets):
        s, r, old = target.fact.head, target.fact.relation, target.fact.tail
        event, *leaves = invented_names(rng, n_support + 1, taken, "Accord")
        taken.update([event, *leaves])
        rels = support_relations(dataset, rng, 6 * n_support + 2)
        claim = table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE)
        evolution = [table.sentence(Fact(s, r, old), dated=ATTACK_DATE, negated=True),
                     table.sentence(Fact(s, rels[0], event)), table.sentence(Fact(target.fake, rels[1], event)), claim]
        bodies = [evolution] + [[claim] for _ in range(max(0, budget - 1))]
        for j, leaf in enumerate(leaves):
            k = 2 + 6 * j
            hub_a, hub_b = rng.sample([h for h in hubs if h not in (s, target.fake, old)], 2)
            support = [table.sentence(Fact(leaf, rels[k], s)), table.sentence(Fact(leaf, rels[k + 1], target.fake))]
            bodies[j % len(bodies)].extend(support)
            background = [table.sentence(Fact(leaf, rels[k + 2], hub_a)), table.sentence(Fact(leaf, rels[k + 3], hub_b)),
                          table.sentence(Fact(leaf, rels[k + 4], leaves[(j + 1) % len(leaves)])),
                          table.sentence(Fact(leaf, rels[k + 5], event)), *support]
            # Two separately worded copies: every fabricated edge is attested by two documents.
            bodies.append(background)
            bodies.append(list(reversed(background)))
        for j, body in enumerate(bodies):
            docs.append(Document(f"kepo{t:03d}-{j}", f"Chronicle {t}.{j}", body, origin="poison"))
    return Poisoning(added=docs)
