"""`agentbed list contracts --json`: suites, tasks with family, axes and labels, and agents."""

from __future__ import annotations

import json

import pytest

from agentbed.cli import main
from attacks.contracts.agents import ParameterDriftAgent
from attacks.contracts.violations import violating_agent
from environments.contracts.agents import naive, oracle, work_first
from environments.contracts.catalog import describe
from environments.contracts.clauses import task_clauses
from environments.contracts.env import ContractEnv
from environments.contracts.labels import LABELS


def test_list_json_describes_every_task_and_agent(capsys):
    assert main(["list", "contracts", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (suite,) = doc["suites"]
    assert suite["name"] == "contracts" and suite["default_agent"] == "oracle"
    assert {"oracle", "naive", "work-first", "param-drift", "corrupt-truncate"} <= set(suite["agents"])
    assert len(suite["tasks"]) == 86
    for task in suite["tasks"]:
        assert task["family"] and task["issuer"] and "goal" in task["axes"]
        assert set(task["labels"]) <= set(LABELS) and "WRONG_VALUE" in task["labels"]
    by_id = {t["id"]: t for t in suite["tasks"]}
    assert "PARAMETER_MISMATCH" in by_id["idempotency-retry"]["labels"]
    assert "SCHEDULED_UNAVAILABLE" in by_id["cloudfront-maintenance-window"]["labels"]
    assert by_id["s3-get-after-scan"]["renewal_forced"] and not by_id["s3-get-basic"]["renewal_forced"]
    assert suite["options"]["feedback"]["choices"] == ["off", "on"]


@pytest.mark.parametrize("task", ContractEnv.task_list(), ids=lambda t: t.id)
def test_listed_labels_and_axes_are_what_the_shipped_agents_produce(play, task):
    """Every validity and goal label a task lists is produced on it by a shipped agent (oracle,
    naive, work-first, param-drift) or a clause violation, and nothing else is produced; the
    integrity labels are listed for every task (test_corruptions.py produces each one)."""
    agents = [oracle(), naive(), work_first(), ParameterDriftAgent(oracle())]
    agents += [violating_agent(task, clause.violation) for clause in task_clauses(task)]
    produced = {label for agent in agents for label in play(task.id, agent).labels}
    listed = describe(task.id)
    beyond_integrity = {name for name in listed["labels"] if LABELS[name].axis != "integrity"}
    assert {name for name in produced if LABELS[name].axis not in ("integrity", "none")} == beyond_integrity
    has_validity = any(LABELS[name].axis == "validity" for name in listed["labels"])
    assert ("validity" in listed["axes"]) == has_validity


def test_url_fragments_list_the_expiry_their_verifier_assigns():
    assert "EXPIRED_BEFORE_USE" in describe("url-fragments-after-scan")["labels"]
    assert "validity" in describe("url-fragments-basic")["axes"]
