"""The cluster bootstrap: resample whole clusters (prompts), never single samples.

When samples share a prompt they are correlated, and resampling samples pretends they are not:
the intervals come out too narrow. Resampling clusters with replacement keeps every prompt's
samples together, which is what "bootstrap over prompts" means.

One implementation serves every statistic. Most statistics used here (means, ratios, rates,
kappa, F1, calibration error, best-of-n curves) are functions of *per-cluster totals*: a resample
is then a vector of counts (how often each cluster was drawn), and the resampled totals are one
matrix product, ``counts @ totals``. That makes thousands of resamples a few BLAS calls. Statistics
that are not functions of totals (AUROC) take the counts themselves from :func:`resample_counts`.

Resamples are reproducible: the same ``seed`` gives the same counts, whatever the statistic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.stats._estimate import Estimate

__all__ = ["BootstrapResult", "cluster_bootstrap", "cluster_totals", "resample_counts"]

# a resample chunk holds at most this many cells (chunk rows x clusters), ~32 MB of float64
_MAX_CELLS = 4_000_000


def resample_counts(
    n_clusters: int, n_resamples: int, seed: int = 0
) -> Iterator[NDArray[np.float64]]:
    """Yield chunks of resample counts, shape ``(chunk, n_clusters)``, ``n_resamples`` rows in all.

    Row ``b`` says how many times each cluster was drawn in resample ``b`` (``n_clusters`` draws
    with replacement, so each row sums to ``n_clusters``). Chunks bound the memory; the draws do
    not depend on the chunking.

    Examples:
        >>> rows = np.vstack(list(resample_counts(5, 3, seed=1)))
        >>> rows.shape, rows.sum(axis=1).tolist()
        ((3, 5), [5.0, 5.0, 5.0])
    """
    if n_clusters < 1:
        raise ValueError("the bootstrap needs at least one cluster")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_resamples, _MAX_CELLS // n_clusters))
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_clusters, size=(b, n_clusters))
        offsets = (np.arange(b) * n_clusters)[:, None]
        flat = np.bincount((draws + offsets).ravel(), minlength=b * n_clusters)
        yield flat.reshape(b, n_clusters).astype(np.float64)
        done += b


def cluster_totals(
    codes: NDArray[np.intp], n_clusters: int, columns: ArrayLike
) -> NDArray[np.float64]:
    """Sum the rows of ``columns`` (``(n,)`` or ``(n, K)``) within each cluster: ``(G, K)``."""
    data = np.asarray(columns, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    out = np.empty((n_clusters, data.shape[1]), dtype=np.float64)
    for k in range(data.shape[1]):
        out[:, k] = np.bincount(codes, weights=data[:, k], minlength=n_clusters)
    return out


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """The bootstrap distribution of one or more statistics.

    Attributes:
        point: The statistics on the original data, shape ``(M,)``.
        replicates: The statistics on each resample, shape ``(n_resamples, M)``; NaN where a
            resample left the statistic undefined (e.g. no positive items drawn).
        n_clusters: Clusters resampled.
        seed: The seed that reproduces the resamples.
    """

    point: NDArray[np.float64]
    replicates: NDArray[np.float64]
    n_clusters: int
    seed: int

    @property
    def n_resamples(self) -> int:
        return int(self.replicates.shape[0])

    def se(self) -> NDArray[np.float64]:
        """Bootstrap standard errors: the standard deviation of the replicates (ddof=1)."""
        with np.errstate(invalid="ignore"):
            return _nan_reduce(self.replicates, lambda a: np.std(a, ddof=1))

    def interval(self, confidence: float = 0.95) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Percentile interval: the ``(1-c)/2`` and ``(1+c)/2`` quantiles of the replicates."""
        lo = _nan_reduce(self.replicates, lambda a: np.quantile(a, (1 - confidence) / 2))
        hi = _nan_reduce(self.replicates, lambda a: np.quantile(a, (1 + confidence) / 2))
        return lo, hi

    def estimate(
        self, index: int = 0, *, n: int, confidence: float = 0.95, what: str = ""
    ) -> Estimate:
        """Statistic ``index`` as an :class:`Estimate` with a percentile interval."""
        lo, hi = self.interval(confidence)
        label = f"cluster bootstrap, percentile ({self.n_resamples} resamples"
        label += f" of {self.n_clusters} clusters)" if self.n_clusters < n else ")"
        return Estimate(
            estimate=float(self.point[index]),
            se=float(self.se()[index]),
            ci_low=float(lo[index]),
            ci_high=float(hi[index]),
            n=n,
            clusters=self.n_clusters,
            method=f"{what}{', ' if what else ''}{label}",
            confidence=confidence,
        )


def _nan_reduce(
    replicates: NDArray[np.float64], reduce: Callable[[NDArray[np.float64]], object]
) -> NDArray[np.float64]:
    """Reduce each column over its finite replicates (NaN where fewer than two are finite)."""
    out = np.full(replicates.shape[1], np.nan)
    for m in range(replicates.shape[1]):
        column = replicates[:, m]
        finite = column[np.isfinite(column)]
        if finite.size >= 2:
            out[m] = float(reduce(finite))  # type: ignore[arg-type]
    return out


def cluster_bootstrap(
    totals: ArrayLike,
    statistic: Callable[[NDArray[np.float64]], ArrayLike],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> BootstrapResult:
    """Bootstrap a statistic of per-cluster totals by resampling clusters with replacement.

    A resample draws ``G`` clusters with replacement; its totals are ``counts @ totals``. The
    statistic receives totals for many resamples at once, shape ``(b, K)``, and returns one value
    per row, shape ``(b,)`` or ``(b, M)`` for several statistics at once. It is also applied to the
    original totals for the point estimate.

    Args:
        totals: Per-cluster sums, shape ``(G, K)``: e.g. ``[sum of values, count]`` for a mean.
        statistic: Vectorised function of summed totals (rows are resamples).
        n_resamples: Number of resamples (2,000 gives stable 95% percentile intervals).
        seed: Seed of the resampling (same seed, same resamples).

    Examples:
        A clustered mean is ``sum / count`` of the cluster totals:

        >>> values = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
        >>> codes = np.array([0, 0, 1, 1, 2, 2])
        >>> totals = cluster_totals(codes, 3, np.column_stack([values, np.ones(6)]))
        >>> boot = cluster_bootstrap(totals, lambda t: t[:, 0] / t[:, 1], seed=0)
        >>> float(boot.point[0])
        0.5
    """
    table = np.asarray(totals, dtype=np.float64)
    if table.ndim == 1:
        table = table[:, None]
    n_clusters = table.shape[0]

    def apply(summed: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.asarray(statistic(summed), dtype=np.float64)
        return out.reshape(summed.shape[0], -1)

    point = apply(table.sum(axis=0, keepdims=True))[0]
    parts = [apply(counts @ table) for counts in resample_counts(n_clusters, n_resamples, seed)]
    return BootstrapResult(
        point=point, replicates=np.vstack(parts), n_clusters=n_clusters, seed=seed
    )
