"""Fleiss' kappa and Krippendorff's alpha equal their reference implementations
(statsmodels and the ``krippendorff`` package), with missing ratings and with clusters."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from truegrade.stats import fleiss_kappa, krippendorff_alpha


@pytest.mark.parametrize("seed", range(8))
def test_fleiss_kappa_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 2 + seed % 3, size=(40, 3 + seed % 3))
    ours = fleiss_kappa(ratings.tolist(), n_resamples=200)
    table, _ = aggregate_raters(ratings)
    assert ours.estimate == pytest.approx(statsmodels_fleiss(table), abs=1e-12)
    assert ours.ci_low <= ours.estimate <= ours.ci_high


@pytest.mark.parametrize("seed", range(8))
def test_krippendorff_alpha_equals_the_package_with_missing_ratings(seed):
    rng = np.random.default_rng(100 + seed)
    values = rng.integers(0, 3, size=(30, 4)).astype(float)
    values[rng.random(values.shape) < 0.35] = np.nan
    ratings = [[None if math.isnan(v) else int(v) for v in row] for row in values]
    ours = krippendorff_alpha(ratings, n_resamples=200)
    theirs = krippendorff.alpha(reliability_data=values.T, level_of_measurement="nominal")
    assert ours.estimate == pytest.approx(theirs, abs=1e-12)


def test_labels_of_any_kind_and_units_with_one_rating():
    words = [
        ["met", "met", None],
        ["not", "met", "met"],
        ["not", None, None],
        ["met", "met", "met"],
    ]
    codes = [[None if w is None else int(w == "met") for w in row] for row in words]
    assert krippendorff_alpha(words).estimate == pytest.approx(krippendorff_alpha(codes).estimate)
    # the unit rated once counts for nothing
    assert krippendorff_alpha(words).n == 3 and fleiss_kappa(words).n == 3


def test_clusters_widen_the_interval_not_the_estimate():
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2, size=(20, 1))
    ratings = np.repeat(base, 3, axis=1)
    ratings[rng.random(ratings.shape) < 0.2] ^= 1
    rows = np.repeat(ratings, 3, axis=0).tolist()  # each unit three times: one prompt's rows
    clusters = [k // 3 for k in range(len(rows))]
    flat = fleiss_kappa(rows, n_resamples=400)
    clustered = fleiss_kappa(rows, clusters, n_resamples=400)
    assert clustered.estimate == pytest.approx(flat.estimate)
    assert clustered.clusters == 20
    assert clustered.ci_high - clustered.ci_low > flat.ci_high - flat.ci_low


def test_no_unit_with_two_ratings_or_one_category_is_undefined_not_zero():
    assert math.isnan(fleiss_kappa([[1, None], [0, None]]).estimate)
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]).estimate)
    assert "one same category" in fleiss_kappa([[1, 1], [1, 1]]).method
