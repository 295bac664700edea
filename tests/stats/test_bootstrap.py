from __future__ import annotations

import numpy as np
import pytest

from truegrade.stats import cluster_bootstrap, cluster_totals
from truegrade.stats._bootstrap import resample_counts


def test_resamples_draw_whole_clusters_reproducibly():
    chunks = list(resample_counts(7, 23, seed=3))
    counts = np.vstack(chunks)
    assert counts.shape == (23, 7)
    assert np.all(counts.sum(axis=1) == 7)
    again = np.vstack(list(resample_counts(7, 23, seed=3)))
    assert np.array_equal(counts, again)
    assert not np.array_equal(counts, np.vstack(list(resample_counts(7, 23, seed=4))))
    # each cluster is drawn once per resample on average
    many = np.vstack(list(resample_counts(5, 4000, seed=0)))
    assert many.mean(axis=0) == pytest.approx(np.ones(5), abs=0.05)


def test_chunking_does_not_change_the_draws(monkeypatch):
    whole = np.vstack(list(resample_counts(9, 11, seed=5)))
    monkeypatch.setattr("truegrade.stats._bootstrap._MAX_CELLS", 27)  # chunks of 3 rows
    chunks = list(resample_counts(9, 11, seed=5))
    assert len(chunks) == 4
    assert np.array_equal(np.vstack(chunks), whole)


def test_cluster_bootstrap_of_several_statistics_at_once():
    codes = np.array([0, 0, 1, 2, 2, 2])
    values = np.array([1.0, 3.0, 2.0, 0.0, 1.0, 2.0])
    totals = cluster_totals(codes, 3, np.column_stack([values, np.ones(6)]))
    assert totals.tolist() == [[4.0, 2.0], [2.0, 1.0], [3.0, 3.0]]
    boot = cluster_bootstrap(
        totals, lambda t: np.column_stack([t[:, 0] / t[:, 1], t[:, 1]]), n_resamples=300
    )
    assert boot.point.tolist() == [1.5, 6.0]
    assert boot.replicates.shape == (300, 2)
    low, high = boot.interval(0.9)
    assert low[0] <= 1.5 <= high[0]
    # every resample mean is a mix of the three cluster means
    assert np.all((boot.replicates[:, 0] >= 1.0) & (boot.replicates[:, 0] <= 2.0))


def test_undefined_replicates_are_left_out_not_counted_as_zero():
    totals = np.array([[1.0, 1.0], [0.0, 0.0]])  # the second cluster has no items
    boot = cluster_bootstrap(totals, lambda t: t[:, 0] / t[:, 1], n_resamples=200)
    assert np.isnan(boot.replicates).any()
    assert boot.se()[0] == pytest.approx(0.0)
    est = boot.estimate(0, n=1)
    assert est.estimate == 1.0 and est.ci_low == 1.0
