"""How well a grader agrees with labels, and raters with each other: Cohen's kappa, macro-F1,
AUROC, calibration error; Fleiss' kappa and Krippendorff's alpha for several raters.

These meta-evaluate a grader (an LLM judge against physicians, a cheap checker against a strict
one). Point estimates equal scikit-learn's; intervals come from the shared cluster bootstrap when
items are clustered (several items per prompt or per rubric), or from the standard analytic
variance where one exists and items are independent (kappa: Fleiss, Cohen and Everitt 1969;
AUROC: DeLong et al. 1988).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.stats._bootstrap import (
    BootstrapResult,
    cluster_bootstrap,
    cluster_totals,
    resample_counts,
)
from truegrade.stats._estimate import Estimate, as_float_array, cluster_codes, normal_quantile

__all__ = [
    "auroc",
    "calibration_error",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "macro_f1",
]


def _label_codes(
    a: Sequence[Any], b: Sequence[Any]
) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Integer codes over the union of both label sets (sorted when the labels sort)."""
    if len(a) != len(b):
        raise ValueError(f"paired labels must have equal lengths, got {len(a)} and {len(b)}")
    labels = set(a) | set(b)
    try:
        ordered = sorted(labels)
    except TypeError:
        ordered = sorted(labels, key=repr)
    index = {label: i for i, label in enumerate(ordered)}
    codes_a = np.fromiter((index[x] for x in a), dtype=np.intp, count=len(a))
    codes_b = np.fromiter((index[x] for x in b), dtype=np.intp, count=len(b))
    return codes_a, codes_b, len(ordered)


def _confusion_totals(
    a: Sequence[Any], b: Sequence[Any], clusters: Sequence[Hashable] | None
) -> tuple[NDArray[np.float64], int, int]:
    """Per-cluster confusion counts, shape ``(G, C*C)`` (cell ``i*C + j``: a says i, b says j)."""
    codes_a, codes_b, c = _label_codes(a, b)
    cluster, g = cluster_codes(clusters, len(a))
    flat = cluster * (c * c) + codes_a * c + codes_b
    totals = np.bincount(flat, minlength=g * c * c).reshape(g, c * c).astype(np.float64)
    return totals, g, c


def _kappa_from_totals(totals: NDArray[np.float64], c: int) -> NDArray[np.float64]:
    table = totals.reshape(-1, c, c)
    n = table.sum(axis=(1, 2))
    observed = np.trace(table, axis1=1, axis2=2) / n
    expected = np.einsum("bi,bi->b", table.sum(axis=2), table.sum(axis=1)) / (n * n)
    out: NDArray[np.float64] = (observed - expected) / (1 - expected)
    return out


def cohen_kappa(
    a: Sequence[Any],
    b: Sequence[Any],
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Cohen's kappa: agreement of two raters beyond what their label rates give by chance.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of items both label alike and
    ``p_e = sum_k p_a(k) p_b(k)``. Undefined (NaN) when both raters always give one same label.
    Independent items get the large-sample SE of Fleiss, Cohen and Everitt (1969) and a normal
    interval; clustered items a cluster-bootstrap percentile interval.

    Examples:
        >>> e = cohen_kappa([1, 1, 0, 0, 1, 0], [1, 1, 0, 1, 1, 0])
        >>> round(e.estimate, 4)
        0.6667
    """
    totals, g, c = _confusion_totals(a, b, clusters)
    n = len(a)
    if n == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    if clusters is not None:
        boot = cluster_bootstrap(
            totals, lambda t: _kappa_from_totals(t, c), n_resamples=n_resamples, seed=seed
        )
        clustered = boot.estimate(0, n=n, confidence=confidence)
        if clustered.ci_low != clustered.ci_high or n < 2:
            return clustered
        # every cluster holds the same mix of agreements, so no resample of clusters differs and
        # the interval collapses to a point; that is no evidence of certainty: say so, and give
        # the items' own large-sample interval instead
        items = cohen_kappa(a, b, confidence=confidence)
        if items.estimate != items.estimate:
            return clustered
        return replace(
            items,
            clusters=g,
            method="clusters all alike (a cluster bootstrap cannot vary): " + items.method,
        )
    p = totals.sum(axis=0).reshape(c, c) / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_o, p_e = float(np.trace(p)), float(rows @ cols)
    if p_e >= 1:
        return Estimate.undefined(
            "undefined: one label only, from both raters", n=n, clusters=g, confidence=confidence
        )
    kappa = (p_o - p_e) / (1 - p_e)
    diag = np.diag(p)
    term1 = float(np.sum(diag * (1 - (rows + cols) * (1 - kappa)) ** 2))
    off = p * (cols[:, None] + rows[None, :]) ** 2
    term2 = (1 - kappa) ** 2 * float(off.sum() - np.trace(off))
    term3 = (kappa - p_e * (1 - kappa)) ** 2
    se = math.sqrt(max(term1 + term2 - term3, 0.0) / (n * (1 - p_e) ** 2))
    half = normal_quantile(confidence) * se
    method = "normal, Fleiss-Cohen-Everitt large-sample SE"
    return Estimate(kappa, se, kappa - half, kappa + half, n, g, method, confidence)


def _macro_f1_from_totals(totals: NDArray[np.float64], c: int) -> NDArray[np.float64]:
    table = totals.reshape(-1, c, c)
    hits = np.diagonal(table, axis1=1, axis2=2)
    denominator = table.sum(axis=2) + table.sum(axis=1)
    f1 = np.where(denominator > 0, 2 * hits / np.where(denominator > 0, denominator, 1), np.nan)
    present = np.isfinite(f1).sum(axis=1)
    out: NDArray[np.float64] = np.where(
        present > 0, np.nansum(f1, axis=1) / np.maximum(present, 1), np.nan
    )
    return out


def macro_f1(
    truth: Sequence[Any],
    predicted: Sequence[Any],
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Macro-F1: the unweighted mean over classes of ``F1_k = 2 TP_k / (2 TP_k + FP_k + FN_k)``.

    For binary verdicts this is HealthBench's meta-evaluation score: the mean of the F1 of the
    positive class ("criterion met") and of the negative class, so a judge cannot score well by
    saying "met" to everything. Classes are those that occur in either list (as scikit-learn's
    ``f1_score(average="macro")``). The interval is a (cluster) bootstrap.

    Examples:
        >>> round(macro_f1([True, True, False, False], [True, False, False, False]).estimate, 4)
        0.7333
    """
    totals, _, c = _confusion_totals(truth, predicted, clusters)
    n = len(truth)
    if n == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    boot = cluster_bootstrap(
        totals, lambda t: _macro_f1_from_totals(t, c), n_resamples=n_resamples, seed=seed
    )
    return boot.estimate(0, n=n, confidence=confidence)


def _binary(labels: ArrayLike, name: str) -> NDArray[np.bool_]:
    y = as_float_array(labels, name)
    if np.any((y != 0) & (y != 1)):
        raise ValueError(f"{name} must be 0/1 or booleans")
    return y.astype(bool)


def auroc(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Area under the ROC curve: the chance a random positive outranks a random negative.

    ``AUC = (R_+ - n_+(n_+ + 1)/2) / (n_+ n_-)`` with ``R_+`` the sum of the positives' mid-ranks
    (ties count one half). Independent items get DeLong's variance,
    ``var = s²(V10)/n_+ + s²(V01)/n_-`` over the placement values, and a normal interval clipped
    to [0, 1]; clustered items a cluster-bootstrap percentile interval in which each resample
    reweights the items by how often their cluster was drawn.

    Examples:
        >>> round(auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]).estimate, 2)
        0.75
    """
    s = as_float_array(scores, "scores")
    y = _binary(labels, "labels")
    if s.size != y.size:
        raise ValueError(f"{s.size} scores for {y.size} labels")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    codes, g = cluster_codes(clusters, s.size)
    if n_pos == 0 or n_neg == 0:
        return Estimate.undefined("needs both classes", n=s.size, clusters=g, confidence=confidence)
    from scipy.stats import rankdata  # imported on use: scipy.stats is slow to import

    ranks = rankdata(s)
    auc = float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    if clusters is None:
        # DeLong placements from mid-ranks: a positive's share of negatives below it, a
        # negative's share of positives above it
        v10 = (ranks[y] - rankdata(s[y])) / n_neg
        v01 = 1 - (ranks[~y] - rankdata(s[~y])) / n_pos
        var = 0.0
        if n_pos > 1:
            var += float(np.var(v10, ddof=1)) / n_pos
        if n_neg > 1:
            var += float(np.var(v01, ddof=1)) / n_neg
        se = math.sqrt(var)
        half = normal_quantile(confidence) * se
        return Estimate(
            auc,
            se,
            max(0.0, auc - half),
            min(1.0, auc + half),
            s.size,
            g,
            "normal, DeLong SE",
            confidence,
        )
    replicates = np.concatenate(
        [_weighted_auc(s, y, counts[:, codes]) for counts in resample_counts(g, n_resamples, seed)]
    )
    boot = BootstrapResult(np.array([auc]), replicates[:, None], g, seed)
    return boot.estimate(0, n=s.size, confidence=confidence)


def _weighted_auc(
    scores: NDArray[np.float64], positive: NDArray[np.bool_], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """AUC for many weightings of the same items at once: ``weights`` has shape ``(b, n)``.

    Items are grouped by distinct score; for each group, positives beat the negative weight
    strictly below it and tie half of the negative weight within it.
    """
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    w = weights[:, order]
    pos = np.add.reduceat(w * positive[order], starts, axis=1)
    neg = np.add.reduceat(w * ~positive[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    wins = np.sum(pos * (below + 0.5 * neg), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: NDArray[np.float64] = wins / (pos.sum(axis=1) * neg.sum(axis=1))
    return out


def _ece_from_totals(totals: NDArray[np.float64], bins: int) -> NDArray[np.float64]:
    t = totals.reshape(-1, 3, bins)
    count, prob, hit = t[:, 0], t[:, 1], t[:, 2]
    gap = np.abs(hit - prob)  # |sum y - sum p| per bin = count * |mean y - mean p|
    out: NDArray[np.float64] = gap.sum(axis=1) / count.sum(axis=1)
    return out


def calibration_error(
    probabilities: ArrayLike,
    outcomes: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    n_bins: int = 10,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Expected calibration error: how far stated confidence is from observed accuracy.

    ``ECE = sum_b (n_b / n) |mean(y in b) - mean(p in b)|`` over ``n_bins`` equal-width bins of
    [0, 1] (bin edges as scikit-learn's ``calibration_curve(strategy="uniform")``: a value on an
    inner edge belongs to the lower bin). 0 is perfect. ECE is biased upward on small samples
    (noise never cancels inside an absolute value), so compare graders at equal n. The interval is
    a (cluster) bootstrap.

    Examples:
        >>> round(calibration_error([0.9, 0.9, 0.2, 0.2], [1, 0, 0, 0]).estimate, 3)
        0.3
    """
    p = as_float_array(probabilities, "probabilities")
    y = _binary(outcomes, "outcomes").astype(np.float64)
    if p.size != y.size:
        raise ValueError(f"{p.size} probabilities for {y.size} outcomes")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    if n_bins < 1:
        raise ValueError("n_bins must be >= 1")
    if p.size == 0:
        return Estimate.undefined("no data", n=0, clusters=0, confidence=confidence)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bin_of = np.searchsorted(edges[1:-1], p)
    columns = np.zeros((p.size, 3 * n_bins))
    rows = np.arange(p.size)
    columns[rows, bin_of] = 1.0
    columns[rows, n_bins + bin_of] = p
    columns[rows, 2 * n_bins + bin_of] = y
    codes, g = cluster_codes(clusters, p.size)
    totals = cluster_totals(codes, g, columns)
    boot = cluster_bootstrap(
        totals, lambda t: _ece_from_totals(t, n_bins), n_resamples=n_resamples, seed=seed
    )
    return boot.estimate(0, n=p.size, confidence=confidence, what=f"{n_bins} equal-width bins")


def _rating_table(
    ratings: Sequence[Sequence[Any]],
) -> tuple[NDArray[np.float64], list[Any]]:
    """Units x categories counts from a units x raters matrix (None or NaN: not rated)."""
    values: set[Any] = set()
    rows: list[list[Any]] = []
    for unit in ratings:
        given = [v for v in unit if not _missing(v)]
        rows.append(given)
        values.update(given)
    try:
        categories = sorted(values)
    except TypeError:
        categories = sorted(values, key=repr)
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(rows), len(categories)), dtype=np.float64)
    for u, given in enumerate(rows):
        for v in given:
            table[u, index[v]] += 1
    return table, categories


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _fleiss_totals(table: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per unit: ``[P_i, 1, n_i1 ... n_iC, n_i]`` (units with fewer than two ratings: zeros)."""
    n = table.sum(axis=1)
    rated = n >= 2
    agree = np.zeros(len(table))
    agree[rated] = (table[rated] * (table[rated] - 1)).sum(axis=1) / (n[rated] * (n[rated] - 1))
    out = np.zeros((len(table), table.shape[1] + 3))
    out[rated, 0] = agree[rated]
    out[rated, 1] = 1
    out[rated, 2:-1] = table[rated]
    out[rated, -1] = n[rated]
    return out


def _fleiss_from_totals(totals: NDArray[np.float64]) -> NDArray[np.float64]:
    t = np.atleast_2d(totals)
    observed = t[:, 0] / t[:, 1]
    shares = t[:, 2:-1] / t[:, -1:]
    expected = (shares**2).sum(axis=1)
    out: NDArray[np.float64] = (observed - expected) / (1 - expected)
    return out


def fleiss_kappa(
    ratings: Sequence[Sequence[Any]],
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Fleiss' kappa: agreement of several raters per unit beyond chance.

    ``ratings`` is a units x raters matrix (``None`` where a rater did not rate the unit);
    units with fewer than two ratings are left out. Each unit's agreement is the share of its
    rater pairs that agree, ``P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1))``; chance is
    ``sum_j p_j^2`` over the pooled category shares. With the same number of raters on every
    unit this is Fleiss (1971), as ``statsmodels.stats.inter_rater.fleiss_kappa`` computes it;
    with varying numbers, each unit's agreement over its own pairs. The interval is a bootstrap
    over units (over ``clusters`` when given: several units of one prompt are not independent).

    Examples:
        >>> round(fleiss_kappa([[1, 1, 1], [0, 0, 1], [0, 0, 0], [1, 0, 1]]).estimate, 4)
        0.3333
    """
    return _among_raters(
        ratings,
        clusters,
        _fleiss_totals,
        lambda t, c: _fleiss_from_totals(t),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _coincidences(table: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per unit, its coincidence matrix flattened (``C*C``): ``n_uc (n_uk - [c == k]) / (m_u -
    1)``, zeros for units with fewer than two ratings (they hold no pairable value)."""
    m = table.sum(axis=1)
    c = table.shape[1]
    out = np.zeros((len(table), c * c))
    rated = m >= 2
    pairs = table[rated, :, None] * table[rated, None, :]
    pairs -= np.eye(c)[None] * table[rated, :, None]
    out[rated] = (pairs / (m[rated] - 1)[:, None, None]).reshape(-1, c * c)
    return out


def _alpha_from_totals(totals: NDArray[np.float64], c: int) -> NDArray[np.float64]:
    o = np.atleast_2d(totals).reshape(-1, c, c)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    observed = o.sum(axis=(1, 2)) - np.trace(o, axis1=1, axis2=2)
    expected = (n * n - (n_c * n_c).sum(axis=1)) / (n - 1)
    out: NDArray[np.float64] = 1 - observed / expected
    return out


def krippendorff_alpha(
    ratings: Sequence[Sequence[Any]],
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Krippendorff's alpha for nominal labels, with missing ratings.

    ``ratings`` is a units x raters matrix (``None`` where a rater did not rate the unit).
    ``alpha = 1 - D_o / D_e`` from the coincidence matrix of the values paired within units
    (Krippendorff 2011, nominal metric): units with one rating carry no pair and count for
    nothing. Equal to the ``krippendorff`` package's ``alpha(..., level_of_measurement=
    "nominal")``. The interval is a bootstrap over units (over ``clusters`` when given).

    Examples:
        >>> round(krippendorff_alpha([[1, 1, None], [0, 0, 1], [0, None, 0]]).estimate, 4)
        0.5
    """
    return _among_raters(
        ratings,
        clusters,
        _coincidences,
        _alpha_from_totals,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _among_raters(
    ratings: Sequence[Sequence[Any]],
    clusters: Sequence[Hashable] | None,
    per_unit: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    statistic: Callable[[NDArray[np.float64], int], NDArray[np.float64]],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> Estimate:
    """An agreement statistic of several raters from per-unit totals, bootstrapped over units
    (or clusters): units with fewer than two ratings left out, one category only undefined."""
    table, categories = _rating_table(ratings)
    kept = table.sum(axis=1) >= 2
    n = int(kept.sum())
    if n == 0:
        return Estimate.undefined("no unit has two ratings", n=0, clusters=0, confidence=confidence)
    given = None if clusters is None else [k for k, ok in zip(clusters, kept, strict=True) if ok]
    codes, g = cluster_codes(given, n)
    totals = cluster_totals(codes, g, per_unit(table)[kept])
    c = len(categories)
    if c < 2:
        return Estimate.undefined(
            "undefined: every rating is one same category", n=n, clusters=g, confidence=confidence
        )
    boot = cluster_bootstrap(totals, lambda t: statistic(t, c), n_resamples=n_resamples, seed=seed)
    return boot.estimate(0, n=n, confidence=confidence)
