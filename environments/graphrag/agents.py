"""The deterministic reader: runs local search and answers from the best-supported candidate.

It stands in for an LLM reader and behaves as the GragPoison paper reports LLM readers do:
each document that asserts a candidate supports it, a dated statement counts more than an
undated one (recency is trusted), a negation retracts what it negates, and a candidate that
shares neighbours with the entity asked about is more convincing (corroboration in context).
Multi-hop questions are answered hop by hop, following the winner of each hop.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action
from environments.graphrag.corpus import name_key
from environments.graphrag.globalsearch import global_answer, interpret_global
from environments.graphrag.parse import interpret_plan, link_entity

CLAIM_WEIGHT = {False: 1.0, True: 2.0}  # keyed by "is dated"
RETRACTION_WEIGHT = {False: 2.0, True: 3.0}
CORROBORATION_WEIGHT = 0.5


def best_supported(rows: Sequence[Sequence[Any]], entity: str, relation: str) -> str | None:
    """The object of (entity, relation) with the highest support among statement rows
    ``[id, head, relation, tail, chunk, dated, negated]``. Equal support is a tie the evidence
    cannot break; it goes to the first name in case-folded order (:func:`name_key`): the world
    decides which entities tie, no writer's spelling or page order decides which wins."""
    score: dict[str, float] = defaultdict(float)
    claim_docs: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    neighbours: dict[str, set[str]] = defaultdict(set)
    for _, head, rel, tail, chunk, dated, negated in rows:
        neighbours[head].add(tail)
        neighbours[tail].add(head)
        if head == entity and rel == relation:
            doc = chunk.split("#", 1)[0]
            if negated:
                score[tail] -= RETRACTION_WEIGHT[bool(dated)]
            elif (doc, bool(dated)) not in claim_docs[tail]:
                claim_docs[tail].add((doc, bool(dated)))
                score[tail] += CLAIM_WEIGHT[bool(dated)]
    positive = [c for c in score if claim_docs[c]]
    if not positive:
        return None
    for c in positive:
        score[c] += CORROBORATION_WEIGHT * len((neighbours[entity] & neighbours[c]) - {entity, c})
    return min(positive, key=lambda c: (-score[c], name_key(c), c))


def answer_chain(rows: Sequence[Sequence[Any]], topic: str, plan: Sequence[str]) -> str | None:
    entity: str | None = topic
    for relation in plan:
        entity = best_supported(rows, entity, relation)
        if entity is None:
            return None
    return entity


class ReaderAgent(Agent):
    """search_entities(question), then local_search(linked topic, matched relations), then
    answer(best-supported chain). An aggregation question ("which company do the most people
    work for?") goes to global search instead: community_reports, then map-reduce over them
    (:func:`environments.graphrag.globalsearch.global_answer`). It sees only the question's
    text and the tools' outputs."""

    name = "reader"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.question: dict[str, Any] | None = None
        self.topic: str | None = None
        self.plan: tuple[str, ...] = ()
        self.global_relation: str | None = None

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        obs = json.loads(observation)
        if self.question is None:
            self.question = obs
            self.global_relation = interpret_global(obs["question"], obs.get("schema", []))
            if self.global_relation is not None:
                return Action(make_action("community_reports"))
            return Action(make_action("search_entities", text=obs["question"]))
        if self.global_relation is not None:
            answer = global_answer(obs.get("reports", []), self.global_relation)
            return Action(make_action("answer", answer=answer or "unknown"))
        if self.topic is None:
            text = self.question["question"]
            self.topic = link_entity(text, obs.get("entities", [])) or next(iter(obs.get("entities", [])), "")
            self.plan = interpret_plan(text, self.topic, self.question.get("schema", []),
                                       glosses=self.question.get("glosses"))
            if not self.topic or not self.plan:
                return Action(make_action("answer", answer="unknown"))
            return Action(make_action("local_search", entity=self.topic, relations=list(self.plan)))
        answer = answer_chain(obs.get("statements", []), self.topic, self.plan)
        return Action(make_action("answer", answer=answer or "unknown"))
