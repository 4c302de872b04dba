"""A QA dataset over a corpus: facts, documents, and multi-hop questions with gold answers."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from environments.graphrag.corpus import Document, Fact
from environments.graphrag.prose import Writer


@dataclass(frozen=True)
class Question:
    """A question anchored at a topic entity and answered by following ``plan`` (relation names).

    ``path`` is the chain of gold facts; ``answer`` its last tail. Questions only use (entity,
    relation) pairs with exactly one object, so the gold answer is unique.
    """

    id: str
    topic: str
    plan: tuple[str, ...]
    text: str
    path: tuple[Fact, ...]

    @property
    def answer(self) -> str:
        return self.path[-1].tail


@dataclass
class Dataset:
    name: str
    facts: list[Fact]
    table: Writer  # how the corpus is written; attacks write their prose with it
    documents: list[Document]
    questions: list[Question]
    index: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # Clean-source statements that are not the current truth: superseded facts (dated, then
    # retracted) and sources that disagree. Measurement only: they are clean evidence.
    natural: set[Fact] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.index:
            self.index = objects_index(self.facts)

    def natural_pairs(self) -> set[tuple[str, str]]:
        return {(f.head, f.relation) for f in self.natural}

    def crosses_conflict(self, question: Question) -> bool:
        """Whether a step of the question's gold path is naturally contested in clean data."""
        pairs = self.natural_pairs()
        return any((f.head, f.relation) in pairs for f in question.path)

    def range_of(self, relation: str) -> list[str]:
        """Entities seen as the object of ``relation``: an attacker's plausible fake answers."""
        return sorted({f.tail for f in self.facts if f.relation == relation})


def objects_index(facts: Iterable[Fact]) -> dict[tuple[str, str], list[str]]:
    index: dict[tuple[str, str], list[str]] = {}
    for f in facts:
        index.setdefault((f.head, f.relation), []).append(f.tail)
    return index


def follow(index: dict[tuple[str, str], list[str]], topic: str, plan: Iterable[str],
           override: dict[tuple[str, str], str] | None = None) -> tuple[Fact, ...] | None:
    """The chain of facts reached from ``topic`` along ``plan``; ``None`` where a step is not
    unique. ``override`` replaces the object of (entity, relation) steps (an attacker's fake)."""
    path, entity = [], topic
    for relation in plan:
        if override and (entity, relation) in override:
            nxt = override[(entity, relation)]
        else:
            objs = index.get((entity, relation), [])
            if len(set(objs)) != 1:
                return None
            nxt = objs[0]
        path.append(Fact(entity, relation, nxt))
        entity = nxt
    return tuple(path)


def sample_questions(index: dict[tuple[str, str], list[str]], plans: list[tuple[str, ...]], count: int,
                     rng: random.Random, text: callable, prefix: str = "q") -> list[Question]:
    """Up to ``count`` distinct questions: random topics and plans whose every step is unique and
    whose answer differs from the topic."""
    heads_by_relation: dict[str, list[str]] = {}
    for (head, relation), objs in sorted(index.items()):
        if len(set(objs)) == 1:
            heads_by_relation.setdefault(relation, []).append(head)
    candidates = []
    for plan in plans:
        for topic in heads_by_relation.get(plan[0], []):
            path = follow(index, topic, plan)
            if path is not None and path[-1].tail != topic:
                candidates.append((topic, plan, path))
    rng.shuffle(candidates)
    chosen: list[Question] = []
    seen_answers: dict[tuple[str, ...], int] = {}
    for topic, plan, path in candidates:
        if len(chosen) >= count:
            break
        # Spread questions over plans so 1-, 2- and 3-hop questions all appear.
        if seen_answers.get(plan, 0) > max(1, count // max(1, len(plans))):
            continue
        seen_answers[plan] = seen_answers.get(plan, 0) + 1
        chosen.append(Question(f"{prefix}{len(chosen)}", topic, plan, text(topic, plan), path))
    return chosen
