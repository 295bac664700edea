"""Summaries of a run's grades: the numbers printed after ``truegrade grade``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from truegrade.stats._mean import MeanSE, mean_se

__all__ = ["GradeSummary", "summarize"]


@dataclass(frozen=True)
class GradeSummary:
    """What a batch of grades says, in aggregate.

    Attributes:
        rows: Number of graded rows.
        score: Mean score with its (clustered, when groups are known) standard error, over rows
            the grader could grade.
        passed: Rows with ``passed`` True.
        verdicts: Rows with a pass/fail verdict (``passed`` not None).
        errors: Rows the grader could not grade.
        flags: Count of each flag.
    """

    rows: int
    score: MeanSE
    passed: int
    verdicts: int
    errors: int
    flags: Counter[str] = field(default_factory=Counter)

    @property
    def pass_rate(self) -> float | None:
        """Share of verdicts that are passes, or None when the grader gives no verdicts."""
        return self.passed / self.verdicts if self.verdicts else None


def summarize(
    records: Sequence[dict[str, Any]], groups: Sequence[Hashable | None] | None = None
) -> GradeSummary:
    """Summarise result records (``Grade.record`` dicts), clustering by ``groups`` when given.

    Rows without a group form their own cluster.
    """
    scores: list[float] = []
    clusters: list[Hashable] = []
    flags: Counter[str] = Counter()
    passed = verdicts = errors = 0
    for i, record in enumerate(records):
        for flag in record.get("flags") or []:
            flags[flag] += 1
        if record.get("error") is not None:
            errors += 1
            continue
        scores.append(float(record.get("score", 0.0)))
        group = groups[i] if groups is not None else None
        clusters.append(("row", i) if group is None else ("group", group))
        if record.get("passed") is not None:
            verdicts += 1
            passed += bool(record["passed"])
    return GradeSummary(
        rows=len(records),
        score=mean_se(scores, clusters),
        passed=passed,
        verdicts=verdicts,
        errors=errors,
        flags=flags,
    )
