from __future__ import annotations

import pytest

from truegrade.core import AllOf, Flag, Gate, Grade, Sample, SpecError, WeightedSum, load_grader
from truegrade.core._grader import BaseGrader


class Fixed(BaseGrader):
    """Grades by a table: response -> (score, passed, error)."""

    requires_reference = False

    def __init__(self, name: str, table: dict[str, tuple[float, bool | None, str | None]]) -> None:
        super().__init__(name=name)
        self.table = table
        self.seen: list[str] = []

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        out = []
        for s in samples:
            self.seen.append(s.response_text)
            score, passed, error = self.table[s.response_text]
            out.append(
                Grade(
                    score=score,
                    passed=passed,
                    error=error,
                    flags=[self.name],
                    subscores={"inner": score},
                    latency_ms=1.0,
                )
            )
        return out


ROWS = [{"id": i, "response": r} for i, r in enumerate(["good", "bad", "err"])]


def test_gate_zeroes_and_skips_the_expensive_part():
    check = Fixed(
        "format",
        {
            "good": (1, True, None),
            "bad": (0, False, None),
            "err": (0, None, "format checker broke"),
        },
    )
    then = Fixed("correct", {"good": (0.8, True, None)})
    grades = Gate(check, then).grade_batch(ROWS)
    assert then.seen == ["good"]  # never asked about what failed the gate
    assert grades[0].score == 0.8 and grades[0].passed is True
    assert grades[0].subscores == {
        "format": 1,
        "format.inner": 1,
        "correct": 0.8,
        "correct.inner": 0.8,
    }
    assert grades[0].latency_ms == 2.0
    assert grades[1].score == 0 and grades[1].passed is False
    assert Flag.GATE_FAILED in grades[1].flags
    assert grades[2].error == "format: format checker broke" and grades[2].passed is None


def test_weighted_sum_normalises_and_reports_parts():
    a = Fixed("a", {"good": (1, True, None), "bad": (0, False, None), "err": (1, True, None)})
    b = Fixed("b", {"good": (0.5, None, None), "bad": (1, None, None), "err": (0, None, "b broke")})
    grades = WeightedSum([(a, 3), (b, 1)]).grade_batch(ROWS)
    assert grades[0].score == pytest.approx((3 * 1 + 0.5) / 4)
    assert grades[0].passed is None  # b gives no verdicts
    assert grades[1].score == pytest.approx(0.25)
    assert grades[2].error == "b: b broke" and grades[2].score == 0
    thresholded = WeightedSum([(a, 3), (b, 1)], pass_threshold=0.5).grade_batch(ROWS[:2])
    assert [g.passed for g in thresholded] == [True, False]
    raw = WeightedSum([(a, 2), (b, 2)], normalize=False).grade_batch(ROWS[:1])
    assert raw[0].score == 3.0


def test_all_of_names_failed_parts():
    a = Fixed("a", {"good": (1, True, None), "bad": (1, True, None)})
    b = Fixed("b", {"good": (1, True, None), "bad": (0, False, None)})
    grades = AllOf([a, b]).grade_batch(ROWS[:2])
    assert [g.passed for g in grades] == [True, False]
    assert grades[1].explanation == "failed: b"


def test_parts_need_distinct_names():
    with pytest.raises(SpecError, match="both named"):
        AllOf([Fixed("x", {}), Fixed("x", {})])


def test_weights_are_checked():
    with pytest.raises(SpecError, match="weight"):
        WeightedSum([(Fixed("x", {}), -1)])
    with pytest.raises(SpecError, match="sum to 0"):
        WeightedSum([(Fixed("x", {}), 0)])


def test_composition_from_a_spec_with_real_graders():
    grader = load_grader(
        {
            "type": "gate",
            "check": {
                "type": "regex",
                "pattern": "^Answer:",
                "name": "format",
                "execution": "inline",
            },
            "then": {
                "type": "weighted",
                "name": "quality",
                "parts": [
                    {"grader": "numeric", "weight": 0.9, "name": "correct"},
                    {
                        "grader": {"type": "regex", "pattern": "\\.$", "execution": "inline"},
                        "weight": 0.1,
                        "name": "period",
                    },
                ],
            },
        }
    )
    good, unformatted, wrong = grader.grade_batch(
        [
            {"id": 1, "response": "Answer: 12.", "reference": 12},
            {"id": 2, "response": "12", "reference": 12},
            {"id": 3, "response": "Answer: 13", "reference": 12},
        ]
    )
    assert good.score == pytest.approx(1.0) and good.subscores["quality.correct"] == 1.0
    assert unformatted.score == 0 and Flag.GATE_FAILED in unformatted.flags
    assert wrong.score == pytest.approx(0.0)
