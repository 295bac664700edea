"""Best-of-n curves at scale: truegrade's estimator against the loop a user would write.

The anchor computes the same unbiased estimator the straightforward way: for each prompt, sort
its pool by proxy, and for each n take the dot product of the gold column with the weights
``C(k-1, n-1) / C(N, n)`` from ``scipy.special.comb``. truegrade's :func:`best_of_n` does all
prompts at once (one sort, log-gamma weights, grouped sums). Both run on the same synthetic pool
(heavy-tailed noise, so the curve has a peak) in the same process, alternating repeats; the
largest difference between their curves is reported, so the speed is not bought with accuracy.
The full analysis (curves, both fitted forms with bootstrap intervals, the peak) is timed too.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy.special import comb

from truegrade.bench._report import BenchReport, Measurement
from truegrade.goodhart import best_of_n, default_ns, overoptimization, synthetic_pool

__all__ = ["naive_bon_curve", "run_goodhart_bench"]


def naive_bon_curve(
    proxy: NDArray[np.float64], gold: NDArray[np.float64], groups: list[str], ns: list[int]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The anchor: a per-prompt Python loop over numpy (ties ignored, as such loops do).
    Returns the proxy and gold curves."""
    by_prompt: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_prompt.setdefault(g, []).append(i)
    proxy_curve, gold_curve = np.zeros(len(ns)), np.zeros(len(ns))
    for members in by_prompt.values():
        idx = np.array(members)
        order = np.argsort(proxy[idx])
        sorted_proxy, sorted_gold = proxy[idx][order], gold[idx][order]
        size = idx.size
        k = np.arange(1, size + 1)
        for j, n in enumerate(ns):
            weights = comb(k - 1, n - 1) / comb(size, n)
            proxy_curve[j] += float(weights @ sorted_proxy)
            gold_curve[j] += float(weights @ sorted_gold)
    return proxy_curve / len(by_prompt), gold_curve / len(by_prompt)


def run_goodhart_bench(
    *,
    samples: int = 100_000,
    prompts: int = 1_000,
    repeats: int = 5,
    resamples: int = 1000,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Seconds to compute proxy and gold best-of-n curves for ``samples`` across ``prompts``."""
    pool_size = max(2, samples // prompts)
    pool = synthetic_pool(prompts, pool_size, noise="student_t", seed=0)
    ns = default_ns(pool_size)
    report = BenchReport(
        title=f"Best-of-n curves, {prompts * pool_size:,} samples across {prompts:,} prompts",
        metric="seconds",
        lower_is_better=True,
        params={
            "samples": prompts * pool_size,
            "prompts": prompts,
            "ns": len(ns),
            "repeats": repeats,
            "resamples": resamples,
        },
        notes=[
            "Both compute the unbiased estimator for proxy and gold at every n of the grid.",
            "'max abs diff' is the largest difference between the two gold curves.",
            "'full analysis' adds bootstrap bands over prompts, both fitted forms and the peak.",
        ],
    )
    ours = Measurement("truegrade best_of_n (vectorised, log-gamma weights)", False, [])
    anchor = Measurement("per-prompt numpy loop with scipy.special.comb", True, [])
    full: list[float] = []
    diff = 0.0
    for r in range(repeats):
        if progress:
            progress(f"repeat {r + 1}/{repeats}")
        start = time.perf_counter()
        est = best_of_n(pool.proxy, pool.gold, pool.groups, ns)
        mine = np.nanmean(est.gold, axis=0)
        np.nanmean(est.proxy, axis=0)
        ours.samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        _, theirs = naive_bon_curve(pool.proxy, pool.gold, pool.groups, ns)
        anchor.samples.append(time.perf_counter() - start)
        diff = max(diff, float(np.max(np.abs(mine - theirs))))
        start = time.perf_counter()
        overoptimization(pool.proxy, pool.gold, pool.groups, ns=ns, n_resamples=resamples)
        full.append(time.perf_counter() - start)
    ours.extra = {"max abs diff": diff, "full analysis, s": float(np.median(full))}
    report.measurements = [ours, anchor]
    return report
