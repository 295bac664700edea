"""The math reward-function unit tests of RL training frameworks (AReaL) through ``math``:
every disagreement is a documented choice or a listed pending fix.

The cases are the (key, response, reward) assertions of those tests, extracted mechanically by
``extract_reward_tests.py`` into ``data/reward_tests_cases.jsonl``. Their responses are mostly
short: each is turned into a ``math`` response by the Math-Verify suite's rule
(``_suite.prediction``: one bare answer or one math span is boxed, prose is left as it is). The
tests fail on an accepted answer the suite rejects (save one listed under a pending fix), on an
unlisted disagreement, on a choice with no row in docs/math.md's "Design choices" table, and on a
listed case that agrees.
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

pytestmark = pytest.mark.slow  # grades the cases in worker processes

CASES = DATA / "reward_tests_cases.jsonl"
DISAGREEMENTS = DATA / "reward_tests_disagreements.yaml"


@pytest.fixture(scope="module")
def outcomes():
    return grade(CASES)


@pytest.fixture(scope="module")
def choices_and_cases():
    return listed(DISAGREEMENTS)


def test_the_cases_are_the_reward_tests_with_sources():
    cases = load_cases(CASES)
    assert len(cases) >= 40
    assert [c["id"] for c in cases] == list(range(len(cases)))
    assert {c["source"]["repo"] for c in cases} == {"areal-project/AReaL"}
    for case in cases:
        source = case["source"]
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["licence"] == "Apache-2.0" and source["test"].startswith("test")
        assert source["check"] in ("gsm8k_reward_fn", "verify")
        assert isinstance(case["expected"], bool)


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
