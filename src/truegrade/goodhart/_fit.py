"""Gao, Schulman and Hilton's (2022) functional forms for gold reward under optimization.

With ``d = sqrt(KL)`` from the initial policy and the gold reward measured from the initial
policy's (so ``R(0) = 0``):

* best-of-n: ``R(d) = d (alpha - beta d)``, peak at ``d* = alpha / (2 beta)``;
* RL:        ``R(d) = d (alpha - beta log d)``, peak at ``d* = exp(alpha / beta - 1)``.

Both are linear in (alpha, beta), so the least-squares fit is exact (no optimizer, no starting
values) and many curves (bootstrap replicates) fit at once with one pseudo-inverse. A peak exists
only when ``beta > 0``; otherwise the form keeps rising and there is no overoptimization to see.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

from truegrade.stats import as_float_array

__all__ = ["FORMS", "GoldFit", "bon_n_for_kl", "fit_coefficients", "fit_gold_curve", "peak_d"]

Form = Literal["bon", "rl"]
FORMS: tuple[Form, ...] = ("bon", "rl")
_EQUATIONS = {"bon": "d * (alpha - beta * d)", "rl": "d * (alpha - beta * log(d))"}


def _design(d: NDArray[np.float64], form: str) -> NDArray[np.float64]:
    if form == "bon":
        return np.column_stack([d, -d * d])
    if form == "rl":
        with np.errstate(divide="ignore", invalid="ignore"):
            d_log_d = np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0)), 0.0)
        return np.column_stack([d, -d_log_d])
    raise ValueError(f"unknown form {form!r}; choose one of {', '.join(FORMS)}")


def fit_coefficients(d: ArrayLike, rewards: ArrayLike, form: str) -> NDArray[np.float64]:
    """Least-squares ``(alpha, beta)`` for one curve (``rewards`` shape ``(K,)``) or many at once
    (shape ``(B, K)``, one curve per row): returns shape ``(2,)`` or ``(B, 2)``."""
    dd = as_float_array(d, "d")
    y = np.asarray(rewards, dtype=np.float64)
    pinv = np.linalg.pinv(_design(dd, form))  # (2, K)
    out: NDArray[np.float64] = y @ pinv.T
    return out


def peak_d(alpha: ArrayLike, beta: ArrayLike, form: str) -> NDArray[np.float64]:
    """The d where the form peaks; NaN where ``beta <= 0`` (no peak: the form keeps rising)."""
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if form == "bon":
            out = a / (2 * b)
        elif form == "rl":
            out = np.exp(a / b - 1)
        else:
            raise ValueError(f"unknown form {form!r}")
    result: NDArray[np.float64] = np.where(b > 0, out, np.nan)
    return result


def bon_n_for_kl(kl: float) -> float:
    """The n whose analytic best-of-n KL, ``log n - (n-1)/n``, equals ``kl`` (n >= 1).

    Examples:
        >>> round(bon_n_for_kl(1.8350887222397811), 6)
        16.0
    """
    if not math.isfinite(kl) or kl < 0:
        return math.nan
    if kl == 0:
        return 1.0
    if kl > 700:
        return math.inf  # beyond floating point: no pool could reach it
    # log n - 1 + 1/n is increasing in n, and log n <= kl + 1 at the root
    root = brentq(lambda log_n: log_n - 1 + math.exp(-log_n) - kl, 0.0, kl + 1.0, xtol=1e-12)
    return math.exp(float(root))


@dataclass(frozen=True)
class GoldFit:
    """A fitted Gao et al. form.

    Attributes:
        form: ``"bon"`` or ``"rl"``.
        equation: The fitted equation, in words.
        alpha: Fitted alpha (the initial slope in d).
        beta: Fitted beta (the pull-back; > 0 means the curve turns over).
        r2: Coefficient of determination around the mean (can be negative: the forms have no
            intercept).
        rmse: Root-mean-square residual.
        points: Number of points fitted.
        peak_d: d at the peak, None when ``beta <= 0``.
        peak_kl: KL at the peak (``peak_d ** 2``).
        peak_n: For the best-of-n form, the n whose analytic KL is ``peak_kl``.
        peak_in_range: Whether the peak lies within the fitted d (otherwise it is extrapolated).
    """

    form: str
    equation: str
    alpha: float
    beta: float
    r2: float
    rmse: float
    points: int
    peak_d: float | None
    peak_kl: float | None
    peak_n: float | None
    peak_in_range: bool

    def predict(self, kl: ArrayLike) -> NDArray[np.float64]:
        """The fitted reward (from the initial policy's) at each KL."""
        d = np.sqrt(np.asarray(kl, dtype=np.float64))
        out: NDArray[np.float64] = _design(d, self.form) @ np.array([self.alpha, self.beta])
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fit_gold_curve(kl: ArrayLike, rewards: ArrayLike, form: str = "bon") -> GoldFit:
    """Fit a Gao et al. form to rewards measured at each KL from the initial policy.

    Args:
        kl: KL divergence of each point from the initial policy (``d = sqrt(kl)``).
        rewards: Reward at each point *relative to the initial policy's* (subtract the KL = 0
            value first), since both forms pass through the origin.
        form: ``"bon"`` for best-of-n, ``"rl"`` for RL checkpoints.

    Examples:
        >>> import numpy as np
        >>> kl = np.linspace(0, 9, 12)
        >>> d = np.sqrt(kl)
        >>> fit = fit_gold_curve(kl, d * (0.8 - 0.2 * d))
        >>> round(fit.alpha, 6), round(fit.beta, 6), round(fit.peak_d, 6)
        (0.8, 0.2, 2.0)
    """
    kl_arr = as_float_array(kl, "kl")
    y = as_float_array(rewards, "rewards")
    if kl_arr.size != y.size:
        raise ValueError(f"{kl_arr.size} KL values for {y.size} rewards")
    if kl_arr.size < 2:
        raise ValueError("a fit needs at least 2 points")
    if np.any(kl_arr < 0):
        raise ValueError("KL cannot be negative")
    d = np.sqrt(kl_arr)
    alpha, beta = (float(v) for v in fit_coefficients(d, y, form))
    fitted = _design(d, form) @ np.array([alpha, beta])
    ssr = float(np.sum((y - fitted) ** 2))
    sst = float(np.sum((y - y.mean()) ** 2))
    peak = float(peak_d(alpha, beta, form))
    has_peak = math.isfinite(peak)
    return GoldFit(
        form=form,
        equation=_EQUATIONS[form],
        alpha=alpha,
        beta=beta,
        r2=1 - ssr / sst if sst > 0 else math.nan,
        rmse=math.sqrt(ssr / y.size),
        points=int(y.size),
        peak_d=peak if has_peak else None,
        peak_kl=peak * peak if has_peak else None,
        peak_n=bon_n_for_kl(peak * peak) if has_peak and form == "bon" else None,
        peak_in_range=bool(has_peak and d.min() <= peak <= d.max()),
    )
