"""``aggregate_rubric_scores``: a rubric eval's headline number, as HealthBench reports it.

Per example, a rubric score is unclipped (negative criteria can take it below 0). The overall
score is the mean of the example scores clipped to [0, 1], with a bootstrap interval of that
clipped mean (resampling prompts when rows share one); each tag gets the same treatment over the
examples whose rubric has it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from truegrade.stats import Estimate, bootstrap_mean

__all__ = ["RubricSummary", "aggregate_rubric_scores", "clipped_mean"]


def clipped_mean(
    scores: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """The mean of ``scores`` clipped to [0, 1], with the bootstrap interval clipped alike.

    Examples:
        >>> round(clipped_mean([1.0, -0.5, 0.2], n_resamples=200).estimate, 4)
        0.2333
        >>> clipped_mean([-1.0, -0.5], n_resamples=200).estimate
        0.0
    """
    raw = bootstrap_mean(scores, clusters, n_resamples=n_resamples, seed=seed)

    def clip(value: float) -> float:
        return float(np.clip(value, 0.0, 1.0)) if value == value else value

    return Estimate(
        clip(raw.estimate),
        raw.se,
        clip(raw.ci_low),
        clip(raw.ci_high),
        raw.n,
        raw.clusters,
        raw.method + ", clipped to [0, 1]",
        raw.confidence,
    )


@dataclass
class RubricSummary:
    """The overall score and one per tag.

    Attributes:
        overall: Clipped mean over examples.
        tags: Per ``tag:...`` subscore, the clipped mean over the examples that have it.
        errors: Examples that could not be graded (left out, and counted here).
    """

    overall: Estimate
    tags: dict[str, Estimate] = field(default_factory=dict)
    errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "overall": self.overall.to_dict(),
            "tags": {k: v.to_dict() for k, v in self.tags.items()},
            "errors": self.errors,
        }


def aggregate_rubric_scores(
    records: Sequence[dict[str, Any]],
    *,
    clusters: Sequence[Hashable] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RubricSummary:
    """Summarise rubric grades (``Grade.record`` dicts, as ``truegrade grade`` writes them).

    Records with an ``error`` are counted, not scored. ``clusters`` (one per record) groups
    rows of one prompt for the interval.
    """
    kept = [k for k, r in enumerate(records) if not r.get("error")]
    groups = [clusters[k] for k in kept] if clusters is not None else None
    overall = clipped_mean(
        [float(records[k]["score"]) for k in kept], groups, n_resamples=n_resamples, seed=seed
    )
    tag_rows: dict[str, list[int]] = {}
    for k in kept:
        for key in records[k].get("subscores") or {}:
            if key.startswith("tag:"):
                tag_rows.setdefault(key.removeprefix("tag:"), []).append(k)
    tags = {
        tag: clipped_mean(
            [float(records[k]["subscores"][f"tag:{tag}"]) for k in idx],
            [clusters[k] for k in idx] if clusters is not None else None,
            n_resamples=n_resamples,
            seed=seed,
        )
        for tag, idx in sorted(tag_rows.items())
    }
    return RubricSummary(overall, tags, errors=len(records) - len(kept))
