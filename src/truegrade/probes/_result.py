"""``ProbeResult``: what a bias probe measured, its interval, and the verdict at a threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from truegrade.stats import Estimate

__all__ = ["BIASED", "NOT_DETECTED", "NOT_MEASURED", "ProbeResult", "probe_verdict"]

BIASED = "biased"
NOT_DETECTED = "not detected"
NOT_MEASURED = "not measured"


def probe_verdict(estimate: Estimate, threshold: float) -> str:
    """``biased`` when the interval lies above zero *and* the estimate reaches ``threshold``.

    Both conditions, because each alone misleads: an interval above zero on thousands of items
    calls a negligible effect a bias, and an estimate above the threshold on a handful of items
    may be noise. Anything else is ``not detected`` (which is not "absent": read the interval's
    upper end for the largest bias the data leave possible).
    """
    if math.isnan(estimate.estimate) or math.isnan(estimate.ci_low):
        return NOT_MEASURED
    return BIASED if estimate.ci_low > 0 and estimate.estimate >= threshold else NOT_DETECTED


@dataclass(frozen=True)
class ProbeResult:
    """One bias probe's measurement.

    Attributes:
        probe: ``sycophancy`` or ``self_preference``.
        estimate: The bias, with its interval clustered on the probe item (see each probe for
            the units: a score shift toward the user's view, or an own-family preference rate
            minus 0.5).
        threshold: The smallest estimate the verdict calls a bias.
        verdict: ``biased`` (the interval lies above zero and the estimate reaches
            ``threshold``), ``not detected`` or ``not measured``.
        by_kind: The same measurement per probe kind (``belief``, ``pushback``, ``agree``) or
            per other family.
        items: Probe items used.
        comparisons: Paired comparisons behind the estimate.
        dropped: Comparisons left out because a grade had an error.
        details: Other numbers (the length coefficient, the unadjusted estimate, the judge's
            family...).
        notes: What could not be measured, and why.
    """

    probe: str
    estimate: Estimate
    threshold: float
    verdict: str
    by_kind: dict[str, Estimate] = field(default_factory=dict)
    items: int = 0
    comparisons: int = 0
    dropped: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (NaN becomes None)."""

        def plain(value: Any) -> Any:
            if isinstance(value, float) and math.isnan(value):
                return None
            return value

        return {
            "probe": self.probe,
            "estimate": self.estimate.to_dict(),
            "threshold": self.threshold,
            "verdict": self.verdict,
            "by_kind": {k: v.to_dict() for k, v in self.by_kind.items()},
            "items": self.items,
            "comparisons": self.comparisons,
            "dropped": self.dropped,
            "details": {k: plain(v) for k, v in self.details.items()},
            "notes": list(self.notes),
        }
