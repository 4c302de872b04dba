"""Community-level injection: a fabricated, densely linked cluster around the fake answer.

Knowledge pollution at the community level (the setting the TDP paper names): ``budget`` fake
entities, each tied to the root and to the fake answer and to each other, so community
detection groups them with the contested relation and community summaries repeat it.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackPlan, Poisoning, invented_names, support_relations
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def community_injection(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: int = 5) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    docs = []
    for t, target in enumerate(plan.targets):
        s, r = target.fact.head, target.fact.relation
        fakes = invented_names(rng, budget, taken, "Circle")
        taken.update(fakes)
        rels = support_relations(dataset, rng, 3 * budget)
        for j, member in enumerate(fakes):
            body = [table.sentence(Fact(s, r, target.fake)),
                    table.sentence(Fact(member, rels[3 * j], s)),
                    table.sentence(Fact(member, rels[3 * j + 1], target.fake)),
                    table.sentence(Fact(member, rels[3 * j + 2], fakes[(j + 1) % len(fakes)]))]
            docs.append(Document(f"comm{t:03d}-{j}", member, body, origin="poison"))
    return Poisoning(added=docs)
