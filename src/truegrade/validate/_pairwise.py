"""Pairwise accuracy on preference data: does the grader score the chosen response higher?

Rows in the RewardBench shape (``prompt``, ``chosen``, ``rejected``, optionally a category such
as ``subset``) are graded twice, once per response. A pair is right when the chosen response
scores strictly higher; a tie counts one half (and is reported, since a grader that ties
everything would otherwise look like a coin). Intervals are Wilson intervals (they stay in
[0, 1] and do not collapse at 0 or 100%), widened for clustering on ``group`` when rows share
prompts; a grader error on either side of a pair leaves the pair out, counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.core import Grader, Sample, run_grader
from truegrade.stats import win_rate_ci
from truegrade.validate._validate import Metric, field_value

__all__ = ["PairwiseReport", "PairwiseSlice", "is_preference_row", "validate_pairwise"]


def is_preference_row(sample: Sample) -> bool:
    """The row carries a ``chosen`` and a ``rejected`` response."""
    return "chosen" in sample.metadata and "rejected" in sample.metadata


class PairwiseSlice(BaseModel):
    """Accuracy on one slice of the pairs."""

    pairs: int
    accuracy: Metric
    ties: int


class WrongPair(BaseModel):
    """A pair where the rejected response scored at least as high."""

    id: str
    chosen_score: float
    rejected_score: float


class PairwiseReport(BaseModel):
    """Everything ``truegrade validate`` measures on preference pairs."""

    schema_version: int = 1
    grader: dict[str, Any] | str
    pairs: int
    graded: int
    grader_errors: int
    accuracy: Metric
    ties: int
    mean_margin: float | None = Field(description="Mean of chosen minus rejected score.")
    slices: dict[str, dict[str, PairwiseSlice]] = Field(default_factory=dict)
    wrong: list[WrongPair] = Field(default_factory=list)


def _slice(outcomes: list[tuple[float, str]], ties: int) -> PairwiseSlice:
    return PairwiseSlice(
        pairs=len(outcomes),
        ties=ties,
        accuracy=Metric.of(win_rate_ci([o for o, _ in outcomes], [c for _, c in outcomes])),
    )


def validate_pairwise(
    grader: Grader,
    samples: Sequence[Sample],
    *,
    by: Sequence[str] = (),
    batch_size: int = 256,
    max_wrong: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> PairwiseReport:
    """Grade both sides of every preference pair and measure pairwise accuracy.

    Args:
        grader: Any grader; both responses of a pair are graded in the same batch.
        samples: Rows with ``chosen`` and ``rejected`` (others are left out).
        by: Fields to slice accuracy by, e.g. ``metadata.subset``.
        batch_size: Responses per call to the grader.
        max_wrong: Wrong (or tied) pairs to list at most.
        progress: Called as ``(graded, total)`` responses after each batch.
    """
    pairs = [s for s in samples if is_preference_row(s)]
    sides: list[Sample] = []
    for s in pairs:
        extra = {k: v for k, v in s.metadata.items() if k not in ("chosen", "rejected")}
        for side in ("chosen", "rejected"):
            sides.append(
                s.model_copy(
                    update={
                        "id": f"{s.key}::{side}",
                        "response": s.metadata[side],
                        "label": None,
                        "metadata": extra,
                    }
                )
            )
    grades = []
    for start in range(0, len(sides), batch_size):
        grades.extend(run_grader(grader, sides[start : start + batch_size]))
        if progress is not None:
            progress(len(grades), len(sides))
    outcomes: list[tuple[float, str]] = []
    kept: list[Sample] = []
    margins: list[float] = []
    wrong: list[WrongPair] = []
    errors = ties = 0
    for i, s in enumerate(pairs):
        chosen, rejected = grades[2 * i], grades[2 * i + 1]
        if chosen.error is not None or rejected.error is not None:
            errors += 1
            continue
        margin = chosen.score - rejected.score
        outcome = 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0
        ties += margin == 0
        outcomes.append((outcome, s.group if s.group is not None else s.key))
        kept.append(s)
        margins.append(margin)
        if margin <= 0 and len(wrong) < max_wrong:
            wrong.append(
                WrongPair(id=s.key, chosen_score=chosen.score, rejected_score=rejected.score)
            )
    slices: dict[str, dict[str, PairwiseSlice]] = {}
    for path in by:
        groups: dict[str, list[int]] = {}
        for j, s in enumerate(kept):
            groups.setdefault(field_value(s, path), []).append(j)
        slices[path] = {
            value: _slice([outcomes[j] for j in idx], sum(1 for j in idx if margins[j] == 0))
            for value, idx in sorted(groups.items())
        }
    return PairwiseReport(
        grader=getattr(grader, "spec", None) or repr(grader),
        pairs=len(pairs),
        graded=len(kept),
        grader_errors=errors,
        accuracy=_slice(outcomes, ties).accuracy,
        ties=ties,
        mean_margin=sum(margins) / len(margins) if margins else None,
        slices=slices,
        wrong=wrong,
    )
