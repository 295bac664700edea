"""The one result shape of every estimate in ``truegrade.stats``, and the bits they all share.

An estimate is never a bare number: the grader card, ``validate`` and ``audit`` print the interval
next to it and say how it was obtained (``method``), so a reader can tell a clustered interval from
a naive one at a glance.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Estimate",
    "as_float_array",
    "cluster_codes",
    "factorize",
    "json_ready",
    "normal_ppf",
    "normal_quantile",
    "t_quantile",
    "t_sf",
]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and confidence interval.

    Attributes:
        estimate: The point estimate (NaN when it is undefined, e.g. no data).
        se: Its standard error (NaN when it cannot be estimated).
        ci_low: Lower end of the confidence interval.
        ci_high: Upper end of the confidence interval.
        n: Number of observations (items, samples) behind it.
        clusters: Number of independent clusters (equals ``n`` when unclustered).
        method: How the interval was obtained, e.g. ``"t, cluster-robust SE (G-1 df)"`` or
            ``"cluster bootstrap, percentile (2000 resamples)"``.
        confidence: Coverage of the interval (0.95 for a 95% interval).
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    clusters: int
    method: str
    confidence: float = 0.95

    @classmethod
    def undefined(cls, why: str, *, n: int, clusters: int, confidence: float) -> Estimate:
        """An estimate that does not exist for this data (no items, one class only...)."""
        nan = math.nan
        return cls(nan, nan, nan, nan, n, clusters, why, confidence)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (NaN becomes None, so the output is strict JSON)."""
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval."""
        return self.ci_low <= value <= self.ci_high


def json_ready(value: Any) -> Any:
    """``value`` with every NaN or infinite float (also inside lists, tuples and dicts, and numpy
    scalars) replaced by None, so it serialises as strict JSON."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def normal_quantile(confidence: float) -> float:
    """The two-sided standard-normal critical value: 1.96 for ``confidence=0.95``."""
    _check_confidence(confidence)
    return normal_ppf(0.5 + confidence / 2)


def t_quantile(confidence: float, df: float) -> float:
    """The two-sided Student-t critical value with ``df`` degrees of freedom."""
    _check_confidence(confidence)
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2))


def normal_ppf(q: float) -> float:
    """The standard-normal quantile function (scipy is imported on first use: importing
    ``truegrade.stats`` stays cheap for commands that only need a mean)."""
    from scipy.special import ndtri

    return float(ndtri(q))


def t_sf(t: float, df: float) -> float:
    """Upper tail probability of Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def as_float_array(values: ArrayLike, name: str = "values") -> NDArray[np.float64]:
    """A 1-D float array; booleans count as 0/1. Refuses NaN and infinities, which would
    otherwise silently poison every sum downstream."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}[{bad}] is {array[bad]}: every value must be a finite number")
    return array


def factorize(ids: Sequence[Hashable]) -> tuple[NDArray[np.intp], list[Hashable]]:
    """Integer codes for ids, numbered in order of first appearance, and the distinct ids."""
    index: dict[Hashable, int] = {}
    codes = np.fromiter(
        (index.setdefault(c, len(index)) for c in ids), dtype=np.intp, count=len(ids)
    )
    return codes, list(index)


def cluster_codes(clusters: Sequence[Hashable] | None, n: int) -> tuple[NDArray[np.intp], int]:
    """Integer codes ``0..G-1`` for cluster ids (in order of first appearance) and ``G``.

    Without clusters every observation is its own cluster, so clustered formulas reduce to the
    textbook ones. Ids may be any hashable (strings, ints, tuples, None).
    """
    if clusters is None:
        return np.arange(n, dtype=np.intp), n
    if len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster ids for {n} values")
    codes, ids = factorize(clusters)
    return codes, len(ids)
