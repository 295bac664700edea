"""The equivalence unit tests of hendrycks/math, MARIO_EVAL and NeMo-Skills through ``math``:
every disagreement is a documented choice or a listed pending fix.

The cases are those projects' own (gold, prediction, verdict) assertions, extracted mechanically
by ``extract_equivalence_tests.py`` into ``data/equivalence_tests_cases.jsonl``. Their checks
compare two answers, so each prediction is given as a boxed answer (``_suite.boxed``). The tests
fail as the Math-Verify suite's do: on an accepted answer the suite rejects (save one listed
under a pending fix), on an unlisted disagreement, on a choice with no row in docs/math.md's
"Design choices" table, and on a listed case that agrees.
"""

from __future__ import annotations

import re

import pytest

from tests.external._suite import (
    DATA,
    DOCS,
    agreeing,
    false_accepts,
    grade,
    listed,
    load_cases,
    undocumented,
    unexplained,
)

pytestmark = pytest.mark.slow  # grades 134 cases in worker processes

CASES = DATA / "equivalence_tests_cases.jsonl"
DISAGREEMENTS = DATA / "equivalence_tests_disagreements.yaml"
REPOS = {"hendrycks/math", "MARIO-Math-Reasoning/MARIO_EVAL", "NVIDIA/NeMo-Skills"}


@pytest.fixture(scope="module")
def outcomes():
    return grade(CASES, answers=True)


@pytest.fixture(scope="module")
def choices_and_cases():
    return listed(DISAGREEMENTS)


def test_the_cases_are_the_three_suites_with_sources():
    cases = load_cases(CASES)
    assert len(cases) >= 130
    assert {c["source"]["repo"] for c in cases} == REPOS
    for case in cases:
        source = case["source"]
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["licence"] in ("MIT", "Apache-2.0") and source["test"].startswith("test")
        assert isinstance(case["expected"], bool)
    assert [c["id"] for c in cases] == list(range(len(cases)))


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
