"""TKPA-style edits of existing text (arXiv 2508.04276): change a few words of clean sources.

No new documents: in existing sentences that state the contested fact, the object's name is
replaced by the fake answer, up to the budget's documents and sentences. The attacker knows
which sentences state the fact (it knows the clean corpus, GragPoison's strongest setting);
whatever else such a sentence says about the old object now names the fake too. The edited
documents keep every other sentence.
"""

from __future__ import annotations

import random
import re

from attacks.graphrag.targets import AttackBudget, AttackPlan, Poisoning, Spend, Target
from environments.graphrag.corpus import Claim, Document, Fact, Line
from environments.graphrag.dataset import Dataset


def edit_line(line: str, target: Target, show) -> Line:
    """``line`` with the old object's name replaced by the fake's (and its claims updated)."""
    old, fake = target.fact.tail, target.fake
    text = re.sub(rf"(?<!\w){re.escape(show(old))}(?!\w)", show(fake), line)

    def swap(e: str) -> str:
        return fake if e == old else e

    claims = [Claim(Fact(swap(c.fact.head), c.fact.relation, swap(c.fact.tail)), c.negated, c.dated)
              for c in getattr(line, "claims", ())]
    return Line(text, claims)


def tkpa(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    show = dataset.table.show
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        spent = out.spend.setdefault(t, Spend())
        for doc in dataset.documents:
            base = out.replaced.get(doc.id, doc)
            hits = [i for i, c in base.claims if c.fact == target.fact and not c.negated]
            if not hits or spent.documents >= budget.documents:
                continue
            hits = sorted(set(hits))[:budget.statements - spent.statements]
            if not hits:
                break
            sentences = [edit_line(x, target, show) if i in hits else x for i, x in enumerate(base.sentences)]
            out.replaced[doc.id] = Document(doc.id, doc.title, sentences, origin="edited")
            spent.documents += 1
            spent.statements += len(hits)
    return out
