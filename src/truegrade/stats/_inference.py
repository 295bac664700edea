"""Means, proportions and differences with honest intervals, and how big a sample must be.

Clustered formulas follow the usual cluster-robust (sandwich) estimator: residuals are summed
within each cluster before squaring, with the G/(G-1) small-sample factor, and intervals use a t
distribution with G-1 degrees of freedom. This is what statsmodels reports for an intercept-only
OLS with ``cov_type="cluster"`` (and Stata for ``mean, vce(cluster g)``). Without clusters
everything reduces to the textbook formulas.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.stats._bootstrap import cluster_bootstrap, cluster_totals
from truegrade.stats._estimate import (
    Estimate,
    as_float_array,
    cluster_codes,
    normal_ppf,
    normal_quantile,
    t_quantile,
    t_sf,
)

__all__ = [
    "PairedDifference",
    "bootstrap_mean",
    "clustered_se",
    "mean_ci",
    "minimum_detectable_effect",
    "paired_difference",
    "proportion_ci",
    "wilson_interval",
    "win_rate_ci",
]


def clustered_se(values: NDArray[np.float64], codes: NDArray[np.intp], n_clusters: int) -> float:
    """Cluster-robust standard error of the mean of ``values``.

    ``se^2 = G/(G-1) * sum_g (sum_{i in g} (x_i - mean))^2 / n^2``; NaN with fewer than two
    clusters. With one observation per cluster this is exactly ``s / sqrt(n)``.
    """
    n = values.size
    if n_clusters < 2:
        return math.nan
    residual_sums = np.bincount(codes, weights=values - values.mean(), minlength=n_clusters)
    variance = n_clusters / (n_clusters - 1) * float(residual_sums @ residual_sums) / (n * n)
    return math.sqrt(variance)


def mean_ci(
    values: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """Mean with a (cluster-robust when ``clusters`` is given) standard error and t interval.

    ``se`` is the cluster-robust standard error,
    ``se^2 = G/(G-1) * sum_g (sum_{i in g} (x_i - mean))^2 / n^2`` over ``G`` clusters (with one
    observation per cluster exactly ``s / sqrt(n)``); the interval is ``mean ± t_{G-1} * se``.

    Args:
        values: The observations (scores, 0/1 outcomes).
        clusters: One cluster id per value (the prompt, the source document), or None.
        confidence: Interval coverage.

    Examples:
        >>> e = mean_ci([1, 1, 1, 0, 0, 0], clusters=["a", "a", "a", "b", "b", "b"])
        >>> round(e.estimate, 2), round(e.se, 2), e.clusters
        (0.5, 0.5, 2)
    """
    x = as_float_array(values)
    codes, g = cluster_codes(clusters, x.size)
    if x.size == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    mean = float(x.mean())
    se = clustered_se(x, codes, g)
    if math.isnan(se):
        return Estimate(
            mean, se, math.nan, math.nan, x.size, g, "fewer than 2 clusters", confidence
        )
    half = t_quantile(confidence, g - 1) * se
    method = "t, cluster-robust SE (G-1 df)" if clusters is not None else "t, SE s/sqrt(n)"
    return Estimate(mean, se, mean - half, mean + half, x.size, g, method, confidence)


def bootstrap_mean(
    values: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Mean with a cluster-bootstrap percentile interval (resampling whole clusters).

    Each resample draws G clusters with replacement and takes ``sum(values) / count`` over the
    drawn clusters, so clusters of different sizes are weighted by their size, as in the mean.

    Examples:
        >>> e = bootstrap_mean([0.2, 0.4, 0.9, 0.7], clusters=[1, 1, 2, 2], n_resamples=500)
        >>> round(e.estimate, 2), e.clusters
        (0.55, 2)
    """
    x = as_float_array(values)
    codes, g = cluster_codes(clusters, x.size)
    if x.size == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    totals = cluster_totals(codes, g, np.column_stack([x, np.ones_like(x)]))
    boot = cluster_bootstrap(
        totals, lambda t: t[:, 0] / t[:, 1], n_resamples=n_resamples, seed=seed
    )
    return boot.estimate(0, n=x.size, confidence=confidence)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Estimate:
    """A proportion with its Wilson score interval.

    With ``p = k/n`` and ``z`` the normal quantile, the interval is
    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. Unlike ``p ± z SE`` it never leaves
    [0, 1] and stays honest at 0 of n or n of n (where the naive interval collapses to a point).

    Examples:
        >>> e = wilson_interval(0, 60)
        >>> e.estimate, round(e.ci_high, 4)
        (0.0, 0.0602)
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    return _wilson(successes / n if n else math.nan, float(n), n, n, confidence, "Wilson score")


def _wilson(
    p: float, n_eff: float, n: int, clusters: int, confidence: float, method: str
) -> Estimate:
    if n == 0 or n_eff <= 0:
        return Estimate.undefined("no data", n=n, clusters=clusters, confidence=confidence)
    z = normal_quantile(confidence)
    z2 = z * z
    denominator = 1 + z2 / n_eff
    centre = (p + z2 / (2 * n_eff)) / denominator
    half = z * math.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff * n_eff)) / denominator
    se = math.sqrt(p * (1 - p) / n_eff)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return Estimate(p, se, low, high, n, clusters, method, confidence)


def proportion_ci(
    outcomes: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """A rate (pass rate, false pass rate) with a Wilson interval, widened for clustering.

    With clusters, the Wilson interval uses the effective sample size ``n / deff``, where the
    design effect ``deff = se_clustered² / (p(1-p)/n)`` (never below 1). At ``p = 0`` or ``1``
    the design effect cannot be estimated from the data, so the effective size is the number of
    clusters (the conservative choice: every cluster could be one unit of evidence).

    Args:
        outcomes: 0/1 (or bool) per item.
        clusters: Cluster id per item, or None.
        confidence: Interval coverage.

    Examples:
        >>> e = proportion_ci([True] * 8 + [False] * 2)
        >>> e.estimate, round(e.ci_low, 3), round(e.ci_high, 3)
        (0.8, 0.49, 0.943)
    """
    x = as_float_array(outcomes, "outcomes")
    if np.any((x != 0) & (x != 1)):
        raise ValueError("outcomes must be 0/1 or booleans")
    return _rate_ci(x, clusters, confidence)


def win_rate_ci(
    outcomes: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """A rate whose outcomes may be partial (1 a win, 0.5 a tie, 0 a loss), with the interval
    of :func:`proportion_ci`.

    The Bernoulli variance ``p(1-p)`` bounds the variance of any outcome in [0, 1], so the
    Wilson interval stays valid (conservative where ties lower the variance) and, unlike a t
    interval, never leaves [0, 1] nor collapses to a point at 0 or 1.

    Args:
        outcomes: A value in [0, 1] per item.
        clusters: Cluster id per item, or None.
        confidence: Interval coverage.

    Examples:
        >>> e = win_rate_ci([1, 1, 0.5, 0])
        >>> e.estimate, round(e.ci_low, 3), round(e.ci_high, 3)
        (0.625, 0.219, 0.908)
    """
    x = as_float_array(outcomes, "outcomes")
    if np.any((x < 0) | (x > 1)):
        raise ValueError("outcomes must lie in [0, 1]")
    return _rate_ci(x, clusters, confidence)


def _rate_ci(
    x: NDArray[np.float64], clusters: Sequence[Hashable] | None, confidence: float
) -> Estimate:
    n = x.size
    codes, g = cluster_codes(clusters, n)
    if n == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    p = float(x.mean())
    if clusters is None or g == n:
        return _wilson(p, n, n, g, confidence, "Wilson score")
    if 0 < p < 1:
        se = clustered_se(x, codes, g)
        deff = max(1.0, se * se / (p * (1 - p) / n)) if not math.isnan(se) else float(n) / g
        method = f"Wilson score, effective n = n / design effect {deff:.2f}"
    else:
        deff = n / g
        method = "Wilson score, effective n = clusters (design effect unknown at 0 or 1)"
    return _wilson(p, n / deff, n, g, confidence, method)


@dataclass(frozen=True)
class PairedDifference(Estimate):
    """Mean difference ``a - b`` over the same items, with what a reader needs around it.

    Attributes:
        mean_a: Mean of ``a``.
        mean_b: Mean of ``b``.
        correlation: Pearson correlation of ``a`` and ``b`` over items (NaN if either is
            constant): the higher it is, the more pairing gains over comparing two means.
        p_value: Two-sided p-value of "no difference" (t with G-1 df).
    """

    mean_a: float = math.nan
    mean_b: float = math.nan
    correlation: float = math.nan
    p_value: float = math.nan


def paired_difference(
    a: ArrayLike,
    b: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> PairedDifference:
    """Mean of ``a - b`` for two graders (or models) scored on the same items.

    Pairing removes the item-to-item variance both share: ``var(a - b) = var(a) + var(b) -
    2 cov(a, b)``, so a difference that two unpaired means cannot resolve often is resolved here.
    The SE is that of :func:`mean_ci` applied to the per-item differences (cluster-robust with
    ``clusters``).

    Examples:
        >>> d = paired_difference([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0])
        >>> round(d.estimate, 3), round(d.mean_a, 3), round(d.mean_b, 3)
        (0.333, 0.667, 0.333)
    """
    xa, xb = as_float_array(a, "a"), as_float_array(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"paired data must have equal lengths, got {xa.size} and {xb.size}")
    diff = mean_ci(xa - xb, clusters, confidence=confidence)
    corr = math.nan
    if xa.size >= 2 and np.std(xa) > 0 and np.std(xb) > 0:
        corr = float(np.corrcoef(xa, xb)[0, 1])
    p_value = math.nan
    if diff.se > 0 and diff.clusters >= 2:
        t = diff.estimate / diff.se
        p_value = 2 * t_sf(abs(t), diff.clusters - 1)
    elif diff.se == 0:
        p_value = 1.0 if diff.estimate == 0 else 0.0
    return PairedDifference(
        estimate=diff.estimate,
        se=diff.se,
        ci_low=diff.ci_low,
        ci_high=diff.ci_high,
        n=diff.n,
        clusters=diff.clusters,
        method="paired, " + diff.method,
        confidence=confidence,
        mean_a=float(xa.mean()) if xa.size else math.nan,
        mean_b=float(xb.mean()) if xb.size else math.nan,
        correlation=corr,
        p_value=p_value,
    )


def minimum_detectable_effect(
    n: int,
    *,
    sd: float | None = None,
    p: float | None = None,
    sd_b: float | None = None,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
) -> float:
    """The smallest true difference between two means that a study of ``n`` items detects.

    ``MDE = (z_{1-alpha/2} + z_{power}) * sqrt(deff * (sd_a² + sd_b² - 2 rho sd_a sd_b) / n)``

    ``n`` is the number of items per arm. With ``correlation = 0`` the arms are independent (two
    samples of ``n``); with the same items scored twice (paired), pass their correlation.
    ``design_effect`` inflates the variance for clustered items (1 + (m - 1) * ICC for clusters
    of size m).

    Args:
        n: Items per arm.
        sd: Standard deviation of a score (of arm a; arm b too unless ``sd_b``).
        p: For 0/1 outcomes instead of ``sd``: the expected rate, ``sd = sqrt(p(1-p))``.
        sd_b: Standard deviation of arm b, when it differs.
        correlation: Correlation of paired scores (0 for independent samples).
        alpha: Two-sided significance level.
        power: Probability of detecting a true difference of this size.
        design_effect: Variance inflation from clustering.

    Examples:
        The published example (n = 500, p = 0.5): 8.86 points unpaired, 6.26 at correlation 0.5.

        >>> round(100 * minimum_detectable_effect(500, p=0.5), 2)
        8.86
        >>> round(100 * minimum_detectable_effect(500, p=0.5, correlation=0.5), 2)
        6.26
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    if (sd is None) == (p is None):
        raise ValueError("give exactly one of sd (a score's spread) or p (a rate)")
    if p is not None:
        if not 0 <= p <= 1:
            raise ValueError(f"p must be a rate in [0, 1], got {p}")
        sd = math.sqrt(p * (1 - p))
    assert sd is not None
    other = sd if sd_b is None else sd_b
    if not -1 <= correlation <= 1:
        raise ValueError(f"correlation must be in [-1, 1], got {correlation}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be strictly between 0 and 1")
    variance = sd * sd + other * other - 2 * correlation * sd * other
    z = normal_ppf(1 - alpha / 2) + normal_ppf(power)
    return z * math.sqrt(design_effect * max(variance, 0.0) / n)
