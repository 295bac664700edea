"""Answers built to fool or stall the trusted side: exceptions that iteration takes for "no more
items", numbers that only compare equal after rounding, and sets built to be slow to rebuild.
Each is a fail of the program with a flag, never a pass and never an error."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._harness import values_match
from truegrade.sandbox import PlainDataError, crowded, decode_value
from truegrade.sandbox._codec import MAX_COLLISIONS


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options(
        {"call_timeout_s": 5, "program_timeout_s": 30, "feedback": "full"}
    )


def _check_row(response: str, check: str) -> dict:
    return {"response": response, "reference": {"entry_point": "f", "check": check}}


def _cases_row(response: str, cases: list, **spec) -> dict:
    return {"response": response, "reference": {"entry_point": "f", "cases": cases, **spec}}


# -- exceptions that iteration takes for control flow ---------------------------------------------

ITERATING_CHECKS = {
    "all(map(...))": "def check(candidate):\n    assert all(map(candidate, [1, 2, 3]))\n",
    "not any(map(...))": "def check(candidate):\n    assert not any(map(candidate, [1, 2]))\n",
    "zip(map(...), ...)": (
        "def check(candidate):\n"
        "    for got, want in zip(map(candidate, [1, 2]), [2, 4]):\n"
        "        assert got == want\n"
        "    assert candidate(0) == 0 or True\n"
    ),
    "list(map(...))": "def check(candidate):\n    assert list(map(candidate, [1])) == [2] or 1\n",
}

RAISERS = {
    "StopIteration": "def f(x):\n    raise StopIteration\n",
    "StopAsyncIteration": "def f(x):\n    raise StopAsyncIteration\n",
    "a class of its own calling itself the builtin": (
        "class StopIteration(Exception):\n"
        "    pass\n"
        "StopIteration.__module__ = 'builtins'\n"
        "StopIteration.__qualname__ = 'StopIteration'\n"
        "def f(x):\n"
        "    raise StopIteration\n"
    ),
}


@pytest.mark.parametrize("check", list(ITERATING_CHECKS))
@pytest.mark.parametrize("raiser", list(RAISERS))
def test_a_program_that_only_raises_stop_iteration_fails_iterating_checks(grader, check, raiser):
    grade = grader.grade(_check_row(RAISERS[raiser], ITERATING_CHECKS[check]))
    assert grade.error is None
    assert grade.passed is False and grade.flags[0] == "exception", grade.explanation
    assert "CandidateError" in grade.explanation


def test_the_program_s_ordinary_exceptions_still_reach_the_check_as_themselves(grader):
    check = (
        "def check(candidate):\n"
        "    try:\n"
        "        candidate(-1)\n"
        "    except ValueError:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('no ValueError')\n"
        "    assert candidate(2) == 4\n"
    )
    honest = "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x * x\n"
    assert grader.grade(_check_row(honest, check)).passed


# -- numbers compared without rounding ------------------------------------------------------------


def test_an_int_expected_is_met_only_by_the_float_that_is_exactly_it():
    assert values_match(3.0, 3) and values_match(3, 3.0)
    assert not values_match(2.0**64, 2**64 + 1)  # float(2**64 + 1) rounds to 2.0**64
    assert values_match(2.0**64, 2**64)
    assert not values_match(1e308, 10**400)  # past any float: no OverflowError, a mismatch
    assert not values_match(float("inf"), 10**400)
    assert not values_match(float("nan"), 0)
    assert not values_match(2.0**64, 2**64 + 1, abs_tol=1e-6)  # the exact difference is 1
    assert values_match(2.0**64, 2**64 + 1, rel_tol=1e-9)  # within a tolerance that says so
    assert values_match(0.1 + 0.2, 0.3, abs_tol=1e-9) and not values_match(0.1 + 0.2, 0.3)


def test_rounded_and_overflowing_answers_are_fails_not_errors(grader):
    rows = [
        _cases_row("def f():\n    return 2.0 ** 64\n", [{"args": [], "expected": 2**64 + 1}]),
        _cases_row("def f():\n    return 1e308\n", [{"args": [], "expected": 10**400}]),
        _cases_row("def f():\n    return float('inf')\n", [{"args": [], "expected": 10**400}]),
        _cases_row("def f():\n    return 10 ** 400\n", [{"args": [], "expected": 10**400}]),
        _cases_row("def f():\n    return 6.0\n", [{"args": [], "expected": 6}]),
    ]
    grades = grader.grade_batch(rows)
    assert [g.error for g in grades] == [None] * 5
    assert [g.passed for g in grades] == [False, False, False, True, True]
    assert all(g.flags[0] == "wrong_answer" for g in grades[:3])


# -- sets built to be slow to rebuild -------------------------------------------------------------

_PRIME = 2**61 - 1  # ints hash to their value modulo this


def test_a_crowd_of_distinct_items_with_one_hash_is_refused_before_any_set_is_built():
    crowd = [5 + k * _PRIME for k in range(MAX_COLLISIONS + 1)]
    assert crowded(crowd) and not crowded(crowd[:-1])
    assert not crowded([7] * 10_000)  # repeats of one value are no crowd
    forged = {"s": [5 + k * _PRIME for k in range(40_000)]}
    with pytest.raises(PlainDataError, match="share one hash"):
        decode_value(forged)
    with pytest.raises(PlainDataError, match="share one hash"):
        decode_value({"d": [[5 + k * _PRIME, 0] for k in range(40_000)]})
    assert decode_value({"s": [1, 2, 3]}) == {1, 2, 3}


FORGER = """
import json, os, struct, sys

def f():
    frame = sys._getframe(1)
    while "answered" not in frame.f_locals:
        frame = frame.f_back
    crowd = [5 + k * (2**61 - 1) for k in range(40000)]
    record = json.dumps({"status": "ok", "value": {"s": crowd}, "call": frame.f_locals["answered"]})
    data = record.encode()
    os.write(4, struct.pack(">I", len(data)) + data)
    return 0
"""


def test_a_forged_record_carrying_a_crowded_set_is_a_fail(grader):
    """The program writes its own, correctly numbered, record on the response pipe: a set of
    40,000 ints with one hash, which took the harness 27-48 s of CPU to rebuild."""
    row = _cases_row(FORGER, [{"args": [], "expected": [1]}])
    grade = grader.grade(row)
    assert grade.error is None
    assert grade.passed is False and grade.flags[0] == "not_plain_data", grade.explanation
    assert "share one hash" in grade.explanation


def test_a_crowded_list_compared_as_a_set_is_not_plain_data(grader):
    program = "def f():\n    return [5 + k * (2**61 - 1) for k in range(20000)]\n"
    grade = grader.grade(_cases_row(program, [{"args": [], "expected": [5]}], compare="set"))
    assert grade.error is None
    assert grade.passed is False and grade.flags[0] == "not_plain_data"
