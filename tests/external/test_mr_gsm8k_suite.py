"""MR-GSM8K's human-labelled model solutions through ``math``: every disagreement with the
annotators' verdict is a documented choice or a wrong label.

The cases are model solutions of GSM8K questions (Llama-2, MetaMath, MAmmoTH, WizardMath...)
with the reference answer and the MR-GSM8K annotators' verdict on the solution's final answer,
extracted mechanically by ``extract_mr_gsm8k.py`` into ``data/mr_gsm8k_cases.jsonl``. Each
solution is given to ``math`` as the response it is (``_suite.prediction`` leaves prose
unchanged). Unlike the unit-test suites, nearly all of its answers are wrong, so it is chiefly a
check against false accepts on real model output. The tests fail on an accepted answer the
annotators reject (save one listed as a wrong label), on an unlisted disagreement, on a choice
with no row in docs/math.md's "Design choices" table, and on a listed case that agrees.
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

pytestmark = pytest.mark.slow  # grades 300 model solutions in worker processes

CASES = DATA / "mr_gsm8k_cases.jsonl"
DISAGREEMENTS = DATA / "mr_gsm8k_disagreements.yaml"


@pytest.fixture(scope="module")
def outcomes():
    return grade(CASES)


@pytest.fixture(scope="module")
def choices_and_cases():
    return listed(DISAGREEMENTS)


def test_the_cases_are_labelled_model_solutions_with_sources():
    cases = load_cases(CASES)
    assert 250 <= len(cases) <= 300
    assert [c["id"] for c in cases] == list(range(len(cases)))
    assert sum(c["expected"] for c in cases) >= 10  # every correct one is kept
    for case in cases:
        source = case["source"]
        assert source["repo"] == "dvlab-research/MR-GSM8K" and source["licence"] == "MIT"
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["question_type"] in ("original", "reversed")
        assert re.fullmatch(r"-?\d[\d,]*(\.\d+)?", case["gold"])
        assert "\n" in case["pred"] and not case["pred"].startswith("Step 1:")


def test_no_answer_the_annotators_reject_is_accepted(outcomes, choices_and_cases):
    assert false_accepts(outcomes, choices_and_cases[1]) == []


def test_every_disagreement_is_a_documented_design_choice(outcomes, choices_and_cases):
    choices, cases = choices_and_cases
    assert undocumented(choices) == [], f"no such row in {DOCS}'s Design choices table"
    assert unexplained(outcomes, cases) == []
    assert set(cases.values()) <= set(choices), set(cases.values()) - set(choices)


def test_every_listed_disagreement_still_disagrees(outcomes, choices_and_cases):
    stale = agreeing(outcomes, choices_and_cases[1])
    assert stale == [], "these cases agree now: remove them from the disagreements list"
