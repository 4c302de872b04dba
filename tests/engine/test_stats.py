import numpy as np
import pytest

from agentbed.stats import bootstrap_ci, mcnemar_exact, paired_difference_ci, pass_hat_k


def test_bootstrap_interval_covers_the_mean_and_is_deterministic():
    rng = np.random.default_rng(1)
    values = rng.normal(0.5, 0.1, size=200)
    ci = bootstrap_ci(values, seed=3)
    assert ci.low < 0.5 < ci.high and ci.n == 200
    assert ci == bootstrap_ci(values, seed=3)
    assert ci.high - ci.low < 0.05


def test_cluster_bootstrap_is_wider_when_groups_are_correlated():
    # 10 tasks, 10 identical seeds each: the effective sample size is 10, not 100
    values = np.repeat(np.arange(10) % 2, 10).astype(float)
    groups = np.repeat(np.arange(10), 10)
    flat = bootstrap_ci(values)
    grouped = bootstrap_ci(values, groups=list(groups))
    assert grouped.high - grouped.low > 1.5 * (flat.high - flat.low)


def test_paired_difference_detects_a_consistent_drop():
    a = [1.0] * 40
    b = [1.0] * 30 + [0.0] * 10
    diff = paired_difference_ci(b, a)
    assert diff.estimate == pytest.approx(-0.25) and diff.high < 0


def test_pass_hat_k_matches_the_combinatorial_definition():
    per_task = {"t1": [True, True, False, True], "t2": [True] * 4}
    # t1: C(3,2)/C(4,2) = 0.5; t2: 1
    assert pass_hat_k(per_task, 2) == pytest.approx(0.75)
    assert pass_hat_k(per_task, 1) == pytest.approx((0.75 + 1) / 2)


def test_mcnemar_exact():
    assert mcnemar_exact([True] * 10, [True] * 10) == 1.0
    assert mcnemar_exact([True] * 10, [False] * 10) == pytest.approx(2 / 2**10)
