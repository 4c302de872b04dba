"""A KEPo-style attack (arXiv 2603.11501): it fabricates background support on purpose.

Aimed at topology defenses. The contested relation is told as a knowledge evolution path
(a dated negation of the old relation, an invented event, the new relation), and each
fabricated supporting entity gets background: an edge to a well-connected existing entity,
with its support edges, written in two of the attack's documents, so the fabrications gain
what provenance-aware features look for (several documents per edge, background degree).
Within the shared budget: the evolution document, one claim per further document, and six
statements per supporting entity (two support edges and one background edge, twice each).
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

LEAF_COST = 6


def hub_entities(dataset: Dataset, count: int = 20) -> list[str]:
    degree: dict[str, int] = {}
    for f in dataset.facts:
        degree[f.head] = degree.get(f.head, 0) + 1
        degree[f.tail] = degree.get(f.tail, 0) + 1
    return sorted(degree, key=lambda e: (-degree[e], e))[:count]


def kepo(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget, n_support: int = 5) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    hubs = hub_entities(dataset)
    out = Poisoning()
    n_docs = budget.documents
    for t, target in enumerate(plan.targets):
        s, r, old = target.fact.head, target.fact.relation, target.fact.tail
        left = budget.statements - 4 - (n_docs - 1)
        event, *leaves = invented_names(rng, 1 + max(0, min(n_support, left // LEAF_COST)), taken, "Accord")
        taken.update([event, *leaves])
        rels = support_relations(dataset, rng, 3 * len(leaves) + 2)
        claim = table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE)
        bodies = [[table.sentence(Fact(s, r, old), dated=ATTACK_DATE, negated=True),
                   table.sentence(Fact(s, rels[0], event)), table.sentence(Fact(target.fake, rels[1], event)), claim]]
        bodies += [[table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE, variant=j)] for j in range(1, n_docs)]
        for j, leaf in enumerate(leaves):
            k = 2 + 3 * j
            hub = rng.choice([h for h in hubs if h not in (s, target.fake, old)])
            edges = [table.sentence(Fact(leaf, rels[k], s)), table.sentence(Fact(leaf, rels[k + 1], target.fake)),
                     table.sentence(Fact(leaf, rels[k + 2], hub))]
            # Two copies in different documents: every fabricated edge is attested twice.
            bodies[j % n_docs].extend(edges)
            bodies[(j + 1) % n_docs].extend(reversed(edges))
        for j, body in enumerate(bodies):
            out.add(t, Document(f"kepo{t:03d}-{j}", f"Chronicle {t}.{j}", body, origin="poison"), table)
    return out
