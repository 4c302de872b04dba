"""The grouped bootstrap's canonical order, made with numpy arrays instead of a key tuple per value
(a 100,000-episode summary's largest transient), is the order ``sorted`` gave: same intervals."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbed.stats import _canonical, _percentiles, bootstrap_ci


def by_sorted(values, groups, n_resamples, seed):
    """bootstrap_ci's grouped branch as it was (a Python key per value), the definition."""
    data = np.asarray(values, dtype=float)
    order = sorted(range(data.size), key=lambda i: (_canonical(groups[i]), data[i]))
    data, groups = data[order], [groups[i] for i in order]
    estimate = float(np.mean(data))
    if data.size == 1:
        return estimate, estimate, estimate
    rng = np.random.default_rng(seed)
    keys = list(dict.fromkeys(groups))
    members = [np.flatnonzero(np.asarray([g == k for g in groups])) for k in keys]
    draws = rng.integers(0, len(keys), size=(n_resamples, len(keys)))
    samples = np.array([np.mean(data[np.concatenate([members[j] for j in row])]) for row in draws])
    lo, hi = _percentiles(samples, 0.95)
    return estimate, lo, hi


labels = st.one_of(st.sampled_from(["a", "b", "é", "10", "9"]), st.integers(0, 3), st.booleans(),
                   st.sampled_from([1.0, 0.5]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(labels, st.sampled_from([0.0, 1.0, -0.0, 0.25, 3.5, float("nan")])), min_size=1,
                max_size=30), st.integers(0, 3))
def test_the_grouped_bootstrap_is_the_one_sorted_made(pairs, seed):
    groups = [g for g, _ in pairs]
    values = [v for _, v in pairs]
    got = bootstrap_ci(values, groups=groups, n_resamples=50, seed=seed)
    want = by_sorted(values, groups, 50, seed)
    np.testing.assert_array_equal([got.estimate, got.low, got.high], want)
