import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.stats import (
    bootstrap_ci,
    mcnemar_exact,
    paired_difference_ci,
    pass_hat_k,
    rank_auc,
    success_rate_ci,
)


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


def test_intervals_do_not_depend_on_the_order_of_the_observations():
    import random

    from agentbed.stats import bootstrap_ci, pass_hat_k_ci

    rng = random.Random(3)
    values = [float(rng.random() < 0.6) for _ in range(60)]
    groups = [f"task{i % 7}" for i in range(60)]
    pairs = list(zip(values, groups, strict=True))
    shuffled = pairs[:]
    rng.shuffle(shuffled)
    assert bootstrap_ci(values) == bootstrap_ci([v for v, _ in shuffled])
    assert bootstrap_ci(values, groups=groups) == bootstrap_ci([v for v, _ in shuffled],
                                                               groups=[g for _, g in shuffled])
    per_task = {f"t{i}": [bool(rng.random() < 0.5) for _ in range(4)] for i in range(9)}
    reordered = dict(reversed(list(per_task.items())))
    assert pass_hat_k_ci(per_task, 2) == pass_hat_k_ci(reordered, 2)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=6),
       st.integers(0, 2**32 - 1))
def test_a_success_rate_from_counts_per_task_is_the_bootstrap_of_its_values(counts, seed):
    """success_rate_ci, from (successes, trials) per task, gives bootstrap_ci's interval to the bit
    over the 1.0/0.0 values grouped by task, in any order (PassRates keeps only the counts)."""
    counts = {task: (min(c, n), n) for task, (c, n) in counts.items()}
    values, groups = [], []
    for task, (c, n) in counts.items():
        values += [1.0] * c + [0.0] * (n - c)
        groups += [task] * n
    order = np.random.default_rng(seed).permutation(len(values))
    expected = bootstrap_ci([values[i] for i in order], groups=[groups[i] for i in order], n_resamples=200,
                            seed=seed)
    got = success_rate_ci(counts, n_resamples=200, seed=seed)
    assert (got.n, got.confidence) == (expected.n, expected.confidence)
    assert [got.estimate, got.low, got.high] == pytest.approx([expected.estimate, expected.low, expected.high],
                                                              rel=0, abs=0, nan_ok=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), min_size=1, max_size=40), min_size=1, max_size=12),
       st.integers(0, 2**32 - 1), st.integers(1, 5000))
def test_pooled_means_are_np_mean_of_each_draws_concatenation_to_the_bit(groups, seed, chunk):
    """The grouped bootstrap's vectorised statistic (stats._pooled_means) gives, for every draw,
    exactly ``np.mean`` of the drawn groups' values concatenated in the draw's order, as the loop
    it replaced did: equal and unequal group sizes, members not next to each other, NaN, any chunk."""
    from agentbed import stats

    rng = np.random.default_rng(seed)
    values = np.concatenate([np.asarray(g, dtype=float) for g in groups])
    order = rng.permutation(values.size)  # a group's members scattered, as _canonical_order may leave them
    ids = np.repeat(np.arange(len(groups)), [len(g) for g in groups])[order]
    data = values[order]
    members = [np.flatnonzero(ids == k) for k in range(len(groups))]
    draws = rng.integers(0, len(groups), size=(int(rng.integers(1, 200)), len(groups)))
    if len({len(g) for g in groups}) == 1 and seed % 2:  # the equal-sizes path on contiguous members too
        data, members = values, [np.arange(i * len(groups[0]), (i + 1) * len(groups[0])) for i in range(len(groups))]
    expected = np.array([np.mean(data[np.concatenate([members[j] for j in row])]) for row in draws])
    saved, stats.POOLED_CHUNK = stats.POOLED_CHUNK, chunk
    try:
        got = stats._pooled_means(data, members, draws)
    finally:
        stats.POOLED_CHUNK = saved
    assert got.dtype == expected.dtype and np.array_equal(got.view(np.int64), expected.view(np.int64))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) | st.floats(0, 1)),
                min_size=1, max_size=40))
def test_the_rank_auc_is_scikit_learns_roc_auc_and_nan_for_one_class(pairs):
    from sklearn.metrics import roc_auc_score

    y, p = np.asarray([a for a, _ in pairs]), np.asarray([b for _, b in pairs])
    if y.all() or not y.any():
        assert np.isnan(rank_auc(y, p))
    else:  # the same number, up to the last bit (a rank sum against a trapezoid)
        assert rank_auc(y, p) == pytest.approx(roc_auc_score(y, p), rel=1e-12, abs=1e-15)
