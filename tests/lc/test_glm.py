"""The soft-label logistic solver, against known answers and an independent implementation."""

from __future__ import annotations

import numpy as np
import pytest

from truegrade.lc._glm import fit_logistic, sigmoid


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(size=n), rng.normal(size=n), np.ones(n)])
    true = np.array([1.5, -0.7, 0.3])
    return x, sigmoid(x @ true), true


def test_soft_labels_that_are_exact_probabilities_give_back_the_true_coefficients():
    x, p, true = _data()
    fit = fit_logistic(x, p)
    assert fit.converged
    assert np.allclose(fit.coef, true, atol=1e-6)


def test_weights_count_like_repeated_rows():
    x, p, _ = _data(n=300, seed=1)
    rng = np.random.default_rng(2)
    y = (rng.random(300) < p).astype(float)
    w = rng.integers(1, 4, size=300).astype(float)
    weighted = fit_logistic(x, y, w).coef
    repeated = fit_logistic(np.repeat(x, w.astype(int), axis=0), np.repeat(y, w.astype(int))).coef
    assert np.allclose(weighted, repeated, atol=1e-7)


@pytest.mark.parametrize("c", [0.01, 0.3, 10.0])
def test_l1_matches_liblinear_on_soft_labels(c):
    # scikit-learn's liblinear solves the same objective (||b||_1 + C * weighted log-loss); soft
    # labels enter it as two weighted copies of each row, as AlpacaEval feeds them
    from sklearn.linear_model import LogisticRegression

    x, p, _ = _data(n=500, seed=3)
    ours = fit_logistic(x, p, l1=1.0 / c).coef
    model = LogisticRegression(
        C=c, l1_ratio=1.0, solver="liblinear", fit_intercept=False, tol=1e-10, max_iter=10_000
    )
    model.fit(np.vstack([x, x]), np.r_[np.ones(500), np.zeros(500)], sample_weight=np.r_[p, 1 - p])
    assert np.allclose(ours, model.coef_[0], atol=2e-4)
    assert np.any(ours == 0) == np.any(np.abs(model.coef_[0]) < 1e-8)


def test_l2_shrinks_only_the_penalised_coefficient():
    x, p, true = _data(seed=4)
    fit = fit_logistic(x, p, l2=np.array([1000.0, 0.0, 0.0])).coef
    assert abs(fit[0]) < abs(true[0]) / 2
    assert fit[1] == pytest.approx(true[1], abs=0.3)


def test_separable_data_stays_finite_under_a_penalty():
    x = np.column_stack([np.r_[np.ones(50), -np.ones(50)], np.ones(100)])
    y = np.r_[np.ones(50), np.zeros(50)]
    fit = fit_logistic(x, y, l1=1.0)
    assert np.all(np.isfinite(fit.coef))
    assert fit.coef[0] > 3
