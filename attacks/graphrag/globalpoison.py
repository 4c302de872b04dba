"""Community-level poisoning of global questions: a fabricated cluster that crowns the fake.

A global question ("Which company do the most people work for?") is answered from community
reports (:mod:`environments.graphrag.globalsearch`), so the attacker aims at a community, not at
a fact: it invents subjects of the asked relation, ties each to the fake answer (the runner-up,
which it can count in the public corpus as well as anyone) and to the next invented subject, so
community detection puts them beside the fake and the fake's report lists them. Each fabricated
edge is written in two of the attack's documents (it looks as attested as a clean fact, which a
page about its head and one about its tail state); one document per budgeted document, four
statements each: the same budget as every other attack.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from attacks.graphrag.targets import AttackBudget, Poisoning
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset
from environments.graphrag.globalsearch import GlobalQuestion
from environments.graphrag.parse import SIGNATURES

_SYLLABLES = ("vor", "tal", "nex", "ori", "plu", "sen", "dax", "mel", "qui", "ras")


@dataclass(frozen=True)
class GlobalTarget:
    question: str
    relation: str
    fake: str


def plan_global(questions: tuple[GlobalQuestion, ...]) -> list[GlobalTarget]:
    return [GlobalTarget(q.id, q.relation, q.runner_up) for q in questions]


def _link_relation(dataset: Dataset, relation: str) -> str:
    """How invented subjects are tied to each other: as colleagues (people) or partners
    (companies), when the graph has those relations; else the asked relation's own name."""
    domains = {dom for dom, _ in SIGNATURES.get(relation, ())}
    wanted = "partners_with" if "company" in domains else "colleague_of"
    return wanted if wanted in dataset.table.phrases else relation


def _subject_names(dataset: Dataset, rng: random.Random, count: int, taken: set[str]) -> list[str]:
    """Invented subjects that look like the world's own: a new given name and a family name the
    world already has (so no suffix tells them apart)."""
    families = sorted({h.split(" ", 1)[1] for h in taken if h.count(" ") == 1}) or ["Doe"]
    names: list[str] = []
    while len(names) < count:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(2)).capitalize() + " " + rng.choice(families)
        if name not in taken and name not in names:
            names.append(name)
    return names


def global_community_injection(dataset: Dataset, targets: list[GlobalTarget], rng: random.Random,
                               budget: AttackBudget) -> Poisoning:
    table = dataset.table
    taken = {f.head for f in dataset.facts} | {f.tail for f in dataset.facts}
    out = Poisoning()
    members_per_target = min(budget.documents, budget.statements // 4)
    for t, target in enumerate(targets):
        link = _link_relation(dataset, target.relation)
        members = _subject_names(dataset, rng, members_per_target, taken)
        taken.update(members)
        k = len(members)
        for j, member in enumerate(members):
            previous = members[(j - 1) % k]
            facts = [Fact(member, target.relation, target.fake)]
            if k > 1:  # a ring: every fact below is also written in the neighbouring document
                facts += [Fact(member, link, members[(j + 1) % k]), Fact(previous, target.relation, target.fake),
                          Fact(previous, link, member)]
            body = [table.sentence(f, variant=j) for f in facts]  # each document its own wording
            out.add(t, Document(f"gcomm{t:03d}-{j}", member, body, origin="poison"), table)
    return out


GLOBAL_ATTACKS = {"community": global_community_injection}
