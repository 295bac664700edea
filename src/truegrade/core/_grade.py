"""``Grade``: the verdict on one sample, with the reasons behind it.

A grade always says why. ``flags`` are machine-readable reasons (``hedged``, ``timeout``...),
``explanation`` is the human-readable one, and ``error`` is set when the grader could not grade at
all, so a broken grader never passes itself off as a zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["Flag", "Grade"]


class Flag:
    """Names of the flags the engine and the built-in graders raise (constants, not an enum, so
    user graders can add their own strings)."""

    TIMEOUT = "timeout"
    """The item ran past its deadline and its worker was killed."""
    STARVED = "starved"
    """The item, timed in CPU time, reached its wall-clock backstop having used less CPU time than
    its budget (an overloaded machine, or a wait): it was not graded."""
    CRASHED = "crashed"
    """The worker died while grading the item (segfault, killed by the OS...)."""
    MEMORY = "memory_limit"
    """The item exhausted the worker's memory limit."""
    GRADER_EXCEPTION = "grader_exception"
    """The grading code raised; ``error`` has the exception."""
    NO_RESPONSE = "no_response"
    """The sample has no response to grade."""
    NO_REFERENCE = "no_reference"
    """The grader needs a reference and the sample has none."""
    RESPONSE_TOO_LONG = "response_too_long"
    """The response is over the grader's ``max_response_chars``; rejected unread."""
    NO_ANSWER = "no_answer"
    """No final answer could be extracted."""
    HEDGED = "hedged"
    """Several different final answers were given."""
    ABSTAINED = "abstained"
    """The grader took no side: a pairwise judge's tie, its two orders disagreeing, a split jury.
    Its pass/fail is a fail, but ``validate`` never counts it as agreeing with a fail label."""
    NOT_GRADABLE = "not_gradable"
    """A reward function returned None ("not applicable")."""
    INVALID_SCORE = "invalid_score"
    """A reward function returned NaN, infinity or a non-number."""
    GATE_FAILED = "gate_failed"
    """A composition gate failed and zeroed the score."""
    EXACT_MATCH = "exact_match"
    """The answer equals the reference after the configured normalisation."""
    BAD_ROW = "bad_row"
    """The row itself cannot be read (a field of the wrong type, a preset it does not fit)."""
    BAD_REFERENCE = "bad_reference"
    """The row's reference cannot be used as one (unreadable key, prose, a broken test spec)."""


class Grade(BaseModel):
    """The verdict on one sample.

    Attributes:
        score: The reward, a finite float (0.0 when the grader could not grade: see ``error``).
        passed: The binary verdict, or ``None`` when the grader gives only a score or could not
            grade.
        subscores: Named parts of the score (composition parts, per-test results...).
        flags: Machine-readable reasons, see ``Flag``.
        explanation: A short human-readable reason.
        error: ``None``, or why the grader could not grade this sample.
        latency_ms: Time spent grading this sample.
    """

    model_config = ConfigDict(extra="forbid")

    score: float = 0.0
    passed: bool | None = None
    subscores: dict[str, float] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)
    explanation: str = ""
    error: str | None = None
    latency_ms: float = 0.0

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"score must be finite, got {value!r}")
        return value

    @classmethod
    def failure(cls, error: str, *flags: str, latency_ms: float = 0.0) -> Grade:
        """A grade for a sample that could not be graded (score 0, ``passed`` unknown)."""
        return cls(score=0.0, passed=None, error=error, flags=list(flags), latency_ms=latency_ms)

    @classmethod
    def reject(cls, explanation: str, *flags: str, latency_ms: float = 0.0) -> Grade:
        """A definite fail: the response was read and is wrong or unacceptable."""
        return cls(
            score=0.0,
            passed=False,
            explanation=explanation,
            flags=list(flags),
            latency_ms=latency_ms,
        )

    @property
    def ok(self) -> bool:
        """True when the grader produced a verdict (``error`` is None)."""
        return self.error is None

    def record(self, sample_id: str | int) -> dict[str, Any]:
        """The results-file row for this grade: ``id`` first, then every field; a row that
        could not be graded has ``"score": null`` beside its ``error``, so no output file ever
        shows it as a 0 (the mean of the column would be wrong)."""
        row = {"id": sample_id, **self.model_dump()}
        if self.error is not None:
            row["score"] = None
        return row

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Grade:
        """The grade of a results-file row (``record``'s inverse; unknown fields ignored)."""
        fields = {k: v for k, v in record.items() if k in cls.model_fields}
        if fields.get("score") is None and fields.get("error") is not None:
            fields.pop("score", None)
        return cls.model_validate(fields)
