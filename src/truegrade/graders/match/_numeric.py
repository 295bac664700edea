"""``numeric``: the response's final answer is the reference number.

Exact by default (rational arithmetic, no float error); absolute and relative tolerances apply
only when configured and are reported by name. No percent rescaling: ``5`` never matches ``0.05``
or ``500``; ``50%`` matches ``50%`` and, when the reference is ``50%``, a bare ``50``. A GSM8K
answer as the reference is the number its final ``####`` line states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from pydantic import Field, field_validator

from truegrade.core import Flag, gsm8k_final_answer
from truegrade.graders._extract import check_pattern, final_answers, pattern_matches
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    verdict,
)
from truegrade.graders._numbers import ParsedNumber, parse_number, within_tolerance

__all__ = ["NumericGrader", "NumericOptions"]


class NumericOptions(GraderOptions):
    """Options of ``numeric``.

    Attributes:
        abs_tol: Accept ``|answer - reference| <= abs_tol`` (default 0: off).
        rel_tol: Accept ``|answer - reference| <= rel_tol * |reference|`` (default 0: off).
        extract: ``final_answer`` (boxed answers, ``Answer:`` lines, "the answer is ...", else the
            whole response) or a regular expression whose first group is the number.
    """

    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    extract: str = "final_answer"

    @field_validator("extract")
    @classmethod
    def _valid_pattern(cls, value: str) -> str:
        if value != "final_answer":
            check_pattern(value)
        return value


def _reference_number(reference: Any) -> ParsedNumber:
    if isinstance(reference, bool):
        return ParsedNumber(None, problem="not_a_number")
    if isinstance(reference, int):
        return ParsedNumber(Fraction(reference))
    if isinstance(reference, float):
        if not math.isfinite(reference):
            return ParsedNumber(None, problem="not_a_number")
        return ParsedNumber(Fraction(repr(reference)))
    text = str(reference)
    stated = gsm8k_final_answer(text)
    return parse_number(text if stated is None else stated)


@dataclass(frozen=True)
class _NumericKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    abs_tol: float
    rel_tol: float
    extract: str

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        target = _reference_number(reference)
        if target.value is None:
            return error_verdict(
                f"the reference {str(reference)[:60]!r} is not a number", "bad_reference"
            )
        if self.extract == "final_answer":
            found = final_answers(response)
            candidates = list(found.statements) or [response]
        else:
            candidates = pattern_matches(self.extract, response)
        if not candidates:
            return verdict(False, "no answer found", Flag.NO_ANSWER)
        parsed = [parse_number(c) for c in candidates]
        values = {(p.value, p.percent) for p in parsed if p.value is not None}
        if len(values) > 1:
            shown = ", ".join(repr(c.strip()[:30]) for c in candidates[:4])
            return verdict(False, f"{len(values)} different answers given: {shown}", Flag.HEDGED)
        if not values:
            problem = parsed[-1].problem or "not_a_number"
            flag = Flag.NO_ANSWER if problem == "not_a_number" else problem
            return verdict(
                False,
                f"the answer {candidates[-1].strip()[:60]!r} is not a number literal"
                if problem == "not_a_number"
                else "the answer's magnitude is out of the checkable range",
                flag,
            )
        if len(parsed) > len([p for p in parsed if p.value is not None]):
            return verdict(False, "one final answer is a number and another is not", Flag.HEDGED)
        value, percent = values.pop()
        assert value is not None
        if percent and not target.percent:
            return verdict(
                False, "the answer is a percentage and the reference is not", "percent_mismatch"
            )
        how = within_tolerance(value, target.value, abs_tol=self.abs_tol, rel_tol=self.rel_tol)
        if how is None:
            return verdict(False, f"{_show(value)} != {_show(target.value)}")
        flag = Flag.EXACT_MATCH if how == "equal" else f"within_{how}"
        return verdict(True, f"{_show(value)} matches ({how})", flag)


def _show(value: Fraction) -> str:
    return str(value) if value.denominator == 1 or len(str(value)) < 40 else f"{float(value):.6g}"


class NumericGrader(KernelGrader):
    """Exact (or explicitly tolerant) number comparison of the final answer.

    Examples:
        >>> g = NumericGrader.from_options({})
        >>> g.grade({"id": 1, "response": "so the answer is 10,000.", "reference": 10000}).passed
        True
    """

    kind = "numeric"
    family = "math"
    Options = NumericOptions
    default_execution = "inline"
    default_timeout_s = 5.0
    options: NumericOptions

    def _safe_execution(self) -> Literal["process", "inline"]:
        return "inline" if self.options.extract == "final_answer" else "process"

    def kernel(self) -> Kernel:
        o = self.options
        return _NumericKernel(o.abs_tol, o.rel_tol, o.extract)
