from __future__ import annotations

import pytest

from truegrade.core import Flag, load_grader


def grade(response, reference, **options):
    return load_grader("numeric", **options).grade(
        {"id": 1, "response": response, "reference": reference}
    )


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("42", 42),
        ("The answer is 42.", "42"),
        ("\\boxed{10{,}000}", 10000),
        ("Answer: 1/2", 0.5),
        ("#### 0.50", "1/2"),
        ("50", "50\\%"),
        ("50%", "50%"),
    ],
)
def test_true_equivalents_pass(response, reference):
    g = grade(response, reference)
    assert g.passed is True, g.explanation


@pytest.mark.parametrize(
    ("response", "reference", "flag"),
    [
        ("\\boxed{3} or \\boxed{5}", 5, Flag.HEDGED),
        ("Answer: 5\n\\boxed{3}", 5, Flag.HEDGED),
        ("\\boxed{5}\n\\boxed{x}", 5, Flag.HEDGED),
        ("10001", 10000, None),  # no tolerance by default
        ("500", 5, None),  # no percent rescaling
        ("0.05", 5, None),
        ("5%", 5, "percent_mismatch"),
        ("5, 3", 5, Flag.NO_ANSWER),  # trailing garbage is not truncated away
        ("5)(7", 5, Flag.NO_ANSWER),
        ("I don't know", 5, Flag.NO_ANSWER),
        ("1e999999999", 5, "out_of_range"),
    ],
)
def test_wrong_answers_fail_with_a_reason(response, reference, flag):
    g = grade(response, reference)
    assert g.passed is False
    if flag:
        assert flag in g.flags


def test_tolerances_only_when_configured_and_named():
    g = grade("10001", 10000, rel_tol=1e-4)
    assert g.passed is True and g.flags == ["within_rel_tol"]
    assert grade("5.05", 5, abs_tol=0.1).flags == ["within_abs_tol"]


def test_tiny_numbers_are_not_equal():
    assert grade("0.0000012", "0.000001").passed is False


def test_bad_reference_is_an_error_not_a_fail():
    for reference in ("five", "####", "He sold 5.\n####", float("nan"), {"a": 1}):
        g = grade("5", reference)
        assert g.error and g.passed is None and "bad_reference" in g.flags, reference


@pytest.mark.parametrize(
    ("response", "passed"),
    [("\\boxed{1000}", True), ("#### 1,000", True), ("25*40=<<25*40=1000>>1000\n#### 1000", True)]
    + [("#### 999", False), ("\\boxed{1000}\n#### 999", False)],
)
def test_a_gsm8k_answer_is_the_number_on_its_final_hashes_line(response, passed):
    key = "He earns 25*40=<<25*40=1000>>1,000 a week.\n#### 1,000"
    g = grade(response, key)
    assert g.error is None and g.passed is passed, (g.flags, g.explanation)
