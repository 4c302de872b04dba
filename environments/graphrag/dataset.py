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

    ``path`` is the chain of gold facts; ``answer`` its last tail. Most questions use only
    (entity, relation) pairs with exactly one object, so the gold answer is unique. A question
    whose path crosses a multi-valued pair ("In which city does Marven Labs have an office?")
    has several gold answers: ``also`` holds the others, and any one of :attr:`accepted` is
    correct (the question asks for *a* city, as a user would read it).
    """

    id: str
    topic: str
    plan: tuple[str, ...]
    text: str
    path: tuple[Fact, ...]
    also: frozenset[str] = frozenset()

    @property
    def answer(self) -> str:
        return self.path[-1].tail

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every gold answer: ``answer`` first, then the other values of a multi-valued question."""
        return (self.answer, *sorted(self.also - {self.answer}))


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

    def multi_valued_pairs(self) -> set[tuple[str, str]]:
        """(entity, relation) pairs with several true objects (a company's offices)."""
        return {pair for pair, objs in self.index.items() if len(set(objs)) > 1}

    def crosses_conflict(self, question: Question) -> bool:
        """Whether a step of the question's gold path is naturally contested in clean data: a
        superseded fact, a disagreeing source, or a multi-valued relation (several true objects)."""
        pairs = self.natural_pairs() | self.multi_valued_pairs()
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
           override: dict[tuple[str, str], str] | None = None,
           along: Iterable[Fact] = ()) -> tuple[Fact, ...] | None:
    """The chain of facts reached from ``topic`` along ``plan``; ``None`` where a step is not
    unique. ``override`` replaces the object of (entity, relation) steps (an attacker's fake);
    at a multi-valued step, the fact of ``along`` (a question's gold path) names the object."""
    chosen = {(f.head, f.relation): f.tail for f in along}
    path, entity = [], topic
    for relation in plan:
        if override and (entity, relation) in override:
            nxt = override[(entity, relation)]
        else:
            objs = index.get((entity, relation), [])
            if len(set(objs)) != 1 and chosen.get((entity, relation)) not in objs:
                return None
            nxt = objs[0] if len(set(objs)) == 1 else chosen[(entity, relation)]
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


def chains(index: dict[tuple[str, str], list[str]], topic: str, plan: Iterable[str]) -> list[tuple[Fact, ...]]:
    """Every chain of facts from ``topic`` along ``plan``, branching at multi-valued steps."""
    out: list[tuple[Fact, ...]] = [()]
    for relation in plan:
        out = [(*c, Fact(e, relation, t)) for c in out for e in [c[-1].tail if c else topic]
               for t in dict.fromkeys(index.get((e, relation), []))]
    return out


def sample_set_questions(index: dict[tuple[str, str], list[str]], plans: list[tuple[str, ...]], count: int,
                         rng: random.Random, text: callable, first_id: int) -> list[Question]:
    """Up to ``count`` questions whose plan branches at a multi-valued step, spread over
    ``plans``: the gold path is one of the chains, ``also`` the other chains' answers."""
    by_plan: dict[tuple[str, ...], list[Question]] = {}
    for plan in plans:
        for topic in sorted({h for (h, r) in index if r == plan[0]}):
            paths = chains(index, topic, plan)
            ends = {p[-1].tail for p in paths}
            if len(paths) > 1 and topic not in ends:
                path = rng.choice(paths)
                by_plan.setdefault(plan, []).append(Question("", topic, plan, text(topic, plan), path,
                                                             frozenset(ends - {path[-1].tail})))
        rng.shuffle(by_plan.get(plan, []))
    picked = [q for k in range(count) for qs in by_plan.values() if k < len(qs) for q in [qs[k]]][:count]
    return [Question(f"q{first_id + i}", q.topic, q.plan, q.text, q.path, q.also) for i, q in enumerate(picked)]
