"""Community-level injection: a fabricated, densely linked cluster around the fake answer.

Knowledge pollution at the community level (the setting the TDP paper names): one fabricated
entity per budgeted document, each tied to the root, to the fake answer and to the next one,
so community detection groups them with the contested relation and community summaries
repeat it. Four statements a document.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackBudget, AttackPlan, Poisoning, invented_names, support_relations
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def community_injection(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    out = Poisoning()
    members = min(budget.documents, budget.statements // 4)
    for t, target in enumerate(plan.targets):
        s, r = target.fact.head, target.fact.relation
        fakes = invented_names(rng, members, taken, "Circle")
        taken.update(fakes)
        rels = support_relations(dataset, rng, 3 * members)
        for j, member in enumerate(fakes):
            body = [table.sentence(Fact(s, r, target.fake), variant=j),
                    table.sentence(Fact(member, rels[3 * j], s)),
                    table.sentence(Fact(member, rels[3 * j + 1], target.fake)),
                    table.sentence(Fact(member, rels[3 * j + 2], fakes[(j + 1) % len(fakes)]))]
            out.add(t, Document(f"comm{t:03d}-{j}", member, body, origin="poison"), table)
    return out
