"""TKPA-style edits of existing text (arXiv 2508.04276): change a few words of clean sources.

No new documents: in existing sentences that state the contested fact, the object's name is
replaced by the fake answer, up to the budget's documents and fact claims (every claim an
edited sentence rewrites counts, :func:`changed_claims`). The attacker knows
which sentences state the fact (it knows the clean corpus, GragPoison's strongest setting);
whatever else such a sentence says about the old object now names the fake too. The edited
documents keep every other sentence.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

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


def edited(doc: Document, lines: Sequence[int], target: Target, show) -> Document:
    """``doc`` with ``target``'s old object replaced by the fake in the ``lines`` given."""
    sentences = [edit_line(x, target, show) if i in lines else x for i, x in enumerate(doc.sentences)]
    return Document(doc.id, doc.title, sentences, origin="edited")


def changed_claims(before: Document, after: Document) -> int:
    """The fact claims an edit rewrote: every claim of an edited sentence that names the old
    object, not only the contested one (a sentence stating two facts about it costs two)."""
    return sum(a.fact != b.fact for (_, a), (_, b) in zip(before.claims, after.claims, strict=True))


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
            for keep in range(len(set(hits)), 0, -1):  # as many sentences as the statements left pay for
                new = edited(base, sorted(set(hits))[:keep], target, show)
                if spent.statements + changed_claims(base, new) <= budget.statements:
                    break
            else:
                break
            out.replaced[doc.id] = new
            spent.documents += 1
            spent.statements += changed_claims(base, new)
    return out


# Given the documents edited so far and a target: facts of the clean corpus to rewrite, as (fact,
# the entity name to replace, its replacement), so that the defense's rules agree with the fake
# (suites/graphrag/whitebox.py).
Repairs = Callable[[Sequence[Document], Target], list[tuple[Fact, str, str]]]


def tkpa_rules(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
               repairs: Repairs | None = None, rounds: int = 3) -> Poisoning:
    """White-box TKPA against ``tdp-plausible``: TKPA's edits, then, with the rest of the budget,
    edits of the evidence its rules read: the colleague whose employer predicts the old
    employer becomes one at the fake employer, the citizenship that the fake birth city's country
    contradicts becomes that country. Without ``repairs`` (no model of the defense) it is TKPA."""
    out = tkpa(dataset, plan, rng, budget)
    if repairs is None:
        return out
    show = dataset.table.show
    for t, target in enumerate(plan.targets):
        spent, touched = out.spend.setdefault(t, Spend()), set()  # a document costs once per target
        for _ in range(rounds):
            todo = repairs(list(out.replaced.values()), target)
            for fact, old, new in todo:
                for doc in dataset.documents:
                    base = out.replaced.get(doc.id, doc)
                    hits = sorted({i for i, c in base.claims if c.fact == fact and not c.negated})
                    fresh = doc.id not in touched
                    if not hits or (fresh and spent.documents >= budget.documents):
                        continue
                    swap = Target(Fact(fact.head, fact.relation, old), new)  # edit_line reads old and new
                    rewritten = edited(base, hits, swap, show)
                    cost = changed_claims(base, rewritten)
                    if spent.statements + cost > budget.statements:
                        continue
                    out.replaced[doc.id] = rewritten
                    touched.add(doc.id)
                    spent.documents += fresh
                    spent.statements += cost
            if not todo:
                break
    return out


def tkpa_sourced(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
                 extra_sources: int = 3) -> Poisoning:
    """White-box TKPA against ``tdp-diverse``: TKPA's edits, then, with the rest of the budget,
    ``extra_sources`` new one-sentence news items stating the fake claim, each about nobody, so
    that the edited fact has the independent provenances the defense counts."""
    table = dataset.table
    out = tkpa(dataset, plan, rng, budget)
    for t, target in enumerate(plan.targets):
        spent = out.spend.setdefault(t, Spend())
        fake = Fact(target.fact.head, target.fact.relation, target.fake)
        for j in range(extra_sources):
            if spent.documents >= budget.documents or spent.statements >= budget.statements:
                break
            out.add(t, Document(f"tksr{t:03d}-{j}", f"Brief {t}.{j}", [table.sentence(fake, variant=j + 1)],
                                origin="poison"), table)
    return out
