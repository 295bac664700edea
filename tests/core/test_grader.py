from __future__ import annotations

import asyncio

from truegrade.core import (
    BaseGrader,
    DataError,
    Flag,
    Grade,
    Grader,
    Sample,
    grade_rows,
    run_grader,
    run_grader_async,
)


class Echo(BaseGrader):
    kind = "echo"

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        return [Grade(score=1.0, passed=s.response_text == s.reference) for s in samples]


class Fragile:
    """Raises for the whole batch when any sample says 'boom'."""

    def grade_batch(self, samples):
        if any(
            s["response"] == "boom" if isinstance(s, dict) else s.response == "boom"
            for s in samples
        ):
            raise RuntimeError("boom")
        return [Grade(score=0.5) for _ in samples]


class WrongLength:
    def grade_batch(self, samples):
        return [Grade(score=1.0)]


def test_protocol_is_structural():
    assert isinstance(Echo(), Grader)
    assert isinstance(Fragile(), Grader)
    assert not isinstance(object(), Grader)


def test_base_grader_prechecks_are_clear_failures():
    g = Echo()
    grades = g.grade_batch(
        [
            {"id": 1, "response": "a", "reference": "a"},
            {"id": 2, "reference": "a"},
            {"id": 3, "response": "a"},
            {"id": 4, "response": "x" * 2_000_000, "reference": "a"},
        ]
    )
    assert grades[0].passed is True
    assert grades[1].flags == [Flag.NO_RESPONSE] and grades[1].error
    assert grades[2].flags == [Flag.NO_REFERENCE] and "'echo' grader needs a reference" in (
        grades[2].error or ""
    )
    assert grades[3].flags == [Flag.RESPONSE_TOO_LONG] and grades[3].passed is False
    assert grades[3].error is None


def test_grade_is_sugar_and_async_matches_sync():
    g = Echo()
    row = {"id": 1, "response": "a", "reference": "a"}
    assert g.grade(row) == g.grade_batch([row])[0]
    assert asyncio.run(g.agrade_batch([row])) == g.grade_batch([row])


def test_run_grader_isolates_the_sample_that_breaks_a_batch():
    rows = [{"id": i, "response": r} for i, r in enumerate(["a", "boom", "c"])]
    grades = run_grader(Fragile(), rows)
    assert [g.score for g in grades] == [0.5, 0.0, 0.5]
    assert grades[1].flags == [Flag.GRADER_EXCEPTION]
    assert "RuntimeError: boom" in (grades[1].error or "")


def test_run_grader_survives_a_grader_that_returns_the_wrong_count():
    grades = run_grader(WrongLength(), [{"id": 1, "response": "a"}, {"id": 2, "response": "b"}])
    assert [g.score for g in grades] == [1.0, 1.0]  # regraded one by one, each call returns one


def test_run_grader_async_uses_the_async_path():
    rows = [{"id": 1, "response": "a", "reference": "b"}]
    assert asyncio.run(run_grader_async(Echo(), rows))[0].passed is False
    assert asyncio.run(run_grader_async(Fragile(), rows))[0].score == 0.5


def test_grade_rows_gives_an_unreadable_row_its_own_error_and_grades_the_rest():
    def read(row, i):
        if row is None:
            raise DataError("not a row")
        return Sample(id=i, response=row, reference="a")

    grades = grade_rows(Echo(), ["a", None, "b"], read)
    assert [g.passed for g in grades] == [True, None, False]
    assert grades[1].error == "row 1: not a row" and grades[1].flags == ["bad_row"]
