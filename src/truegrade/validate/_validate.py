"""Validation: does the grader agree with people (or gold verdicts) who know?

The number that matters most for RL is the **false pass rate**: of the responses the label says
are wrong, the share the grader passes. That is the direction an optimizer exploits. It is
reported with the false fail rate, accuracy, Cohen's kappa and (for graders that give scores)
AUROC, each with a confidence interval clustered on ``group`` (the prompt), because responses to
the same prompt are not independent evidence. Items the grader could not grade are counted
separately, never silently treated as fails. A grade that takes no side (``abstained``: a pairwise
judge's tie or order-dependent verdict) is neither: it never agrees with a label, so a judge that
abstains is never credited for the pairs whose label prefers the other response, and its rate is
reported.

Pure analysis: it takes samples and grades, and returns a report. Reading files and printing
tables are the command line's job.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.core import Flag, Grade, Sample
from truegrade.stats import Estimate, auroc, cohen_kappa, proportion_ci

__all__ = [
    "Confusion",
    "Disagreement",
    "Metric",
    "SliceReport",
    "ValidationReport",
    "field_value",
    "label_verdict",
    "validate_grades",
]


class Metric(BaseModel):
    """An estimate with its interval (None where it is undefined for this data)."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    clusters: int
    method: str

    @classmethod
    def of(cls, estimate: Estimate) -> Metric:
        def clean(value: float) -> float | None:
            return None if math.isnan(value) else value

        return cls(
            estimate=clean(estimate.estimate),
            ci_low=clean(estimate.ci_low),
            ci_high=clean(estimate.ci_high),
            n=estimate.n,
            clusters=estimate.clusters,
            method=estimate.method,
        )


class Confusion(BaseModel):
    """Grader verdict against label: ``true_pass`` = both pass, ``false_pass`` = the grader
    passes what the label fails, and so on."""

    true_pass: int
    false_pass: int
    false_fail: int
    true_fail: int
    abstained: int = Field(0, description="Graded items where the grader took no side.")


class Disagreement(BaseModel):
    """An item where the grader and the label disagree."""

    id: str
    label: float | bool
    passed: bool | None = Field(description="The grader's verdict; None: it took no side.")
    score: float
    flags: list[str] = Field(default_factory=list)
    explanation: str = ""
    kind: str = Field(description="false_pass, false_fail or abstained")


class SliceReport(BaseModel):
    """The metrics on one slice of the data (or on all of it)."""

    items: int
    graded: int
    grader_errors: int
    confusion: Confusion
    false_pass_rate: Metric
    false_fail_rate: Metric
    accuracy: Metric
    kappa: Metric
    auroc: Metric | None = None
    grader_pass_rate: Metric
    label_pass_rate: Metric
    abstention_rate: Metric | None = Field(
        None, description="Share of graded items where the grader took no side (each a miss)."
    )


class ValidationReport(BaseModel):
    """Everything ``truegrade validate`` measured. ``schema_version`` changes with meaning."""

    schema_version: int = 2
    grader: dict[str, Any] | str
    threshold: float = Field(
        description="Scores above it count as a pass when a grade has no passed verdict."
    )
    label_threshold: float = Field(description="Numeric labels at or above it count as a pass.")
    overall: SliceReport
    slices: dict[str, dict[str, SliceReport]] = Field(default_factory=dict)
    disagreements: list[Disagreement] = Field(default_factory=list)
    disagreements_total: int = Field(
        0, description="Disagreeing items in all; the list holds all of them unless capped."
    )
    unlabelled: int = Field(0, description="Rows without a label (left out).")


def label_verdict(label: bool | float, label_threshold: float) -> bool:
    """A label as pass/fail: booleans as they are, numbers at or above the threshold pass."""
    if isinstance(label, bool):
        return label
    return float(label) >= label_threshold


def _label(sample: Sample) -> bool | float:
    if sample.label is None:
        raise ValueError(f"sample {sample.key} has no label")
    return sample.label


def _grader_verdict(grade: Grade, threshold: float) -> bool | None:
    """Pass or fail, or None when the grade took no side (``Flag.ABSTAINED``)."""
    if Flag.ABSTAINED in grade.flags:
        return None
    return bool(grade.passed) if grade.passed is not None else grade.score > threshold


_KINDS = {None: "abstained", True: "false_pass", False: "false_fail"}


def _category(verdict: bool | None) -> bool | str:
    """A verdict as a rater's category: pass, fail, or a third one for an abstention."""
    return "abstained" if verdict is None else verdict


def _slice(
    samples: Sequence[Sample],
    grades: Sequence[Grade],
    threshold: float,
    label_threshold: float,
) -> SliceReport:
    graded = [(s, g) for s, g in zip(samples, grades, strict=True) if g.error is None]
    truth = [label_verdict(_label(s), label_threshold) for s, _ in graded]
    verdict = [_grader_verdict(g, threshold) for _, g in graded]
    clusters: list[Hashable] = [
        s.group if s.group is not None else f"id:{s.key}" for s, _ in graded
    ]
    pairs = list(zip(truth, verdict, clusters, strict=True))
    # an abstention (None) is in no cell: it is neither a pass nor a fail that agrees
    confusion = Confusion(
        true_pass=sum(1 for t, v, _ in pairs if t and v is True),
        false_pass=sum(1 for t, v, _ in pairs if not t and v is True),
        false_fail=sum(1 for t, v, _ in pairs if t and v is False),
        true_fail=sum(1 for t, v, _ in pairs if not t and v is False),
        abstained=sum(1 for _, v, _ in pairs if v is None),
    )
    wrong = [(v is True, c) for t, v, c in pairs if not t]
    right = [(v is not True, c) for t, v, c in pairs if t]
    scores = [g.score for _, g in graded]
    continuous = len(set(scores)) > 2
    return SliceReport(
        items=len(samples),
        graded=len(graded),
        grader_errors=len(samples) - len(graded),
        confusion=confusion,
        false_pass_rate=Metric.of(proportion_ci([v for v, _ in wrong], [c for _, c in wrong])),
        false_fail_rate=Metric.of(proportion_ci([v for v, _ in right], [c for _, c in right])),
        accuracy=Metric.of(proportion_ci([t == v for t, v, _ in pairs], clusters)),
        kappa=Metric.of(cohen_kappa(truth, [_category(v) for v in verdict], clusters)),
        auroc=Metric.of(auroc(scores, truth, clusters))
        if continuous and len(set(truth)) == 2
        else None,
        grader_pass_rate=Metric.of(proportion_ci([v is True for v in verdict], clusters)),
        label_pass_rate=Metric.of(proportion_ci(truth, clusters)),
        abstention_rate=Metric.of(proportion_ci([v is None for v in verdict], clusters)),
    )


def field_value(sample: Sample, path: str) -> str:
    """A dotted field of a sample as text, for slicing (``metadata.subject``)."""
    value: Any = sample.model_dump()
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return "(missing)"
        value = value[part]
    return str(value)


def validate_grades(
    samples: Sequence[Sample],
    grades: Sequence[Grade],
    *,
    grader: dict[str, Any] | str = "",
    threshold: float = 0.5,
    label_threshold: float = 0.5,
    by: Sequence[str] = (),
    max_disagreements: int | None = None,
) -> ValidationReport:
    """Compare grades with labels (rows without a label are left out and counted).

    Args:
        samples: The labelled samples.
        grades: One grade per sample, in order.
        grader: The grader's spec, recorded in the report.
        threshold: When a grade has no ``passed``, a score above this is a pass.
        label_threshold: Numeric labels at or above this are passes.
        by: Dotted fields to slice by, e.g. ``metadata.subject``.
        max_disagreements: List at most this many disagreeing items (None: all); the report
            counts them all either way.
    """
    if len(samples) != len(grades):
        raise ValueError(f"{len(grades)} grades for {len(samples)} samples")
    labelled = [(s, g) for s, g in zip(samples, grades, strict=True) if s.label is not None]
    items = [s for s, _ in labelled]
    marks = [g for _, g in labelled]
    overall = _slice(items, marks, threshold, label_threshold)
    slices: dict[str, dict[str, SliceReport]] = {}
    for path in by:
        groups: dict[str, list[int]] = {}
        for i, s in enumerate(items):
            groups.setdefault(field_value(s, path), []).append(i)
        slices[path] = {
            value: _slice(
                [items[i] for i in idx], [marks[i] for i in idx], threshold, label_threshold
            )
            for value, idx in sorted(groups.items())
        }
    disagreements: list[Disagreement] = []
    total = 0
    for s, g in labelled:
        if g.error is not None or s.label is None:
            continue
        truth = label_verdict(s.label, label_threshold)
        verdict = _grader_verdict(g, threshold)
        if truth == verdict:
            continue
        total += 1
        if max_disagreements is None or len(disagreements) < max_disagreements:
            disagreements.append(
                Disagreement(
                    id=s.key,
                    label=s.label,
                    passed=verdict,
                    score=g.score,
                    flags=g.flags,
                    explanation=g.explanation[:300],
                    kind=_KINDS[verdict],
                )
            )
    return ValidationReport(
        grader=grader,
        threshold=threshold,
        label_threshold=label_threshold,
        overall=overall,
        slices=slices,
        disagreements=disagreements,
        disagreements_total=total,
        unlabelled=len(samples) - len(labelled),
    )
