from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from truegrade.core import Grade


def test_failure_and_reject_are_different_things():
    failure = Grade.failure("broke", "timeout")
    assert failure.error == "broke" and failure.passed is None and not failure.ok
    reject = Grade.reject("wrong", "hedged")
    assert reject.error is None and reject.passed is False and reject.ok


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_scores_must_be_finite(bad):
    with pytest.raises(ValidationError, match="finite"):
        Grade(score=bad)


def test_record_puts_the_id_first():
    record = Grade(score=1.0, passed=True).record("q7")
    assert next(iter(record)) == "id"
    assert set(record) == {
        "id",
        "score",
        "passed",
        "subscores",
        "flags",
        "explanation",
        "error",
        "latency_ms",
    }


def test_a_row_that_could_not_be_graded_is_written_with_a_null_score_never_a_0():
    failed = Grade.failure("the judge timed out", "timeout")
    record = failed.record("q8")
    assert record["score"] is None and record["error"] == "the judge timed out"
    assert Grade.from_record(record) == failed  # read back as the grade it was
    graded = Grade(score=0.0, passed=False).record("q9")
    assert graded["score"] == 0.0  # a real 0 stays a 0
    assert Grade.from_record({**graded, "unknown": 1}) == Grade(score=0.0, passed=False)
    with pytest.raises(ValidationError):  # no error: a missing score is not made up
        Grade.from_record({"id": "q", "score": None})


def test_unknown_fields_are_refused():
    with pytest.raises(ValidationError):
        Grade.model_validate({"score": 1.0, "verdict": "yes"})
