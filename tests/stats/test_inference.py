"""Means, rates, paired differences and MDE, checked against statsmodels, scipy and published
worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

from truegrade.stats import (
    bootstrap_mean,
    mean_ci,
    minimum_detectable_effect,
    paired_difference,
    proportion_ci,
    wilson_interval,
    win_rate_ci,
)
from truegrade.stats._mean import mean_se


def clustered_data(seed: int = 0, clusters: int = 40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, size=clusters)  # unequal cluster sizes
    groups = np.repeat(np.arange(clusters), sizes)
    effect = rng.normal(0, 1, clusters)[groups]  # shared per-cluster component
    values = 2.0 + effect + rng.normal(0, 0.5, groups.size)
    return values, groups


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_mean_matches_statsmodels_cluster_robust_ols(seed):
    values, groups = clustered_data(seed)
    fit = sm.OLS(values, np.ones_like(values)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    ours = mean_ci(values, [f"g{g}" for g in groups])
    assert ours.estimate == pytest.approx(fit.params[0], rel=1e-12)
    assert ours.se == pytest.approx(fit.bse[0], rel=1e-10)
    low, high = fit.conf_int()[0]
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-10)
    assert ours.clusters == len(set(groups)) and ours.n == values.size
    # the legacy helper gives the same standard error
    assert mean_se(list(values), list(groups)).se == pytest.approx(fit.bse[0], rel=1e-10)


def test_unclustered_mean_is_scipys_t_interval():
    values = np.random.default_rng(3).gamma(2.0, size=57)
    ours = mean_ci(values, confidence=0.9)
    assert ours.se == pytest.approx(sps.sem(values), rel=1e-12)
    low, high = sps.t.interval(0.9, values.size - 1, loc=values.mean(), scale=sps.sem(values))
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-12)
    assert ours.clusters == ours.n == 57


def test_clustered_error_exceeds_naive_when_clusters_share_outcomes():
    values, groups = clustered_data(4)
    assert mean_ci(values, list(groups)).se > 1.5 * mean_ci(values).se


def test_mean_rejects_non_finite_and_mismatched_clusters():
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, math.nan])
    with pytest.raises(ValueError, match="cluster ids"):
        mean_ci([1.0, 2.0], ["a"])
    assert math.isnan(mean_ci([]).estimate)
    assert math.isnan(mean_ci([1.0, 2.0], ["a", "a"]).se)  # one cluster: no error estimate


def test_cluster_bootstrap_of_the_mean_agrees_with_the_sandwich_and_is_reproducible():
    values, groups = clustered_data(5, clusters=200)
    boot = bootstrap_mean(values, list(groups), n_resamples=4000, seed=11)
    sandwich = mean_ci(values, list(groups))
    assert boot.estimate == pytest.approx(values.mean())
    assert boot.se == pytest.approx(sandwich.se, rel=0.1)
    assert boot.ci_low < values.mean() < boot.ci_high
    assert (boot.ci_high - boot.ci_low) == pytest.approx(
        sandwich.ci_high - sandwich.ci_low, rel=0.15
    )
    # seeded: the same seed repeats exactly, another seed differs
    again = bootstrap_mean(values, list(groups), n_resamples=4000, seed=11)
    assert again == boot
    assert bootstrap_mean(values, list(groups), n_resamples=4000, seed=12) != boot
    # resampling samples instead of clusters would be far narrower
    naive = bootstrap_mean(values, None, n_resamples=4000, seed=11)
    assert naive.se < 0.6 * boot.se


@pytest.mark.parametrize(("k", "n"), [(0, 60), (1, 10), (13, 40), (50, 50), (999, 1000)])
def test_wilson_matches_statsmodels(k, n):
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    ours = wilson_interval(k, n)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert ours.estimate == k / n


def test_proportion_ci_widens_for_clusters_and_stays_conservative_at_zero():
    rng = np.random.default_rng(6)
    groups = np.repeat(np.arange(30), 10)
    outcomes = (rng.random(30) < 0.3)[groups]  # every cluster all-pass or all-fail
    flat = proportion_ci(outcomes)
    clustered = proportion_ci(outcomes, list(groups))
    assert flat.method == "Wilson score"
    low, high = proportion_confint(outcomes.sum(), outcomes.size, method="wilson")
    assert (flat.ci_low, flat.ci_high) == pytest.approx((low, high))
    # perfectly correlated clusters: the effective sample is the 30 clusters (design effect ~10)
    assert "design effect" in clustered.method
    assert clustered.ci_high - clustered.ci_low > 2.5 * (flat.ci_high - flat.ci_low)
    zero = proportion_ci(np.zeros(300), list(groups))
    assert zero.estimate == 0.0
    assert zero.ci_high == pytest.approx(proportion_confint(0, 30, method="wilson")[1])
    with pytest.raises(ValueError, match="0/1"):
        proportion_ci([0.5, 1.0])


def test_paired_difference_is_scipys_paired_t_test():
    rng = np.random.default_rng(7)
    skill = rng.normal(size=120)
    a = skill + rng.normal(0, 0.5, 120) + 0.15
    b = skill + rng.normal(0, 0.5, 120)
    ours = paired_difference(a, b)
    reference = sps.ttest_rel(a, b)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert ours.estimate == pytest.approx(np.mean(a - b))
    assert ours.correlation == pytest.approx(np.corrcoef(a, b)[0, 1])
    low, high = reference.confidence_interval(0.95)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high))
    # pairing pays: the paired SE is well below the SE of a difference of independent means
    unpaired = math.hypot(mean_ci(a).se, mean_ci(b).se)
    assert ours.se < 0.6 * unpaired
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference([1.0], [1.0, 2.0])


def test_minimum_detectable_effect_published_examples():
    # n = 500, p = 0.5: 8.86 points unpaired, 6.26 at correlation 0.5
    assert round(100 * minimum_detectable_effect(500, p=0.5), 2) == 8.86
    assert round(100 * minimum_detectable_effect(500, p=0.5, correlation=0.5), 2) == 6.26


def test_minimum_detectable_effect_agrees_with_statsmodels_power():
    for n in (50, 500, 3000):
        effect_size = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
        # statsmodels also counts the (negligible) rejections in the wrong tail: ~3e-6 apart
        assert minimum_detectable_effect(n, sd=2.0) == pytest.approx(2.0 * effect_size, rel=1e-5)
    # a design effect of 4 doubles the MDE
    assert minimum_detectable_effect(500, p=0.3, design_effect=4.0) == pytest.approx(
        2 * minimum_detectable_effect(500, p=0.3)
    )
    with pytest.raises(ValueError, match="exactly one"):
        minimum_detectable_effect(100)


def test_win_rate_ci_is_proportion_ci_on_wins_and_losses_and_takes_ties():
    rng = np.random.default_rng(8)
    groups = list(np.repeat(np.arange(20), 5))
    wins = (rng.random(100) < 0.6).astype(float)
    for clusters in (None, groups):
        assert win_rate_ci(wins, clusters) == proportion_ci(wins, clusters)
    tied = np.where(rng.random(100) < 0.2, 0.5, wins)
    e = win_rate_ci(tied, groups)
    assert e.estimate == pytest.approx(tied.mean())
    assert 0 <= e.ci_low < e.estimate < e.ci_high <= 1
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        win_rate_ci([1.5, 0.0])
