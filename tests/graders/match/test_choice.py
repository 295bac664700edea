from __future__ import annotations

import pytest

from truegrade.core import Flag, SpecError, load_grader


def grade(response, reference="C", **options):
    return load_grader("choice", **options).grade(
        {"id": 1, "response": response, "reference": reference}
    )


@pytest.mark.parametrize(
    "response",
    [
        "C",
        "(C)",
        "c.",
        "Answer: C",
        "The answer is (C).",
        "**Answer:** C",
        "The correct answer is C because A is wrong",
        "\\boxed{C}",
        "\\boxed{\\text{C}}",
        "A is tempting, but B fails. So the final answer is C.",
        "Option (C) is right.",
        "The answer is C, not B.",
    ],
)
def test_one_stated_option(response):
    g = grade(response)
    assert g.passed is True, (response, g.explanation)


@pytest.mark.parametrize(
    "response",
    [
        "Answer: B or C",
        "Answer: B, C",
        "\\boxed{B} \\boxed{C}",
        "Answer: C\n\\boxed{B}",
        "(A) maybe, (C) maybe",
        "The answer is B and C",
    ],
)
def test_two_options_are_a_hedge(response):
    g = grade(response)
    assert g.passed is False and g.flags == [Flag.HEDGED], (response, g)


def test_an_article_is_not_an_option():
    assert grade("A good question with no answer").flags == [Flag.NO_ANSWER]


def test_invalid_letters_and_wrong_letters():
    assert grade("Answer: E").flags == ["invalid_choice"]
    assert grade("Answer: E", reference="E", choices="ABCDE").passed is True
    assert grade("Answer: B").passed is False


def test_bad_key_and_bad_choices():
    assert "bad_reference" in grade("C", reference="Z").flags
    with pytest.raises(SpecError, match="distinct letters"):
        load_grader("choice", choices="AAB")
