"""The best-of-n estimator against brute force, and the curves on data with known answers."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from truegrade.goodhart import best_of_n, default_ns, overoptimization, synthetic_pool
from truegrade.goodhart._bon import bon_kl, bon_weights
from truegrade.goodhart._fit import bon_n_for_kl


def brute_force(proxy, gold, n):
    """Average, over every n-subset, of the gold of the proxy's pick (ties split evenly)."""
    total = 0.0
    subsets = list(itertools.combinations(range(len(proxy)), n))
    for subset in subsets:
        best = max(proxy[i] for i in subset)
        tied = [gold[i] for i in subset if proxy[i] == best]
        total += sum(tied) / len(tied)
    return total / len(subsets)


def test_estimator_equals_brute_force_over_all_subsets():
    rng = np.random.default_rng(0)
    proxy, gold, groups = [], [], []
    sizes = [1, 2, 3, 5, 7, 8, 8]
    for p, size in enumerate(sizes):
        proxy += list(rng.integers(0, 4, size).astype(float))  # small integers: many ties
        gold += list(rng.normal(size=size))
        groups += [f"prompt{p}"] * size
    est = best_of_n(proxy, gold, groups, range(1, 9))
    start = 0
    for p, size in enumerate(sizes):
        x, y = proxy[start : start + size], gold[start : start + size]
        for j, n in enumerate(range(1, 9)):
            if n > size:
                assert math.isnan(est.gold[p, j]) and not est.eligible[p, j]
                continue
            assert est.gold[p, j] == pytest.approx(brute_force(x, y, n), abs=1e-12)
            assert est.proxy[p, j] == pytest.approx(brute_force(x, x, n), abs=1e-12)
        start += size
    assert est.pool_sizes.tolist() == sizes
    assert est.groups == [f"prompt{p}" for p in range(len(sizes))]


def test_prompts_need_not_be_contiguous_in_the_input():
    proxy = [3.0, 1.0, 2.0, 0.0]
    gold = [1.0, 0.0, 1.0, 0.0]
    est = best_of_n(proxy, gold, ["a", "b", "a", "b"], [2])
    assert est.gold[:, 0].tolist() == [1.0, 0.0]


def test_weights_are_exact_binomial_ratios_even_for_large_pools():
    pool, n = 5000, 100
    w = bon_weights(pool, n)
    assert w.sum() == pytest.approx(1.0, abs=1e-10)
    for k in (100, 101, 2500, 4999, 5000):
        exact = Fraction(math.comb(k - 1, n - 1), math.comb(pool, n))
        assert w[k - 1] == pytest.approx(float(exact), rel=1e-9)
    assert np.all(w[: n - 1] == 0)
    with pytest.raises(ValueError, match="pool size"):
        bon_weights(3, 4)


def test_analytic_kl_and_its_inverse():
    n = np.array([1, 2, 11, 16, 1000])
    kl = bon_kl(n)
    assert kl.tolist() == pytest.approx((np.log(n) - (n - 1) / n).tolist())
    for value, expected in zip(kl, n, strict=True):
        assert bon_n_for_kl(float(value)) == pytest.approx(expected, rel=1e-9)
    assert default_ns(64) == [1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64]


def test_gaussian_noise_gives_a_gold_curve_that_keeps_rising():
    pool = synthetic_pool(prompts=400, pool_size=128, noise="gaussian", seed=1)
    result = overoptimization(pool.proxy, pool.gold, pool.groups, n_resamples=300)
    gold = [p.gold.estimate for p in result.points]
    assert all(b > a for a, b in itertools.pairwise(gold))
    assert result.peak.at_edge and not result.peak.overoptimized
    bon = result.fits["gold"]["bon"]
    assert bon.fit.peak_n is None or not bon.fit.peak_in_range
    assert bon.fit.r2 > 0.99


def test_student_t_noise_gives_a_peaked_curve_and_the_peak_is_found():
    pool = synthetic_pool(prompts=400, pool_size=128, noise="student_t", dof=2.0, seed=2)
    result = overoptimization(pool.proxy, pool.gold, pool.groups, n_resamples=300)
    assert 8 <= result.peak.n <= 16
    assert result.peak.overoptimized and not result.peak.at_edge
    assert result.peak.decline.ci_low > 0
    low, high = result.peak.n_ci
    assert low <= result.peak.n <= high
    # the proxy keeps rising: optimizing it harder always looks like progress
    proxy = [p.proxy.estimate for p in result.points]
    assert all(b > a for a, b in itertools.pairwise(proxy))
    bon = result.fits["gold"]["bon"]
    assert bon.fit.beta > 0 and bon.fit.peak_in_range
    assert 5 <= bon.fit.peak_n <= 20
    assert bon.peak_share > 0.95


def test_points_report_the_prompts_they_leave_out():
    rng = np.random.default_rng(3)
    sizes = [4] * 5 + [16] * 15
    groups = [g for g, size in enumerate(sizes) for _ in range(size)]
    proxy = rng.normal(size=len(groups))
    result = overoptimization(
        proxy, proxy + rng.normal(size=len(groups)), groups, ns=[2, 8, 16], n_resamples=100
    )
    by_n = {p.n: p for p in result.points}
    assert [p.n for p in result.points] == [1, 2, 8, 16]  # n = 1 is always measured
    assert (by_n[2].prompts, by_n[2].prompts_excluded) == (20, 0)
    assert (by_n[8].prompts, by_n[8].prompts_excluded) == (15, 5)
    assert any("n = 8: 5 of 20 prompts" in note for note in result.notes)
    doc = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert doc["schema"] == "truegrade.overopt/1"
    assert doc["points"][2]["prompts_excluded"] == 5
    with pytest.raises(ValueError, match="exceeds the largest pool"):
        overoptimization(proxy, proxy, groups, ns=[32])


def test_bad_inputs_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="finite"):
        best_of_n([1.0, math.inf], [0.0, 1.0], ["a", "a"], [1])
    with pytest.raises(ValueError, match="prompt ids"):
        best_of_n([1.0, 2.0], [0.0, 1.0], ["a"], [1])
    with pytest.raises(ValueError, match="proxy scores"):
        best_of_n([1.0, 2.0], [0.0], ["a", "a"], [1])
