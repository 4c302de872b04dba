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
- ``adaptive``: the optimiser. Given a surrogate of the deployed defense (the suite builds it
  from TDP's own feature code and trained weights), it tries every mix of framing documents
  and copy/support statements and keeps, per target, the one the defense scores highest.
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

MIXES = [(frames, share) for frames in (0, 1, 2) for share in (0.0, 0.5, 1.0)]


def adaptive_attack(dataset: Dataset, plan: AttackPlan, rng: random.Random, budget: AttackBudget,
                    surrogate: Surrogate | None = None) -> Poisoning:
    """Per target, the variant the defense's surrogate scores highest (the first mix without a
    surrogate: then it is the copy attack)."""
    out = Poisoning()
    for t, target in enumerate(plan.targets):
        best: tuple[float, list[Document]] | None = None
        for frames, share in MIXES:
            if frames >= budget.documents:
                continue
            docs = craft(dataset, target, t, random.Random(rng.random()), budget, frames=frames, copy_share=share)
            score = surrogate(docs, target) if surrogate is not None else 0.0
            if best is None or score > best[0]:
                best = (score, docs)
            if surrogate is None:
                break
        for doc in best[1] if best else []:
            out.add(t, doc, dataset.table)
    return out
