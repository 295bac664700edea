"""Math-Verify's own test cases through ``math``: every disagreement is a documented choice.

The cases are Math-Verify's, extracted mechanically from its test files (see ``_suite`` for how
each is turned into a sample, and ``extract_math_verify.py`` for the extraction). This test
fails on any answer ``math`` accepts that the suite rejects, on any disagreement that is not
listed in ``data/math_verify_disagreements.yaml`` under a design choice, on a choice whose row
is missing from the "Design choices" table of ``docs/math.md``, and on a listed case that no
longer disagrees (so the list stays honest).
"""

from __future__ import annotations

import re

import pytest

from tests.external._suite import (
    CASES,
    DISAGREEMENTS,
    DOCS,
    agreeing,
    false_accepts,
    grade,
    listed,
    load_cases,
    prediction,
    undocumented,
    unexplained,
)

pytestmark = pytest.mark.slow  # grades 270 cases in worker processes


@pytest.fixture(scope="module")
def outcomes():
    return grade(CASES)


@pytest.fixture(scope="module")
def choices_and_cases():
    return listed(DISAGREEMENTS)


def test_the_cases_are_math_verify_suite_with_sources():
    cases = load_cases()
    assert len(cases) >= 250
    for case in cases:
        source = case["source"]
        assert source["repo"] == "huggingface/Math-Verify"
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["file"].startswith("tests/") and source["test"].startswith("test")
        assert isinstance(case["expected"], bool)
    assert {c["id"] for c in cases} == set(range(len(cases)))


def test_no_answer_the_suite_rejects_is_accepted(outcomes, choices_and_cases):
    assert false_accepts(outcomes, choices_and_cases[1]) == []


def test_every_disagreement_is_a_documented_design_choice(outcomes, choices_and_cases):
    choices, cases = choices_and_cases
    assert undocumented(choices) == [], f"no such row in {DOCS}'s Design choices table"
    assert unexplained(outcomes, cases) == []
    assert set(cases.values()) <= set(choices), set(cases.values()) - set(choices)


def test_every_listed_disagreement_still_disagrees(outcomes, choices_and_cases):
    stale = agreeing(outcomes, choices_and_cases[1])
    assert stale == [], "these cases agree now: remove them from the disagreements list"


def test_the_boxing_rule():
    assert prediction("$9$") == r"\boxed{9}"
    assert prediction(r"\[ x^2 \]") == r"\boxed{x^2}"
    assert prediction("7,425,000") == r"\boxed{7,425,000}"
    assert prediction(r"\frac{1}{3}") == r"\boxed{\frac{1}{3}}"
    for unchanged in ("Answer $9$", "$1$ and $2$", r"$\boxed{4}$", "AZYUK2A", "the answer is 5"):
        assert prediction(unchanged) == unchanged
