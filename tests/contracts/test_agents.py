"""Reference agents: the oracle passes everything over 5 seeds; naive fails in many distinct ways;
feedback mode improves naive on the same tasks and seeds."""

from __future__ import annotations

from agentbed.stats import paired_difference_ci
from environments.contracts.agents import naive, oracle
from environments.contracts.env import ContractEnv

TASKS = [t.id for t in ContractEnv.task_list()]


def test_oracle_passes_every_task_over_five_seeds(play):
    failures = [(t, s, r.labels) for t in TASKS for s in range(5) if not (r := play(t, oracle(), s)).success]
    assert failures == []


def test_naive_fails_with_at_least_six_distinct_labels(play):
    records = [play(t, naive(), 0) for t in TASKS]
    labels = {r.metrics["headline"] for r in records if not r.success}
    assert len(labels - {"GOAL_NOT_MET"}) >= 6, labels
    assert any(r.success for r in records)  # it is naive, not broken
    assert all(r.status == "ok" for r in records)


def test_feedback_mode_gain_is_a_paired_difference_with_an_interval(play):
    off = [play(t, naive(), 1) for t in TASKS]
    on = [play(t, naive(), 1, feedback=True) for t in TASKS]
    # attempt 1 of a feedback episode is the episode without feedback
    assert [r.metrics["first_attempt_pass"] for r in on] == [r.success for r in off]
    diff = paired_difference_ci([float(r.success) for r in on], [float(r.success) for r in off], groups=TASKS)
    assert diff.estimate > 0 and diff.low > 0
    assert max(r.metrics["attempts"] for r in on) == 2
    assert all(r.metrics["attempts"] == 1 for r in on if r.metrics["first_attempt_pass"])
