"""White-box adaptive attacks on TDP: they know its features and weights and spend the same budget.

Every variant writes the injection GragPoison writes (a dated negation of the true relation and
the dated fake claim) and one dated claim per further document, then spends the statements left
(``3 * documents - 1`` at the default budget) on what TDP's features reward:

- ``copy``: true facts about the contested entity and the fake answer, copied from clean pages,
  so the poison documents look corroborated (``claim_doc_corroboration``);
- ``support``: fabricated support paths s - x - v* through entities x that are already
  neighbours of s, each fabricated edge written in two documents (``multi_doc_support_paths``,
  background degree, no isolated supporters);
- ``frame``: one document in three restates the *true* claim beside uncorroborated invented
  statements, so the true answer's evidence looks like poison;
- ``anchored``: every document is a page about an end of the fake claim (the contested entity
  or the fake object): the fake claim among true facts of that end copied from clean pages, so
  each counts as a corroborated page about the claim's entity or object
  (``anchored_corroborated_ends``, issue #51); only true facts are restated;
- ``adaptive``: the optimiser. Given a surrogate of the deployed defense (the suite builds it
  from TDP's own feature code and trained weights), it tries every mix of framing documents
  and copy/support statements, and every split of anchored pages between the entity and the
  fake object, and keeps, per target, the one the defense scores highest.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from attacks.graphrag.targets import (
    ATTACK_DATE,
    AttackBudget,
    AttackPlan,
    Poisoning,
    Target,
    invented_names,
    support_relations,
)
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset

# (poison documents for this target, target) -> the defense's score of the fake answer minus
# the best other candidate's (> 0: the defense keeps the fake).
Surrogate = Callable[[Sequence[Document], Target], float]


def _copyable(dataset: Dataset, target: Target) -> list[Fact]:
    s, r = target.fact.head, target.fact.relation
    near = [f for f in dataset.facts if {f.head, f.tail} & {s, target.fake} and (f.head, f.relation) != (s, r)]
    return sorted(near, key=lambda f: (f.head, f.relation, f.tail))


def _neighbours(dataset: Dataset, entity: str, avoid: set[str]) -> list[str]:
    out = {f.tail if f.head == entity else f.head for f in dataset.facts if entity in (f.head, f.tail)}
    return sorted(out - avoid)


def craft(dataset: Dataset, target: Target, t: int, rng: random.Random, budget: AttackBudget, *,
          frames: int, copy_share: float) -> list[Document]:
    """One variant for one target: ``frames`` framing documents, the rest carrying the fake
    claim; the statements left go ``copy_share`` to copied facts, the rest to support paths."""
    table = dataset.table
    s, r, true = target.fact.head, target.fact.relation, target.fact.tail
    n_claim = max(1, budget.documents - frames)
    frames = budget.documents - n_claim
    claim = table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE)
    bodies = [[table.sentence(Fact(s, r, true), dated=ATTACK_DATE, negated=True), claim]]
    bodies += [[table.sentence(Fact(s, r, target.fake), dated=ATTACK_DATE, variant=j)] for j in range(1, n_claim)]
    left = budget.statements - (n_claim + 1)
    framing: list[list[str]] = []
    if frames:
        taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
        per_frame = max(1, left // (3 * frames))  # framing takes a third of what is left
        fillers = invented_names(rng, per_frame * frames, taken, "Society")
        rels = support_relations(dataset, rng, len(fillers))
        for k in range(frames):
            mine = fillers[k * per_frame:(k + 1) * per_frame]
            framing.append([table.sentence(Fact(s, r, true))] +
                           [table.sentence(Fact(true, rel, x)) for x, rel in zip(mine, rels[k * per_frame:], strict=False)])
        left -= sum(len(b) for b in framing)
    n_copy = round(max(0, left) * copy_share)
    copied = _copyable(dataset, target)
    rng.shuffle(copied)
    extra = [table.sentence(f) for f in copied[:n_copy]]
    paths = (max(0, left) - len(extra)) // 2
    hubs = _neighbours(dataset, s, {s, true, target.fake})
    rng.shuffle(hubs)
    rels = support_relations(dataset, rng, paths)
    support = [(table.sentence(Fact(target.fake, rel, x))) for x, rel in zip(hubs[:paths], rels, strict=False)]
    for j, sentence in enumerate(extra):
        bodies[j % n_claim].append(sentence)
    for j, sentence in enumerate(support):  # two attestations, in two different documents
        bodies[j % n_claim].append(sentence)
        bodies[(j + 1) % n_claim].append(sentence) if n_claim > 1 else bodies[0].append(sentence)
    docs = [Document(f"adpt{t:03d}-{j}", f"Report on {s}", body, origin="poison") for j, body in enumerate(bodies)]
    docs += [Document(f"adpf{t:03d}-{k}", f"Notes on {true}", body, origin="poison") for k, body in enumerate(framing)]
    return docs


def craft_anchored(dataset: Dataset, target: Target, t: int, rng: random.Random, budget: AttackBudget, *,
                   on_object: int) -> list[Document]:
    """One anchored variant: ``on_object`` pages about the fake object, the rest about the
    contested entity; each states the fake claim (the first also the dated negation of the true
    one) and fills its share of the statements with true facts of its subject, none touching
    the true object (they would also support it)."""
    table = dataset.table
    s, r, true, fake = target.fact.head, target.fact.relation, target.fact.tail, target.fake
    per_doc = max(1, budget.statements // budget.documents)
    docs = []
    for j in range(budget.documents):
        end = fake if j >= budget.documents - on_object else s
        own = [f for f in dataset.facts if end in (f.head, f.tail) and true not in (f.head, f.tail)
               and (f.head, f.relation) != (s, r)]
        own.sort(key=lambda f: (f.head, f.relation, f.tail))
        rng.shuffle(own)
        body = [table.sentence(Fact(s, r, true), dated=ATTACK_DATE, negated=True)] if j == 0 else []
        body.append(table.sentence(Fact(s, r, fake), dated=ATTACK_DATE, variant=j))
        body += [table.sentence(f, variant=j) for f in own[:per_doc - len(body)]]
        docs.append(Document(f"adpa{t:03d}-{j}", table.show(end), body, origin="poison"))
    return docs


def _strategy(frames_of: Callable[[AttackBudget], int], copy_share: float):
    def attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
        out = Poisoning()
        for t, target in enumerate(plan.targets):
            for doc in craft(dataset, target, t, rng, budget, frames=frames_of(budget), copy_share=copy_share):
                out.add(t, doc, dataset.table)
        return out

    return attack


copy_attack = _strategy(lambda b: 0, 1.0)
support_attack = _strategy(lambda b: 0, 0.0)
frame_attack = _strategy(lambda b: b.documents // 3, 0.5)


def anchored_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget) -> Poisoning:
    """Every page about the contested entity (:func:`craft_anchored`)."""
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        for doc in craft_anchored(dataset, target, t, rng, budget, on_object=0):
            out.add(t, doc, dataset.table)
    return out


# (framing documents, share of copied statements): the mixes TDP's adversarial training searched
MIXES = [(frames, share) for frames in (0, 1, 2) for share in (0.0, 0.5, 1.0)]
# pages about the fake object among the anchored pages (the rest are about the entity); issue #51
ANCHORED_SPLITS = (0, 1, 2, 5)


def adaptive_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
                    surrogate: Surrogate | None = None, anchored: bool = True) -> Poisoning:
    """Per target, the variant the defense's surrogate scores highest (the first mix without a
    surrogate: then it is the copy attack). ``anchored=False`` searches only :data:`MIXES`, as
    the adversarial training that produced the shipped weights did."""
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        best: tuple[float, list[Document]] | None = None
        variants: list[tuple[str, int, float]] = [("mix", f, c) for f, c in MIXES if f < budget.documents]
        variants += [("anchored", k, 0.0) for k in ANCHORED_SPLITS if anchored and k <= budget.documents]
        for kind, n, share in variants:
            g = random.Random(rng.random())
            docs = (craft(dataset, target, t, g, budget, frames=n, copy_share=share) if kind == "mix"
                    else craft_anchored(dataset, target, t, g, budget, on_object=n))
            score = surrogate(docs, target) if surrogate is not None else 0.0
            if best is None or score > best[0]:
                best = (score, docs)
            if surrogate is None:
                break
        for doc in best[1] if best else []:
            out.add(t, doc, dataset.table)
    return out
