"""The fabricating attack on ``tdp-disputed``'s own account (issue #51, found in session 17).

A white-box attack: it knows that ``tdp-disputed`` lets only the objects the contested entity's
own pages state compete at a single-valued step (``own_account``), and that a page is about an
entity (:func:`~environments.graphrag.kg.document_subject`) when the entity takes part in at least
3/4 of its (at least 3) statements. Where the entity's real pages are all short (GeoNames' cities
have one or two facts), none of them is a page about it, so a page the attacker writes about the
entity is its only account. The shipped attacks that write pages about the entity (``anchored``,
``bridged``) fill them with true facts copied from clean pages, which such an entity does not have
enough of; this one invents them. Per target it writes pages about the contested entity, each the
fake claim among three invented facts naming the entity (other relations of the graph, objects
drawn from its entities), so each is a full page giving the step one object: the fake. The shipped
attack spends one of the pages on a *witness*: the claim pages share their invented facts and the
witness states them without the fake claim, so each claim page's other statements are stated outside
the fake's documents, the corroboration TDP's ``anchored_corroborated_ends`` reads (session 18,
development data: with TDP, GeoNames 0.35 -> 0.65 and worlds 4-7 0.15 -> 0.38 over pages that each
invent their own facts; with ``tdp-disputed`` 0.55 both ways on GeoNames, 0.17 -> 0.19 on worlds 4-7).

Budget: ``min(documents, statements // 4)`` pages of 4 claims per target (5 pages, 20 claims at the
papers' budget). Documents only; no true claim is restated, no existing page is edited.
"""

from __future__ import annotations

import random

from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT, AttackBudget, AttackPlan, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset

INVENTED = STATEMENTS_PER_DOCUMENT - 1  # invented facts per page beside the fake claim


def _invent(rng: random.Random, s: str, kinds: list[str], others: list[str], n: int) -> list[Fact]:
    return [Fact(s, rng.choice(kinds), rng.choice(others)) for _ in range(n)]


def fabricate(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
              witnesses: int = 0) -> Poisoning:
    """``witnesses``: pages per target that state the claim pages' invented facts without the fake
    claim, so each claim page's other statements are stated outside the fake's documents (the test
    TDP's ``anchored_corroborated_ends`` reads); the claim pages then share their invented facts.
    Without witnesses each claim page invents its own."""
    table = dataset.table
    out = Poisoning()
    relations = sorted({f.relation for f in dataset.facts})
    entities = sorted({f.head for f in dataset.facts} | {f.tail for f in dataset.facts})
    pages = min(budget.documents, budget.statements // STATEMENTS_PER_DOCUMENT)
    witnesses = min(witnesses, pages - 1)
    for t, target in enumerate(plan.targets):
        s, r = target.fact.head, target.fact.relation
        others = [e for e in entities if e not in (s, target.fact.tail, target.fake)]
        kinds = [x for x in relations if x != r] or [r]

        shared = _invent(rng, s, kinds, others, INVENTED) if witnesses else []
        bodies = [[Fact(s, r, target.fake), *(shared or _invent(rng, s, kinds, others, INVENTED))]
                  for _ in range(pages - witnesses)]
        bodies += [[*shared, *_invent(rng, s, kinds, others, STATEMENTS_PER_DOCUMENT - INVENTED)]
                   for _ in range(witnesses)]
        for j, facts in enumerate(bodies):
            body: list[str] = [table.sentence(f, variant=k + j) for k, f in enumerate(facts)]
            out.add(t, Document(f"fabr{t:03d}-{j}", s, body, origin="poison"), table)
    return out


WITNESSES = 1  # the shipped attack's witness pages per target


def fabricated_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    return fabricate(dataset, plan, rng, budget, WITNESSES)
