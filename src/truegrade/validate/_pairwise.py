"""Pairwise accuracy on preference data: does the grader score the chosen response higher?

Rows in the RewardBench shape (``prompt``, ``chosen``, ``rejected``, optionally a category such
as ``subset``) are graded twice, once per response. A pair is right when the chosen response
scores strictly higher; equal scores count as the ``equal_scores`` rule says (by default a tie,
which earns nothing against a chosen response: a grader that ties everything must not look like
a coin; ``half`` gives the older half credit, ``wrong`` is RewardBench's and JudgeBench's rule).
The full agreement report (:func:`~truegrade.validate.pairwise_agreement`) rides along.
Intervals are Wilson intervals (they stay in
[0, 1] and do not collapse at 0 or 100%), widened for clustering on ``group`` when rows share
prompts; a grader error on either side of a pair leaves the pair out, counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.core import Grader, Sample, run_grader
from truegrade.validate._agreement import PairAgreement, PairRules, RecordedPair, pairwise_agreement
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

    schema_version: int = 2
    grader: dict[str, Any] | str
    rules: PairRules = Field(default_factory=PairRules)
    pairs: int
    graded: int
    grader_errors: int
    accuracy: Metric
    ties: int
    mean_margin: float | None = Field(description="Mean of chosen minus rejected score.")
    slices: dict[str, dict[str, PairwiseSlice]] = Field(default_factory=dict)
    wrong: list[WrongPair] = Field(default_factory=list)
    agreement: PairAgreement | None = Field(
        None, description="The full agreement report under the same rules."
    )


def validate_pairwise(
    grader: Grader,
    samples: Sequence[Sample],
    *,
    by: Sequence[str] = (),
    rules: PairRules | None = None,
    batch_size: int = 256,
    max_wrong: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> PairwiseReport:
    """Grade both sides of every preference pair and measure pairwise accuracy.

    Args:
        grader: Any grader; both responses of a pair are graded in the same batch.
        samples: Rows with ``chosen`` and ``rejected`` (others are left out).
        by: Fields to slice accuracy by, e.g. ``metadata.subset``.
        rules: How equal scores count (the other rules matter for recorded verdicts); default
            :class:`PairRules`, under which equal scores are a tie that earns nothing.
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
    rules = rules or PairRules()
    recorded: list[RecordedPair] = []
    margins: list[float] = []
    wrong: list[WrongPair] = []
    errors = 0
    for i, s in enumerate(pairs):
        chosen, rejected = grades[2 * i], grades[2 * i + 1]
        if chosen.error is not None or rejected.error is not None:
            errors += 1
            continue
        margin = chosen.score - rejected.score
        recorded.append(
            RecordedPair(
                id=s.key,
                label="A",
                scores=(chosen.score, rejected.score),
                group=s.group,
                fields={path: field_value(s, path) for path in by},
            )
        )
        margins.append(margin)
        if margin <= 0 and len(wrong) < max_wrong:
            wrong.append(
                WrongPair(id=s.key, chosen_score=chosen.score, rejected_score=rejected.score)
            )
    agreement = pairwise_agreement(recorded, rules, by=by)
    slices = {
        path: {
            value: PairwiseSlice(pairs=r.pairs, ties=r.equal_scores, accuracy=r.accuracy)
            for value, r in groups.items()
        }
        for path, groups in agreement.slices.items()
    }
    return PairwiseReport(
        grader=getattr(grader, "spec", None) or repr(grader),
        rules=rules,
        pairs=len(pairs),
        graded=len(recorded),
        grader_errors=errors,
        accuracy=agreement.accuracy,
        ties=agreement.equal_scores,
        mean_margin=sum(margins) / len(margins) if margins else None,
        slices=slices,
        wrong=wrong,
        agreement=agreement,
    )
