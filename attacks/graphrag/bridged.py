"""The bridged white-box attack on TDP (issue #51): anchored pages at both ends of the fake
claim, bridged by documents that never state the contested relation.

The shipped ranker weighs two counts: the claim's ends that a corroborated page about them
states (``anchored_corroborated_ends``, at most 2) and the support paths s - x - v* whose edges
some document *not* stating (s, r) attests (``independent_support_paths``). ``adaptive`` buys
either the first (anchored pages) or the second (support statements inside the claim's own
documents, which do not count as independent), never both. This attack buys both: one short
page about the contested entity and one about the fake object (the fake claim among true facts
of that end, copied from clean pages, so each page is corroborated and about its end), and
*bridge* documents that restate a true link s - x and add a fabricated link x - v*, so each
bridge is a support path attested outside the contested documents. Per target it keeps the
variant the defense's surrogate scores highest on the documents *as camouflaged* (the length
dress cuts a document to a clean template's length, the fake claim with it), among its own
splits and ``adaptive``'s mixes and anchored splits.
"""

from __future__ import annotations

import random

from attacks.graphrag.adaptive import ANCHORED_SPLITS, MIXES, Surrogate, craft, craft_anchored
from attacks.graphrag.camouflage import camouflage
from attacks.graphrag.targets import ATTACK_DATE, AttackBudget, AttackPlan, Poisoning, Target
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset

# (pages about the entity, pages about the fake object, statements per page); the rest bridges
BRIDGED_SPLITS = tuple((e, o, n) for e in (0, 1, 2) for o in (0, 1, 2) if e + o >= 1 for n in (3, 4))
# against ``tdp-disputed`` (it refuses a step whose entity's pages disagree, and reads a link only
# on a page about one of its ends): at most one page about the entity, which co-signs the true
# claim (a page listing more objects than the real one is no dispute), and the bridges written
# as pages about the fake object (its fabricated links alone, the true links left to clean pages)
PAGED_SPLITS = tuple((e, o, n) for e in (0, 1) for o in (1, 2) for n in (3, 4))
DRESS_DRAWS = 3  # camouflage draws each variant is scored under


RelationEnds = tuple[dict[str, set[str]], dict[str, set[str]]]


def relation_ends(facts: list[Fact]) -> RelationEnds:
    """Per relation, the entities it has as heads and as objects."""
    heads: dict[str, set[str]] = {}
    tails: dict[str, set[str]] = {}
    for f in facts:
        heads.setdefault(f.relation, set()).add(f.head)
        tails.setdefault(f.relation, set()).add(f.tail)
    return heads, tails


def bridge_relation(dataset: Dataset, fake: str, x: str, rng: random.Random,
                    ends: RelationEnds | None = None) -> Fact | None:
    """A fabricated fact linking ``fake`` and ``x`` by a relation the graph already uses with
    each of them at that end (``fake`` a head of it and ``x`` an object of it, or the reverse),
    so it reads as a fact of the right kinds; ``None`` when no relation fits. ``ends``:
    :func:`relation_ends` of the dataset's facts, when the caller has it already."""
    heads, tails = ends or relation_ends(dataset.facts)
    forward = sorted(r for r in heads if fake in heads[r] and x in tails[r])
    backward = sorted(r for r in heads if x in heads[r] and fake in tails[r])
    if forward:
        return Fact(fake, rng.choice(forward), x)
    return Fact(x, rng.choice(backward), fake) if backward else None


def craft_bridged(dataset: Dataset, target: Target, t: int, rng: random.Random, budget: AttackBudget, *,
                  on_entity: int, on_object: int, per_page: int, paged: bool = False,
                  spread: bool = False) -> list[Document]:
    """``on_entity`` pages about the contested entity and ``on_object`` about the fake object
    (``per_page`` statements each: the fake claim first, true facts of the page's end not
    touching the true object, and on the first page the dated negation of the true claim
    last), then bridge documents of at most two bridges each with the statements left: a true
    link s - x (x a neighbour of s) and a fabricated link of the right kinds between x and the
    fake object (:func:`bridge_relation`). The camouflage cuts a document to a clean template's
    length keeping its first sentences, so each document puts what counts first. ``paged``: a
    page about the entity states the true claim second (no negation), and the bridges are pages
    about the fake object stating the fabricated links alone (one statement per bridge), against
    ``tdp-disputed``; ``spread`` (with ``paged``): one fabricated link on each page left, padded with
    true facts of the fake object to a page about it, the rest of the links dealt round them, as
    ``tdp-disputed`` counts one support path per witnessing page (issue #51)."""
    table = dataset.table
    s, r, true, fake = target.fact.head, target.fact.relation, target.fact.tail, target.fake
    docs: list[Document] = []
    used = 0
    ends = ([s] * on_entity + [fake] * on_object)[:budget.documents]
    per_page = min(per_page, budget.statements // max(1, len(ends)))
    def own_facts(end: str) -> list[Fact]:  # true facts of ``end`` off the true object and the contested pair
        return sorted((f for f in dataset.facts if end in (f.head, f.tail) and true not in (f.head, f.tail)
                       and (f.head, f.relation) != (s, r)), key=lambda f: (f.head, f.relation, f.tail))

    for j, end in enumerate(ends):
        own = own_facts(end)
        rng.shuffle(own)
        body: list[str] = [table.sentence(Fact(s, r, fake), dated=ATTACK_DATE, variant=j)]
        if paged and end == s:  # co-signs the true claim instead of negating it
            body.append(table.sentence(Fact(s, r, true), variant=j))
        negate = j == 0 and per_page >= 2 and not paged
        body += [table.sentence(f, variant=j) for f in own[:max(0, per_page - len(body) - negate)]]
        if negate:
            body.append(table.sentence(Fact(s, r, true), dated=ATTACK_DATE, negated=True))
        used += len(body)
        docs.append(Document(f"adpb{t:03d}-{j}", table.show(end), body, origin="poison"))
    links = sorted({f for f in dataset.facts if s in (f.head, f.tail) and {f.head, f.tail}.isdisjoint({true, fake})
                    and (f.head, f.relation) != (s, r)}, key=lambda f: (f.head, f.relation, f.tail))
    rng.shuffle(links)
    bridges: list[list[str]] = []
    by_relation, known = relation_ends(dataset.facts), set(dataset.facts)  # once, not per link
    for link in links:
        made = bridge_relation(dataset, fake, link.tail if link.head == s else link.head, rng, by_relation)
        if made is not None and made not in known:
            bridges.append([table.sentence(made)] if paged else [table.sentence(link, variant=len(bridges)),
                                                                   table.sentence(made)])
    pages = budget.documents - len(ends)
    if paged and spread:
        fabricated = [b[0] for b in bridges]
        pads = [table.sentence(f, variant=k) for k, f in enumerate(own_facts(fake)[:2])]
        room = budget.statements - used
        count = min(pages, len(fabricated), room // (1 + len(pads)))
        bodies = [[fabricated[k], *pads] for k in range(count)]
        for k, extra in enumerate(fabricated[count:room - count * (1 + len(pads)) + count] if count else ()):
            bodies[k % count].append(extra)
        return docs + [Document(f"adpc{t:03d}-{k}", table.show(fake), body, origin="poison")
                       for k, body in enumerate(bodies)]
    if paged:  # the links spread over the pages left, at least 3 a page (a page about the fake object)
        fabricated = [b[0] for b in bridges[:budget.statements - used]]
        per = max(3, -(-len(fabricated) // max(1, pages)))
        bodies = [fabricated[k:k + per] for k in range(0, len(fabricated), per)][:pages]
        return docs + [Document(f"adpc{t:03d}-{k}", table.show(fake), body, origin="poison")
                       for k, body in enumerate(bodies)]
    room = min(pages, (budget.statements - used) // 2)
    bodies = [sum(bridges[k:k + 2], []) for k in range(0, min(len(bridges), 2 * room), 2)]
    bodies = bodies[:pages]
    docs += [Document(f"adpc{t:03d}-{k}", f"Notes on {table.show(s)}", body, origin="poison")
             for k, body in enumerate(bodies)]
    return docs


def dressed_margin(surrogate: Surrogate, dataset: Dataset, docs: list[Document], target: Target, t: int,
                   draws: int = DRESS_DRAWS) -> float:
    """The surrogate's margin for ``docs`` as the index will receive them, camouflaged
    (:func:`attacks.graphrag.camouflage.camouflage`, which cuts each to a clean template's
    length): the mean over ``draws`` templates drawn as the dress draws them, each margin clipped
    to [-10, 10] (an uncontested fake counts 10, a fake nobody reads -10)."""
    margins = [surrogate(camouflage(docs, dataset, random.Random(f"dress-{t}-{k}")), target) for k in range(draws)]
    return sum(max(-10.0, min(10.0, m)) for m in margins) / draws


def best_variant(dataset: Dataset, target: Target, t: int, rng: random.Random, budget: AttackBudget,
                 surrogate: Surrogate | None = None, paged: bool = False) -> list[Document]:
    """The documents of the variant the surrogate scores highest once dressed
    (:func:`dressed_margin`) among :data:`BRIDGED_SPLITS` and ``adaptive``'s mixes and anchored
    splits (without a surrogate: one page about each end, then bridges); ``paged`` (against
    ``tdp-disputed``): :data:`PAGED_SPLITS` too, laid out both ways (``spread`` or not), tried last
    (the other variants draw as they did without them)."""
    variants: list[tuple[str, tuple[int, ...]]] = [("bridged", (1, 1, 3))]
    if surrogate is not None:
        variants = [("bridged", v) for v in BRIDGED_SPLITS if v[0] + v[1] <= budget.documents]
        variants += [("mix", (f, int(c * 2))) for f, c in MIXES if f < budget.documents]
        variants += [("anchored", (k,)) for k in ANCHORED_SPLITS if k <= budget.documents]
        variants += [("paged", v) for v in PAGED_SPLITS if v[1] <= budget.documents and paged]
        variants += [("spread", v) for v in PAGED_SPLITS if v[1] <= budget.documents and paged]
    best: tuple[float, list[Document]] | None = None
    for kind, v in variants:
        g = random.Random(rng.random())
        if kind in ("bridged", "paged", "spread"):
            docs = craft_bridged(dataset, target, t, g, budget, on_entity=v[0], on_object=v[1], per_page=v[2],
                                 paged=kind != "bridged", spread=kind == "spread")
        elif kind == "mix":
            docs = craft(dataset, target, t, g, budget, frames=v[0], copy_share=v[1] / 2)
        else:
            docs = craft_anchored(dataset, target, t, g, budget, on_object=v[0])
        score = dressed_margin(surrogate, dataset, docs, target, t) if surrogate is not None else 0.0
        if best is None or score > best[0]:
            best = (score, docs)
    return best[1] if best else []


def bridged_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
                   surrogate: Surrogate | None = None, paged: bool = False) -> Poisoning:
    """Per target, :func:`best_variant`."""
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        for doc in best_variant(dataset, target, t, rng, budget, surrogate, paged):
            out.add(t, doc, dataset.table)
    return out
