"""Best-of-n from one pool of samples: the unbiased estimator and the analytic KL.

Drawing ``n`` of a prompt's ``N`` samples at random and keeping the one the proxy likes best is
what best-of-n does. Averaging over all ``C(N, n)`` subsets is exact but explodes; it collapses to a
weighted sum over ranks: sort the pool by proxy (ascending), and the sample of rank ``k`` is the
subset's best in ``C(k-1, n-1)`` of the ``C(N, n)`` subsets. So

    E[gold of the best of n] = sum_k C(k-1, n-1) / C(N, n) * gold_(k)

which is unbiased for the best-of-n of the policy that produced the pool, for every ``n <= N``,
from the one pool. The binomials are computed as log-gamma differences so that pools of thousands
stay exact to floating point. Prompts with equal pool sizes share their weights, so the whole
computation is one sort and one matrix product per distinct pool size. Ties in the proxy are
broken at random, in expectation: tied samples share their mean gold.

The KL divergence of best-of-n from the base policy is ``log n - (n-1)/n``; it is an upper bound
(exact only when outputs are continuous and never tie), so curves against it are drawn at most
that far from the base policy.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from truegrade.stats import as_float_array, factorize

__all__ = ["PromptEstimates", "best_of_n", "bon_kl", "bon_weights", "default_ns"]


def bon_kl(n: ArrayLike) -> NDArray[np.float64]:
    """``log n - (n-1)/n``: the KL of best-of-n from the base policy (an upper bound).

    Examples:
        >>> [round(float(x), 3) for x in bon_kl([1, 2, 16])]
        [0.0, 0.193, 1.835]
    """
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr < 1):
        raise ValueError("best-of-n needs n >= 1")
    out: NDArray[np.float64] = np.log(n_arr) - (n_arr - 1) / n_arr
    return out


def _log_binom(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    out: NDArray[np.float64] = gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)
    return out


def bon_weights(pool_size: int, n: int) -> NDArray[np.float64]:
    """Weights of ranks ``1..N`` (ascending proxy) in the best-of-``n`` estimate from ``N`` samples.

    ``w_k = C(k-1, n-1) / C(N, n)`` (zero for ``k < n``); they sum to 1.

    Examples:
        >>> [round(float(w), 6) for w in bon_weights(4, 2)]
        [0.0, 0.166667, 0.333333, 0.5]
    """
    if not 1 <= n <= pool_size:
        raise ValueError(f"best-of-{n} needs 1 <= n <= pool size ({pool_size})")
    k = np.arange(1, pool_size + 1, dtype=np.float64)
    out = np.zeros(pool_size)
    ok = k >= n
    out[ok] = np.exp(_log_binom(k[ok] - 1, n - 1) - _log_binom(np.float64(pool_size), n))
    return out


def default_ns(max_n: int) -> list[int]:
    """A grid of n spaced by about sqrt(2): 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, ...

    Even in log n, which is how KL grows, and dense enough to place a peak near n = 11-16.
    """
    out: list[int] = []
    i = 0
    while True:
        n = round(2 ** (i / 2))
        if n > max_n:
            return out
        if not out or n != out[-1]:
            out.append(n)
        i += 1


@dataclass(frozen=True, eq=False)
class PromptEstimates:
    """Per-prompt best-of-n estimates.

    Attributes:
        ns: The n of each column.
        proxy: Expected proxy score of the best of n, shape ``(prompts, len(ns))``; NaN where a
            prompt has fewer than n samples.
        gold: Expected gold score of the sample the proxy picks, same shape.
        pool_sizes: Samples per prompt.
        groups: The prompt ids, in row order (first appearance in the input).
    """

    ns: NDArray[np.int64]
    proxy: NDArray[np.float64]
    gold: NDArray[np.float64]
    pool_sizes: NDArray[np.int64]
    groups: list[Hashable]

    @property
    def eligible(self) -> NDArray[np.bool_]:
        """Which prompts have at least n samples, shape ``(prompts, len(ns))``."""
        mask: NDArray[np.bool_] = self.pool_sizes[:, None] >= self.ns[None, :]
        return mask


def best_of_n(
    proxy: ArrayLike,
    gold: ArrayLike,
    groups: Sequence[Hashable],
    ns: Sequence[int],
) -> PromptEstimates:
    """Unbiased best-of-n estimates of proxy and gold for every prompt and every n in ``ns``.

    Args:
        proxy: The score best-of-n selects on (the reward model, the grader being trained on).
        gold: The score that says what was really obtained (a stricter grader, labels).
        groups: The prompt of each sample: samples of one prompt form its pool.
        ns: The n to estimate (each >= 1).

    Examples:
        >>> est = best_of_n([0.1, 0.9, 0.5], [0.0, 1.0, 1.0], ["p", "p", "p"], [1, 2, 3])
        >>> [round(float(x), 4) for x in est.gold[0]]
        [0.6667, 1.0, 1.0]
    """
    x = as_float_array(proxy, "proxy")
    y = as_float_array(gold, "gold")
    if x.size != y.size:
        raise ValueError(f"{x.size} proxy scores for {y.size} gold scores")
    if len(groups) != x.size:
        raise ValueError(f"{len(groups)} prompt ids for {x.size} samples")
    codes, ids = factorize(groups)
    n_prompts = len(ids)
    grid = np.asarray(sorted(set(int(n) for n in ns)), dtype=np.int64)
    if grid.size == 0 or grid[0] < 1:
        raise ValueError("ns must be a non-empty list of n >= 1")
    sizes = np.bincount(codes, minlength=n_prompts).astype(np.int64)

    order = np.lexsort((x, codes))
    code_s, x_s, y_s = codes[order], x[order], y[order]
    # ties in the proxy: every tied sample is equally likely to be the one picked
    new_run = np.r_[True, (code_s[1:] != code_s[:-1]) | (x_s[1:] != x_s[:-1])]
    run = np.cumsum(new_run) - 1
    y_s = (np.bincount(run, weights=y_s) / np.bincount(run))[run]
    starts = np.r_[0, np.cumsum(sizes)[:-1]]

    # prompts with the same pool size share one weight matrix: their sorted pools stack into a
    # (prompts, N) matrix and every n is one matrix product
    out_x = np.full((n_prompts, grid.size), np.nan)
    out_y = np.full((n_prompts, grid.size), np.nan)
    for size in np.unique(sizes):
        members = np.flatnonzero(sizes == size)
        index = starts[members][:, None] + np.arange(size)[None, :]
        usable = grid <= size
        if not usable.any():
            continue
        weights = np.vstack([bon_weights(int(size), int(n)) for n in grid[usable]])  # (K', N)
        out_x[np.ix_(members, usable)] = x_s[index] @ weights.T
        out_y[np.ix_(members, usable)] = y_s[index] @ weights.T
    return PromptEstimates(ns=grid, proxy=out_x, gold=out_y, pool_sizes=sizes, groups=ids)
