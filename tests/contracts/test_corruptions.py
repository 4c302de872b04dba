"""Every corruption pipeline over every task it applies to: the grader assigns exactly the expected
label, and no corrupted artifact is ever graded as a pass."""

from __future__ import annotations

import pytest

from attacks.contracts.agents import corrupting
from attacks.contracts.corruptions import CORRUPTIONS
from environments.contracts.agents import oracle
from environments.contracts.env import ContractEnv

TASKS = [t.id for t in ContractEnv.task_list()]


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruption_gets_its_label_and_never_passes(play, name):
    applied = 0
    for task in TASKS:
        agent = corrupting(oracle(), name)
        record = play(task, agent)
        if agent.applied == 0:
            assert record.success, (task, record.labels)  # untouched: still the oracle
            continue
        applied += 1
        assert not record.success, (task, "a corrupted artifact passed")
        assert record.metrics["headline"] == CORRUPTIONS[name].label, (task, record.labels)
        assert not record.metrics["integrity_strict"]
    assert applied >= 2, f"{name} applied to no task"


def test_some_corruptions_are_accepted_by_the_real_verifier_but_fail_byte_strict(play):
    agent = corrupting(oracle(), "url-decode")  # %2F in X-Amz-Credential decoded: SigV4 re-canonicalises
    record = play("s3-get-injected-mirror", agent)
    assert agent.applied and record.metrics["integrity_issuer"] and not record.metrics["integrity_strict"]
    assert record.metrics["goal"] and not record.success


def test_corruptions_do_not_apply_where_they_change_nothing():
    corruption = CORRUPTIONS["padding"]
    assert corruption.apply("no-padding-here") is None
    assert CORRUPTIONS["autolink"].apply("not-a-url") is None
    assert CORRUPTIONS["visible-text"].apply("https://x", None) is None
    assert CORRUPTIONS["json-reserialise"].apply("[1, 2]") is None
