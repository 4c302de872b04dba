"""Hosting a benchmark written elsewhere: quizbench (its tasks, tool and grader) as an agentbed suite.

    agentbed run examples/benchmark/quiz_adapter.py --agent reader,guesser --out runs/quiz

What the AgentDojo adapter taught (docs/extending.md, "Host a benchmark"): tasks and tools come
from the benchmark itself, its grader decides success (never a re-implementation), the agent is
shown what the benchmark's own runner would show, and a test runs the same agent through the
benchmark's own runner and through agentbed and compares the verdicts task by task
(tests/engine/test_examples.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.suite import make_suite
from agentbed.tools import Tool, make_action, tool

sys.path.insert(0, str(Path(__file__).resolve().parent))  # quizbench stands for an installed package
import quizbench  # noqa: E402


class Quiz(ToolEnv):
    """quizbench's questions, its search tool and its grader."""

    tools = (tool("search", "Facts about a country.", cost=1.0, term={"type": "string"}),
             tool("answer", "Give the final answer (ends the episode).", cost=0.0, text={"type": "string"}))

    def setup(self, rng: Any) -> str:
        self.state = {"answer": None}
        return self.task.params["question"]  # what quizbench's own runner gives its solver

    def tool_search(self, term: str) -> ToolResult:
        return ToolResult(quizbench.search(term))

    def tool_answer(self, text: str) -> ToolResult:
        self.state["answer"] = text
        return ToolResult(json.dumps({"answered": text}), terminated=True)

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        answer = self.state["answer"] if self.state else None
        question = next(q for q in quizbench.QUESTIONS if q["id"] == self.task.id)
        ok = answer is not None and quizbench.grade(question, answer)  # the benchmark's grader decides
        return Outcome(success=ok, labels=["SUCCESS" if ok else ("NO_ANSWER" if answer is None else "WRONG")])


TASKS = [TaskSpec(q["id"], {"question": q["question"]}) for q in quizbench.QUESTIONS]


def read_answer(question: str, facts: str) -> str:
    """Reads the fact the question asks for out of the search result."""
    wanted = "currency" if "currency" in question else "capital"
    for part in facts.split(";"):
        key, _, value = part.partition(":")
        if key.strip() == wanted:
            return value.strip()
    return ""


def country_of(question: str) -> str:
    return question.rstrip("?").split(" of ")[-1]


class Reader(Agent):
    """Searches the country the question names and answers from what it read."""

    name = "reader"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.question = ""

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if not self.question:
            self.question = observation
            return Action(make_action("search", term=country_of(observation)))
        return Action(make_action("answer", text=read_answer(self.question, observation)))


class Guesser(Agent):
    """Answers without looking: right only where the guess happens to be."""

    name = "guesser"

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        return Action(make_action("answer", text="Paris"))


SUITE = make_suite("quiz", world=Quiz, tasks=TASKS, agents={"reader": Reader, "guesser": Guesser})
