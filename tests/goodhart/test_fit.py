"""Gao et al.'s forms: the fits recover known coefficients and peaks."""

from __future__ import annotations

import numpy as np
import pytest

from truegrade.goodhart._bon import bon_kl
from truegrade.goodhart._fit import fit_coefficients, fit_gold_curve


@pytest.mark.parametrize(("alpha", "beta"), [(1.2, 0.5), (0.6, 0.05), (0.9, -0.1)])
def test_best_of_n_form_recovers_coefficients_from_a_noisy_curve(alpha, beta):
    rng = np.random.default_rng(0)
    kl = bon_kl(np.array([1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128]))
    d = np.sqrt(kl)
    rewards = d * (alpha - beta * d) + rng.normal(0, 0.005, d.size)
    fit = fit_gold_curve(kl, rewards, "bon")
    assert fit.alpha == pytest.approx(alpha, abs=0.02)
    assert fit.beta == pytest.approx(beta, abs=0.01)
    assert fit.r2 > 0.99
    if beta > 0 and alpha / (2 * beta) <= d.max():
        assert fit.peak_in_range
        assert fit.peak_d == pytest.approx(alpha / (2 * beta), rel=0.05)
        assert fit.peak_kl == pytest.approx(fit.peak_d**2)
    elif beta > 0:
        # a peak far beyond the data is extrapolated: found, but flagged as such
        assert fit.beta > 0 and not fit.peak_in_range
    else:
        assert fit.peak_d is None and fit.peak_n is None and not fit.peak_in_range


def test_rl_form_recovers_coefficients_and_its_peak():
    rng = np.random.default_rng(1)
    kl = np.linspace(0, 40, 30)
    d = np.sqrt(kl)
    alpha, beta = 1.0, 0.6
    with np.errstate(divide="ignore", invalid="ignore"):
        clean = np.where(d > 0, d * (alpha - beta * np.log(np.where(d > 0, d, 1))), 0)
    fit = fit_gold_curve(kl, clean + rng.normal(0, 0.003, d.size), "rl")
    assert (fit.alpha, fit.beta) == pytest.approx((alpha, beta), abs=0.01)
    assert fit.peak_d == pytest.approx(np.exp(alpha / beta - 1), rel=0.03)
    assert fit.peak_in_range and fit.peak_n is None  # n is a best-of-n notion
    assert fit.predict(kl) == pytest.approx(clean, abs=0.02)


def test_many_curves_fit_at_once_like_one_at_a_time():
    rng = np.random.default_rng(2)
    d = np.sqrt(bon_kl(np.arange(1, 20)))
    curves = rng.normal(size=(5, d.size))
    together = fit_coefficients(d, curves, "bon")
    for row, curve in zip(together, curves, strict=True):
        one = fit_gold_curve(d**2, curve, "bon")
        assert row.tolist() == pytest.approx([one.alpha, one.beta])


def test_fit_refuses_unusable_input():
    with pytest.raises(ValueError, match="unknown form"):
        fit_gold_curve([0, 1], [0, 1], "linear")
    with pytest.raises(ValueError, match="at least 2"):
        fit_gold_curve([1.0], [1.0])
    with pytest.raises(ValueError, match="negative"):
        fit_gold_curve([-1.0, 1.0], [0.0, 1.0])
