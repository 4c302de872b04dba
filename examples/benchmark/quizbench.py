"""A stand-in for a benchmark written elsewhere (think AgentDojo): its own task format, its tools
as plain Python functions over its own state, its own grader and its own runner. Nothing here
knows agentbed; quiz_adapter.py puts it under agentbed without changing a line of it.
"""

from __future__ import annotations

from collections.abc import Callable

FACTS = {"france": "capital: Paris; currency: euro", "japan": "capital: Tokyo; currency: yen",
         "peru": "capital: Lima; currency: sol"}

QUESTIONS = [
    {"id": "capital-france", "question": "What is the capital of France?", "answer": "Paris"},
    {"id": "currency-japan", "question": "What is the currency of Japan?", "answer": "yen"},
    {"id": "capital-peru", "question": "What is the capital of Peru?", "answer": "Lima"},
]


def search(term: str) -> str:
    """The benchmark's one tool: the facts about a country."""
    return FACTS.get(term.strip().lower(), "no entry")


def grade(question: dict[str, str], answer: str) -> bool:
    """The benchmark's own scoring function: the grader stays the benchmark's."""
    return answer.strip().lower() == question["answer"].lower()


def run_reference(solver: Callable[[str, Callable[[str], str]], str]) -> dict[str, bool]:
    """The benchmark's own runner: each question to ``solver(question, search)``, graded."""
    return {q["id"]: grade(q, solver(q["question"], search)) for q in QUESTIONS}
