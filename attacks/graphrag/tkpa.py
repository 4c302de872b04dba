"""TKPA-style edits of existing text (arXiv 2508.04276): change a few words of clean sources.

No new documents: in up to ``budget`` existing sentences that state the contested fact, the
object's name is replaced by the fake answer. The edited documents keep every other sentence.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def tkpa(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: int = 5) -> Poisoning:
    table = dataset.table
    edited: dict[str, Document] = {}
    for target in plan.targets:
        old = table.sentence(target.fact)
        new = table.sentence(Fact(target.fact.head, target.fact.relation, target.fake))
        hits = [d for d in dataset.documents if old in d.sentences]
        for doc in hits[:budget]:
            base = edited.get(doc.id, doc)
            edited[doc.id] = Document(doc.id, doc.title, [new if x == old else x for x in base.sentences],
                                      origin="edited")
    return Poisoning(replaced=edited)
