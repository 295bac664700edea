"""``compare: evalplus``: an answer judged as EvalPlus's evaluator judges it."""

from __future__ import annotations

import math

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._evalplus import evalplus_match, evalplus_tolerances


@pytest.mark.parametrize(
    ("answer", "expected", "atol", "passes"),
    [
        (0, False, 0.0, True),  # Python's ==: 0 == False
        (1.0, 1, 0.0, True),
        ([1, 2], (1, 2), 0.0, False),  # a list is not a tuple, for == too
        (0.1 + 0.2, 0.3, 0.0, False),  # no tolerance where the row has none
        (0.1 + 0.2, 0.3, 1e-6, True),
        (3, 3.5, 1.0, False),  # past ==, one type: int is not float
        ([1.0, 2.0000001], [1.0, 2.0], 1e-6, True),
        ([1.0], [1.0, 2.0], 1e-6, False),
        ([[1.0, 2.0]], [[1.0, 2.0000001]], 1e-6, True),  # nested: numpy reads it as an array
        (["a"], ["b"], 1e-6, False),  # not numbers: allclose fails
        (math.nan, math.nan, 1e-6, False),  # NaN is close to nothing
        (math.inf, math.inf, 1e-6, True),
        (-math.inf, math.inf, 1e-6, False),
        (1 + 1e-9j, 1 + 0j, 1e-6, True),
        (10**400, 1.5, 1e-6, False),  # never an OverflowError: a wrong answer
        (10**400, 10**400 + 1, 1e-6, False),
        (None, None, 0.0, True),
        (None, 0, 1e-6, False),
    ],
)
def test_an_answer_meets_the_reference_as_evalplus_has_it(answer, expected, atol, passes):
    assert evalplus_match(answer, expected, atol) is passes


def test_a_row_without_atol_gets_one_from_its_first_float_answer_in_each_group():
    expected = [1, 2, 2.5, 3, 4, 5.5, 6]
    assert evalplus_tolerances(expected, 0.0, [4]) == [0, 0, 1e-6, 1e-6, 0, 1e-6, 1e-6]
    assert evalplus_tolerances(expected, 1e-3, [4]) == [1e-3] * 7  # the row's own, throughout
    assert evalplus_tolerances([[1.0, 2.0], [1.0, 2]], 0.0, []) == [1e-6, 1e-6]
    assert evalplus_tolerances([[], [[1.0]]], 0.0, []) == [0, 0]  # only flat lists of floats


def test_the_presets_rows_are_judged_by_it():
    grader = CodeGrader.from_options({})
    reference = "def f(n):\n    return n > 2\n"
    spec = {
        "entry_point": "f",
        "cases": [{"args": [n]} for n in (1, 2, 3)],
        "expected_from": reference,
        "compare": "evalplus",
        "abs_tol": 0.0,
    }
    zero_for_false = "def f(n):\n    return 1 if n > 2 else 0\n"
    assert grader.grade({"response": zero_for_false, "reference": spec}).passed
    strict = {**spec, "compare": "equal"}
    assert grader.grade({"response": zero_for_false, "reference": strict}).passed is False
