"""TKPA-style edits of existing text (arXiv 2508.04276): change a few words of clean sources.

No new documents: in existing sentences that state the contested fact, the object's name is
replaced by the fake answer, up to the budget's documents and statements. The edited
documents keep every other sentence.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import AttackBudget, AttackPlan, Poisoning, Spend
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset


def tkpa(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    table = dataset.table
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        old = table.sentence(target.fact)
        new = table.sentence(Fact(target.fact.head, target.fact.relation, target.fake))
        spent = out.spend.setdefault(t, Spend())
        for doc in dataset.documents:
            if old not in doc.sentences or spent.documents >= budget.documents:
                continue
            base = out.replaced.get(doc.id, doc)
            edits = min(base.sentences.count(old), budget.statements - spent.statements)
            if edits <= 0:
                break
            sentences, done = [], 0
            for x in base.sentences:
                hit = x == old and done < edits
                done += hit
                sentences.append(new if hit else x)
            out.replaced[doc.id] = Document(doc.id, doc.title, sentences, origin="edited")
            spent.documents += 1
            spent.statements += edits
    return out
