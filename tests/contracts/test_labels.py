"""Every failure label is produced by a shipped agent or corruption pipeline: the corruptions
(each checked for its exact label in test_corruptions.py), and the scripted agents over every
task (naive's habits, work-first's shortcut, param-drift's re-derived retries)."""

from __future__ import annotations

from attacks.contracts.agents import ParameterDriftAgent
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import naive, oracle, work_first
from environments.contracts.env import ContractEnv
from environments.contracts.labels import LABELS


def test_every_label_has_a_shipped_producer(play):
    produced = {c.label for c in CORRUPTIONS.values()}
    for make in (oracle, naive, work_first, lambda: ParameterDriftAgent(oracle())):
        for task in ContractEnv.task_list():
            produced.update(play(task.id, make()).labels)
    assert produced == set(LABELS), sorted(set(LABELS) - produced)


def test_param_drift_gets_parameter_mismatch_where_the_issuer_binds_the_request(play):
    for task in ("idempotency-retry", "idempotency-after-reconcile", "page-token-three-pages"):
        agent = ParameterDriftAgent(oracle())
        record = play(task, agent)
        assert agent.applied and not record.success
        assert record.metrics["headline"] == "PARAMETER_MISMATCH", (task, record.labels)
