"""Means with honest standard errors.

When samples share a prompt (GRPO groups, best-of-n pools) they are not independent, and the naive
standard error understates the uncertainty, often by a factor of 3 on popular evals. With cluster
ids, the standard error is the cluster-robust one: residuals are summed within each cluster before
squaring, with the usual G/(G-1) small-sample correction. Without clusters it reduces exactly to
the textbook ``s / sqrt(n)``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

__all__ = ["MeanSE", "mean_se"]


@dataclass(frozen=True)
class MeanSE:
    """A mean and its standard error.

    Attributes:
        mean: The sample mean (NaN for no data).
        se: Its standard error (NaN when fewer than two clusters).
        n: Number of values.
        clusters: Number of clusters (equals ``n`` when unclustered).
    """

    mean: float
    se: float
    n: int
    clusters: int

    def ci95(self) -> tuple[float, float]:
        """The normal-approximation 95% interval."""
        half = 1.959963984540054 * self.se
        return self.mean - half, self.mean + half


def mean_se(values: Sequence[float], clusters: Sequence[Hashable] | None = None) -> MeanSE:
    """Mean and (cluster-robust when ``clusters`` is given) standard error.

    Args:
        values: The observations.
        clusters: One cluster id per value (e.g. the prompt), or None for independent values.

    Examples:
        >>> round(mean_se([0, 1, 1, 0]).se, 4)
        0.2887
    """
    n = len(values)
    if n == 0:
        return MeanSE(math.nan, math.nan, 0, 0)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster ids for {n} values")
    mean = math.fsum(values) / n
    sums: dict[Hashable, float] = defaultdict(float)
    if clusters is None:
        for i, v in enumerate(values):
            sums[i] += v - mean
    else:
        for c, v in zip(clusters, values, strict=True):
            sums[c] += v - mean
    g = len(sums)
    if g < 2:
        return MeanSE(mean, math.nan, n, g)
    variance = g / (g - 1) * math.fsum(s * s for s in sums.values()) / (n * n)
    return MeanSE(mean, math.sqrt(variance), n, g)
