"""Overoptimization curves: proxy and gold under best-of-n, with bands, fits and the peak.

Pure numerics: arrays in, an :class:`Overoptimization` out (``to_dict`` is the JSON that
``truegrade overopt --out`` writes and the grader card reads). Every prompt counts once at each n
it has enough samples for; the bands come from the shared cluster bootstrap over prompts, so a
prompt's samples are never treated as independent evidence.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.goodhart._bon import PromptEstimates, best_of_n, bon_kl, default_ns
from truegrade.goodhart._fit import (
    FORMS,
    GoldFit,
    bon_n_for_kl,
    fit_coefficients,
    fit_gold_curve,
    peak_d,
)
from truegrade.stats import (
    BootstrapResult,
    Estimate,
    cluster_bootstrap,
    cluster_totals,
    json_ready,
)

__all__ = ["SCHEMA", "CurvePoint", "FitBands", "Overoptimization", "Peak", "overoptimization"]

SCHEMA = "truegrade.overopt/1"

KL_NOTE = (
    "kl is the analytic best-of-n KL, log n - (n-1)/n: an upper bound on the true KL from the "
    "base policy (exact only for continuous outputs that never tie)."
)


@dataclass(frozen=True)
class CurvePoint:
    """The curves at one n.

    Attributes:
        n: Samples per best-of-n draw.
        kl: Analytic KL of best-of-n (an upper bound).
        prompts: Prompts with at least n samples (the ones averaged here).
        prompts_excluded: Prompts with fewer than n samples, left out of this point.
        proxy: Mean over prompts of the expected proxy score of the best of n.
        gold: Mean over prompts of the expected gold score of the sample the proxy picks.
        gap: ``proxy - gold``.
    """

    n: int
    kl: float
    prompts: int
    prompts_excluded: int
    proxy: Estimate
    gold: Estimate
    gap: Estimate

    @property
    def d(self) -> float:
        """``sqrt(kl)``, the x axis of Gao et al.'s forms."""
        return math.sqrt(self.kl)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kl": self.kl,
            "d": self.d,
            "prompts": self.prompts,
            "prompts_excluded": self.prompts_excluded,
            "proxy": _interval_dict(self.proxy),
            "gold": _interval_dict(self.gold),
            "gap": _interval_dict(self.gap),
        }


def _interval_dict(e: Estimate) -> dict[str, float | None]:
    d = e.to_dict()
    return {k: d[k] for k in ("estimate", "se", "ci_low", "ci_high")}


@dataclass(frozen=True)
class FitBands:
    """A fitted form with bootstrap intervals on its coefficients and its peak.

    Attributes:
        fit: The fit to the point estimates.
        alpha_ci: Percentile interval of alpha over resamples.
        beta_ci: Percentile interval of beta.
        peak_share: Share of resamples whose fit has a peak (``beta > 0``).
        peak_kl_ci: Percentile interval of the peak's KL among resamples with a peak (None when
            fewer than half of them have one: the peak is then not established).
        peak_n_ci: The same in n (best-of-n form only).
    """

    fit: GoldFit
    alpha_ci: tuple[float, float]
    beta_ci: tuple[float, float]
    peak_share: float
    peak_kl_ci: tuple[float, float] | None
    peak_n_ci: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        out = self.fit.to_dict()
        out.update(
            alpha_ci=list(self.alpha_ci),
            beta_ci=list(self.beta_ci),
            peak_share=self.peak_share,
            peak_kl_ci=list(self.peak_kl_ci) if self.peak_kl_ci else None,
            peak_n_ci=list(self.peak_n_ci) if self.peak_n_ci else None,
        )
        return out


@dataclass(frozen=True)
class Peak:
    """Where gold is highest on the measured grid.

    Attributes:
        n: The n with the highest gold estimate.
        kl: Its analytic KL.
        gold: Gold at that n.
        n_ci: Percentile interval of the arg-max n over resamples.
        decline: ``gold(peak n) - gold(largest n)``, with its bootstrap interval: how much gold
            is lost by optimizing past the peak.
        overoptimized: Whether the decline is significant (its interval lies above 0), i.e.
            pushing to the largest n measurably lowers gold.
        at_edge: The highest gold is at the largest n measured: no peak within the data.
    """

    n: int
    kl: float
    gold: float
    n_ci: tuple[float, float]
    decline: Estimate
    overoptimized: bool
    at_edge: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kl": self.kl,
            "gold": self.gold,
            "n_ci": list(self.n_ci),
            "decline": _interval_dict(self.decline),
            "overoptimized": self.overoptimized,
            "at_edge": self.at_edge,
        }


@dataclass(frozen=True)
class Overoptimization:
    """Proxy and gold curves under best-of-n, their fits and the peak.

    Attributes:
        points: One :class:`CurvePoint` per n.
        fits: ``fits[column][form]`` for column ``"gold"`` / ``"proxy"`` and form ``"bon"`` /
            ``"rl"``, each fitted to the curve relative to its n = 1 value.
        peak: Where gold is highest.
        samples: Samples used.
        prompts: Prompts (pools).
        pool_sizes: ``{"min", "median", "max"}`` samples per prompt.
        confidence: Coverage of every interval.
        n_resamples: Bootstrap resamples (over prompts).
        seed: Seed of the resampling.
        notes: What a reader must know (KL is an upper bound; prompts left out at large n).
    """

    points: list[CurvePoint]
    fits: dict[str, dict[str, FitBands]]
    peak: Peak
    samples: int
    prompts: int
    pool_sizes: dict[str, float]
    confidence: float
    n_resamples: int
    seed: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``truegrade overopt --out`` (schema ``truegrade.overopt/1``)."""
        doc: dict[str, Any] = json_ready(
            {
                "schema": SCHEMA,
                "samples": self.samples,
                "prompts": self.prompts,
                "pool_sizes": self.pool_sizes,
                "confidence": self.confidence,
                "resamples": self.n_resamples,
                "seed": self.seed,
                "points": [p.to_dict() for p in self.points],
                "fits": {
                    column: {form: bands.to_dict() for form, bands in forms.items()}
                    for column, forms in self.fits.items()
                },
                "peak": self.peak.to_dict(),
                "notes": list(self.notes),
            }
        )
        return doc


def overoptimization(
    proxy: ArrayLike,
    gold: ArrayLike,
    groups: Sequence[Hashable],
    *,
    ns: Sequence[int] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> Overoptimization:
    """Best-of-n curves of proxy and gold from one pool of samples per prompt.

    Args:
        proxy: The score best-of-n selects on, one per sample.
        gold: The trusted score, one per sample.
        groups: The prompt of each sample.
        ns: The n to evaluate; 1 is always added (the base policy, ``R(0)``). Default: about
            sqrt(2) apart (1, 2, 3, 4, 6, 8, 11, 16, ...) up to the median pool size, so every
            point averages at least half of the prompts.
        confidence: Coverage of the bands and intervals.
        n_resamples: Cluster-bootstrap resamples over prompts.
        seed: Seed of the resampling.

    Examples:
        >>> from truegrade.goodhart import synthetic_pool
        >>> pool = synthetic_pool(prompts=200, pool_size=64, noise="student_t", seed=0)
        >>> result = overoptimization(pool.proxy, pool.gold, pool.groups, n_resamples=200)
        >>> 6 <= result.peak.n <= 23, result.peak.overoptimized
        (True, True)
    """
    sizes_probe = best_of_n(proxy, gold, groups, [1])
    pool_sizes = sizes_probe.pool_sizes
    if ns is None:
        grid = default_ns(int(np.median(pool_sizes)))
    else:
        grid = sorted({1, *(int(n) for n in ns)})
        if grid[0] < 1:
            raise ValueError("every n must be >= 1")
    too_big = [n for n in grid if n > pool_sizes.max()]
    if too_big:
        raise ValueError(
            f"n = {too_big[0]} exceeds the largest pool ({int(pool_sizes.max())} samples)"
        )
    if len(grid) < 3:
        raise ValueError("the curves need at least 3 values of n; pools of >= 3 samples")
    est = best_of_n(proxy, gold, groups, grid)
    boot = _bootstrap_curves(est, n_resamples, seed)
    k = len(grid)
    kl = bon_kl(est.ns)
    eligible = est.eligible
    low, high = boot.interval(confidence)
    se = boot.se()

    def estimate(m: int) -> Estimate:
        return Estimate(
            float(boot.point[m]),
            float(se[m]),
            float(low[m]),
            float(high[m]),
            int(eligible[:, m % k].sum()),
            int(eligible[:, m % k].sum()),
            f"cluster bootstrap over prompts, percentile ({n_resamples} resamples)",
            confidence,
        )

    points = [
        CurvePoint(
            n=int(n),
            kl=float(kl[j]),
            prompts=int(eligible[:, j].sum()),
            prompts_excluded=int((~eligible[:, j]).sum()),
            proxy=estimate(j),
            gold=estimate(k + j),
            gap=estimate(2 * k + j),
        )
        for j, n in enumerate(est.ns)
    ]
    fits: dict[str, dict[str, FitBands]] = {
        column: {
            form: _fit_with_bands(
                kl, boot.point[off : off + k], boot.replicates[:, off : off + k], form, confidence
            )
            for form in FORMS
        }
        for column, off in (("gold", k), ("proxy", 0))
    }
    notes = [KL_NOTE]
    notes += [
        f"n = {p.n}: {p.prompts_excluded} of {est.pool_sizes.size} prompts have fewer than "
        f"{p.n} samples and are left out of this point"
        for p in points
        if p.prompts_excluded
    ]
    return Overoptimization(
        points=points,
        fits=fits,
        peak=_peak(points, boot, k, confidence),
        samples=int(est.pool_sizes.sum()),
        prompts=int(est.pool_sizes.size),
        pool_sizes={
            "min": int(est.pool_sizes.min()),
            "median": float(np.median(est.pool_sizes)),
            "max": int(est.pool_sizes.max()),
        },
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        notes=notes,
    )


def _bootstrap_curves(est: PromptEstimates, n_resamples: int, seed: int) -> BootstrapResult:
    """Resample prompts; statistics are ``[proxy(n)..., gold(n)..., gap(n)...]``."""
    mask = est.eligible.astype(np.float64)
    k = est.ns.size
    columns = np.hstack([np.nan_to_num(est.proxy), np.nan_to_num(est.gold), mask])
    totals = cluster_totals(np.arange(mask.shape[0]), mask.shape[0], columns)

    def curves(t: NDArray[np.float64]) -> NDArray[np.float64]:
        count = t[:, 2 * k :]
        proxy, gold = t[:, :k] / count, t[:, k : 2 * k] / count
        return np.hstack([proxy, gold, proxy - gold])

    return cluster_bootstrap(totals, curves, n_resamples=n_resamples, seed=seed)


def _percentiles(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    return (float(lo), float(hi))


def _fit_with_bands(
    kl: NDArray[np.float64],
    curve: NDArray[np.float64],
    replicates: NDArray[np.float64],
    form: str,
    confidence: float,
) -> FitBands:
    # both forms pass through the origin: rewards are taken relative to n = 1 (the base policy)
    fit = fit_gold_curve(kl, curve - curve[0], form)
    d = np.sqrt(kl)
    coefficients = fit_coefficients(d, replicates - replicates[:, :1], form)
    peaks = peak_d(coefficients[:, 0], coefficients[:, 1], form)
    has_peak = np.isfinite(peaks)
    share = float(has_peak.mean())
    peak_kl_ci = peak_n_ci = None
    if share >= 0.5:
        peak_kl_ci = _percentiles(peaks[has_peak] ** 2, confidence)
        if form == "bon":
            peak_n_ci = (bon_n_for_kl(peak_kl_ci[0]), bon_n_for_kl(peak_kl_ci[1]))
    return FitBands(
        fit=fit,
        alpha_ci=_percentiles(coefficients[:, 0], confidence),
        beta_ci=_percentiles(coefficients[:, 1], confidence),
        peak_share=share,
        peak_kl_ci=peak_kl_ci,
        peak_n_ci=peak_n_ci,
    )


def _peak(points: list[CurvePoint], boot: BootstrapResult, k: int, confidence: float) -> Peak:
    gold_point = boot.point[k : 2 * k]
    gold_reps = boot.replicates[:, k : 2 * k]
    best = int(np.argmax(gold_point))
    ns = np.array([p.n for p in points], dtype=np.float64)
    # the arg-max of each resampled curve (resamples whose curve is undefined are skipped)
    valid = np.all(np.isfinite(gold_reps), axis=1)
    argmax_n = ns[np.argmax(gold_reps[valid], axis=1)] if valid.any() else np.array([np.nan])
    decline_reps = gold_reps[:, best] - gold_reps[:, -1]
    decline_lo, decline_hi = _percentiles(decline_reps, confidence)
    finite = decline_reps[np.isfinite(decline_reps)]
    decline = Estimate(
        estimate=float(gold_point[best] - gold_point[-1]),
        se=float(np.std(finite, ddof=1)) if finite.size > 1 else math.nan,
        ci_low=decline_lo,
        ci_high=decline_hi,
        n=points[-1].prompts,
        clusters=points[-1].prompts,
        method=f"cluster bootstrap over prompts, percentile ({boot.n_resamples} resamples)",
        confidence=confidence,
    )
    at_edge = best == k - 1
    return Peak(
        n=points[best].n,
        kl=points[best].kl,
        gold=float(gold_point[best]),
        n_ci=_percentiles(argmax_n, confidence),
        decline=decline,
        overoptimized=bool(not at_edge and decline.ci_low > 0),
        at_edge=at_edge,
    )
