"""Every instruction a task states is enforced: each sentence of every task's instruction holds a
declared clause (environments/contracts/clauses.py), and the reference agent changed to break
that one clause fails with the clause's label."""

from __future__ import annotations

import re

import pytest

from attacks.contracts.violations import violating_agent
from environments.contracts.clauses import FAMILY_CLAUSES, task_clauses
from environments.contracts.env import ContractEnv
from environments.contracts.family import FAMILIES
from environments.contracts.labels import LABELS

TASKS = ContractEnv.task_list()
_SENTENCE = re.compile(r"(?<=[.)])\s+(?=[A-Z])")


def instruction(task) -> str:
    env = ContractEnv(task.id)
    env.reset(seed=0)
    return env.instruction()


def test_every_family_declares_its_clauses():
    assert set(FAMILY_CLAUSES) == set(FAMILIES)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_sentence_of_the_instruction_states_a_declared_clause(task):
    text = instruction(task)
    clauses = task_clauses(task)
    for clause in clauses:
        assert clause.text in text, (task.id, clause.text)
        assert clause.label in LABELS and clause.label not in ("WRONG_VALUE", "SUCCESS")
    for sentence in _SENTENCE.split(text):
        assert any(c.text in sentence for c in clauses), (task.id, sentence)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_breaking_each_clause_fails_with_its_label(play, task):
    for clause in task_clauses(task):
        record = play(task.id, violating_agent(task, clause.violation))
        assert not record.success, (task.id, clause)
        assert clause.label in record.labels, (task.id, clause, record.labels)
