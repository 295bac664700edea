from __future__ import annotations

import pytest

from truegrade.core import Flag, SpecError, load_grader
from truegrade.graders.match._exact import normalize_text


def grade(response, reference="Paris", **options):
    return load_grader("exact", **options).grade(
        {"id": 1, "response": response, "reference": reference}
    )


def test_default_is_strip_only():
    assert grade(" Paris\n").passed is True
    assert grade("paris").passed is False


def test_normalisation_is_what_you_ask_for():
    assert grade("PARIS", normalize=["casefold"]).passed is True
    assert (
        grade(
            "The  Paris!",
            normalize=["remove_articles", "strip_punctuation", "collapse_whitespace", "strip"],
        ).passed
        is True
    )
    assert normalize_text("Ｐａｒｉｓ", ("nfkc",)) == "Paris"


def test_reference_lists_accept_any():
    assert grade("Lutetia", reference=["Paris", "Lutetia"]).passed is True


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("", ""),  # an empty key would pass an empty response
        ("  ", "  "),
        ("", ["Paris", ""]),
        ("the", "the"),  # empty once the articles are removed
        ("{'a': 1}", {"a": 1}),  # not text: its repr is no key
        ("None", [None]),
        ("x", []),
    ],
)
def test_a_reference_that_is_no_text_or_is_empty_is_an_error(response, reference):
    g = grade(response, reference=reference, normalize=["remove_articles", "strip"])
    assert g.error and g.passed is None and g.flags == ["bad_reference"]
    assert grade("42", reference=42).passed is True  # a number is its text


def test_extracted_answers_that_differ_are_a_hedge():
    g = grade("Answer: Paris\n\\boxed{Lyon}", extract="final_answer")
    assert g.passed is False and g.flags == [Flag.HEDGED]
    assert grade("Answer: Paris\n\\boxed{Paris}", extract="final_answer").passed is True
    assert grade("blah", extract="final_answer").flags == [Flag.NO_ANSWER]


def test_regex_extraction_runs_in_a_killable_worker():
    g = load_grader("exact", extract=r"<a>(.*?)</a>")
    assert g.execution == "process"
    assert g.grade({"id": 1, "response": "<a>Paris</a>", "reference": "Paris"}).passed


def test_hostile_text_is_just_text():
    for hostile in ["\x00\x01\x02", "\ud800 lone surrogate", "🙂" * 1000, "Paris\x00"]:
        assert grade(hostile).passed is False


def test_bad_pattern_is_a_spec_error():
    with pytest.raises(SpecError, match="regular expression"):
        load_grader("exact", extract="(")
