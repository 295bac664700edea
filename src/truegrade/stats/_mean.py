"""Means with honest standard errors.

When samples share a prompt (GRPO groups, best-of-n pools) they are not independent, and the naive
standard error understates the uncertainty, often by a factor of 3 on popular evals. With cluster
ids, the standard error is the cluster-robust one: residuals are summed within each cluster before
squaring, with the usual G/(G-1) small-sample correction. Without clusters it reduces exactly to
the textbook ``s / sqrt(n)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from truegrade.stats._estimate import as_float_array, cluster_codes
from truegrade.stats._inference import clustered_se

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

    The same estimator as :func:`truegrade.stats.mean_ci`, which also gives the interval.

    Args:
        values: The observations.
        clusters: One cluster id per value (e.g. the prompt), or None for independent values.

    Examples:
        >>> round(mean_se([0, 1, 1, 0]).se, 4)
        0.2887
    """
    x = as_float_array(values)
    codes, g = cluster_codes(clusters, x.size)
    if x.size == 0:
        return MeanSE(math.nan, math.nan, 0, 0)
    return MeanSE(float(x.mean()), clustered_se(x, codes, g), x.size, g)
