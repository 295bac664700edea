"""Logistic regression with soft labels, sample weights and L1/L2 penalties, solved by Newton.

Judge verdicts are probabilities (a preference of 1.3 means "the baseline, with 70% weight"), so
the loss is the cross-entropy against a soft label, not against a 0/1 class. The problems here
are small (a handful of coefficients per model, or one joint fit with a few hundred), so a
(proximal) Newton method converges in a few iterations where a generic optimizer would take
hundreds; that is what keeps a 60-model leaderboard fit to seconds.

The objective follows liblinear's convention, so an L1 strength reads like scikit-learn's ``C``::

    sum_i w_i * CE(y_i, sigmoid(x_i . b))  +  l1 * ||b||_1  +  1/2 * sum_j l2_j * b_j^2

Pure numerics: no I/O, no logging.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

__all__ = [
    "FitResult",
    "cross_entropy",
    "fit_logistic",
    "sigmoid",
]

FloatArray = NDArray[np.float64]


def sigmoid(z: FloatArray) -> FloatArray:
    """The logistic function, without overflow warnings for large ``|z|``."""
    out: FloatArray = np.exp(-np.logaddexp(0.0, -z))
    return out


def cross_entropy(y: FloatArray, z: FloatArray, w: FloatArray) -> float:
    """Weighted soft-label cross-entropy ``sum w * (log(1 + e^z) - y z)`` of logits ``z``."""
    return float(np.sum(w * (np.logaddexp(0.0, z) - y * z)))


@dataclass(frozen=True)
class FitResult:
    """Coefficients of one fit and how the solver got there.

    Attributes:
        coef: The fitted coefficients.
        iterations: Newton steps taken.
        converged: Whether the step size fell under the tolerance before ``max_iter``.
        objective: The penalised objective at ``coef``.
    """

    coef: FloatArray
    iterations: int
    converged: bool
    objective: float


def _objective(
    design: Any, y: FloatArray, w: FloatArray, b: FloatArray, l1: float, l2: FloatArray
) -> float:
    z = np.asarray(design @ b, dtype=np.float64)
    return cross_entropy(y, z, w) + l1 * float(np.abs(b).sum()) + 0.5 * float(l2 @ (b * b))


def _hessian(design: Any, curvature: FloatArray) -> FloatArray:
    if isinstance(design, np.ndarray):
        h: FloatArray = design.T @ (design * curvature[:, None])
        return h
    weighted = design.multiply(curvature[:, None]).tocsr()
    return np.asarray((design.T @ weighted).toarray(), dtype=np.float64)


def _solve(h: FloatArray, g: FloatArray) -> FloatArray:
    """``H^-1 g`` for a symmetric positive (semi-)definite ``H``: Cholesky, least squares if
    that fails."""
    try:
        factor = scipy.linalg.cho_factor(h, check_finite=False)
        out: FloatArray = scipy.linalg.cho_solve(factor, g, check_finite=False)
        return out
    except np.linalg.LinAlgError:
        return np.asarray(np.linalg.lstsq(h, g, rcond=None)[0], dtype=np.float64)


def _lasso_step(
    b: FloatArray, g: FloatArray, h: FloatArray, l1: float, sweeps: int = 200
) -> FloatArray:
    """Minimise the quadratic model ``g.(u-b) + 1/2 (u-b)' H (u-b) + l1 |u|_1`` over ``u``.

    When no coefficient changes sign the minimiser is one linear solve (the usual case near the
    optimum); otherwise exact coordinate descent, in plain floats because there are only a few
    coordinates and numpy's per-call cost would dominate.
    """
    signs = np.sign(b)
    if np.all(signs != 0):
        u = b - _solve(h, g + l1 * signs)
        if np.all(np.sign(u) == signs):
            return u
    k = b.size
    hh = h.tolist()
    gg = g.tolist()
    bb = b.tolist()
    uu = list(bb)
    # r_j = g_j + sum_k H_jk (u_k - b_k): the gradient of the quadratic part at u
    r = list(gg)
    for _ in range(sweeps):
        largest = 0.0
        for j in range(k):
            hjj = hh[j][j]
            if hjj <= 0:
                continue
            target = hjj * uu[j] - r[j]
            new = math.copysign(max(abs(target) - l1, 0.0), target) / hjj
            delta = new - uu[j]
            if delta != 0.0:
                row = hh[j]
                for i in range(k):
                    r[i] += row[i] * delta
                uu[j] = new
                largest = max(largest, abs(delta))
        if largest < 1e-13:
            break
    return np.array(uu)


def fit_logistic(
    design: Any,
    y: FloatArray,
    w: FloatArray | None = None,
    *,
    l1: float = 0.0,
    l2: float | FloatArray = 0.0,
    start: FloatArray | None = None,
    max_iter: int = 100,
    tol: float = 1e-9,
) -> FitResult:
    """Fit ``P(y=1|x) = sigmoid(x . b)`` to soft labels ``y`` in [0, 1] (no intercept is added:
    put a column of ones in ``design`` for one).

    Args:
        design: The design matrix, dense (``ndarray``) or ``scipy.sparse``.
        y: Soft labels in [0, 1].
        w: Sample weights (default 1).
        l1: L1 strength (liblinear's ``1/C``); solved exactly by proximal Newton steps.
        l2: L2 strength, a scalar or one per coefficient (0 leaves a coefficient unpenalised).
        start: Initial coefficients (warm start along a regularisation path).
        max_iter: Newton steps at most.
        tol: Stop when no coefficient moves by more than this.

    Returns:
        The coefficients and the solver's record.

    Examples:
        >>> x = np.array([[1.0, 0.0], [1.0, 1.0]] * 50)
        >>> y = np.array([0.2, 0.8] * 50)
        >>> b = fit_logistic(x, y).coef
        >>> [round(float(v), 3) for v in sigmoid(x[:2] @ b)]
        [0.2, 0.8]
    """
    n, k = design.shape
    weights = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    ridge = np.broadcast_to(np.asarray(l2, dtype=np.float64), (k,)).copy()
    b = np.zeros(k) if start is None else np.asarray(start, dtype=np.float64).copy()
    current = _objective(design, y, weights, b, l1, ridge)
    for iteration in range(1, max_iter + 1):
        z = np.asarray(design @ b, dtype=np.float64)
        p = sigmoid(z)
        g = np.asarray(design.T @ (weights * (p - y)), dtype=np.float64) + ridge * b
        h = _hessian(design, weights * p * (1 - p))
        h[np.diag_indices_from(h)] += ridge + 1e-10
        direction = _lasso_step(b, g, h, l1) - b if l1 > 0 else -_solve(h, g)
        step = 1.0
        while True:
            candidate = b + step * direction
            value = _objective(design, y, weights, candidate, l1, ridge)
            if value <= current + 1e-12 * max(1.0, abs(current)) or step < 1e-10:
                break
            step /= 2
        moved = float(np.max(np.abs(candidate - b))) if k else 0.0
        b, current = candidate, value
        if moved < tol:
            return FitResult(b, iteration, True, current)
    return FitResult(b, max_iter, False, current)
