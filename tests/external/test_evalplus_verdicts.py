"""MBPP+ and HumanEval+ rows as published, graded by ``code`` through their presets, against
evalplus's own verdicts.

``extract_evalplus_verdicts.py`` makes variants of every canonical solution (the solution, one
returning None, a constant and a comparison mutant) and records evalplus 0.3.1's ``evaluate``
verdict on each: pass means the base and the plus inputs all pass. Here the same programs, as
responses to the published rows, are graded by ``code`` (the preset writes the inputs as call
cases with the canonical solution as the reference program); every disagreement is listed with
its reason. The test fails on a new one, and on a listed one that no longer disagrees.

Every other MBPP+ task is graded (``main`` below grades all of them), but for the tasks whose
canonical solution took evalplus more than ``SLOW_S`` on all the inputs (the suite's time);
HumanEval+ on the rows of ``humanevalplus_small.jsonl.gz`` within the same bound (59 of its
65). The whole of both, slow tasks included, with the grader's defaults, is measured by
``python -m tests.external.test_evalplus_verdicts`` (docs/code.md).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.external.extract_evalplus_verdicts import (
    HUMANEVAL_PLUS_SMALL,
    MBPP_PLUS,
    program_hash,
    read_rows,
    variants,
)
from truegrade.core import Grade, Grader, Sample, load_grader

pytestmark = pytest.mark.slow

VERDICTS = Path(__file__).resolve().parent / "data" / "evalplus_verdicts.jsonl.gz"
SLOW_S = 0.25
OPTIONS: dict[str, Any] = {}
"""The grader's defaults, as users get them: each input's CPU time at most four times the
reference's (at least 1 s, EvalPlus's own rule, which the preset writes), answers as large as
twice the reference's largest."""

# (task, variant): why ``code`` decides otherwise than evalplus; none since answers are compared
# as evalplus compares them (``compare: evalplus``: HumanEval/147's canonical answer False meets
# a mutant's 0, as Python's == has it)
DISAGREEMENTS: dict[tuple[str, str], str] = {}


def verdicts() -> dict[tuple[str, str], dict[str, Any]]:
    rows = [json.loads(line) for line in gzip.decompress(VERDICTS.read_bytes()).splitlines()]
    return {(row["task_id"], row["variant"]): row for row in rows}


def evalplus_passed(verdict: dict[str, Any]) -> bool:
    return verdict["base"] == "pass" and verdict["plus"] == "pass"


def grade_variants(
    rows: list[dict[str, Any]], grader: Grader, slow_s: float | None = None
) -> list[tuple[dict[str, Any], Grade]]:
    """Each variant of each row (its tasks' canonical solution taking evalplus at most
    ``slow_s``) graded by ``grader``, beside evalplus's verdict on it."""
    known = verdicts()
    graded: list[dict[str, Any]] = []
    samples: list[Sample] = []
    for row in rows:
        for name, program in variants(row).items():
            verdict = known[(row["task_id"], name)]
            assert verdict["program_sha"] == program_hash(program), (row["task_id"], name)
            if slow_s is not None and verdict["canonical_s"] > slow_s:
                continue
            samples.append(Sample.from_row({**row, "response": program}, default_id=len(samples)))
            graded.append(verdict)
    return list(zip(graded, grader.grade_batch(samples), strict=True))


def disagreements(outcomes: list[tuple[dict[str, Any], Grade]]) -> dict[tuple[str, str], str]:
    return {
        (verdict["task_id"], verdict["variant"]): grade.error or grade.explanation[:200]
        for verdict, grade in outcomes
        if grade.passed is not evalplus_passed(verdict)
    }


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[dict[str, Any], Grade]]:
    # every other MBPP+ task (the suite's time; ``main`` grades the whole of both)
    rows = read_rows(MBPP_PLUS)[::2] + read_rows(HUMANEVAL_PLUS_SMALL)
    return grade_variants(rows, load_grader("code", **OPTIONS), SLOW_S)


def test_the_cases_cover_both_datasets_and_every_variant(outcomes):
    tasks = {verdict["task_id"] for verdict, _ in outcomes}
    assert sum(t.startswith("Mbpp/") for t in tasks) >= 180  # of the 189 read
    assert sum(t.startswith("HumanEval/") for t in tasks) >= 55  # of 65
    assert {verdict["variant"] for verdict, _ in outcomes} == {"canonical", "none", "const", "cmp"}
    assert {evalplus_passed(verdict) for verdict, _ in outcomes} == {True, False}


def test_every_disagreement_with_evalplus_is_listed_and_still_disagrees(outcomes):
    found = disagreements(outcomes)
    assert found.keys() == DISAGREEMENTS.keys(), (
        f"new: {dict((k, found[k]) for k in list(found.keys() - DISAGREEMENTS.keys())[:5])}; "
        f"agreeing now: {sorted(DISAGREEMENTS.keys() - found.keys())}"
    )


HUMANEVAL_PLUS = HUMANEVAL_PLUS_SMALL.with_name("humanevalplus.jsonl.gz")


def main(argv: list[str]) -> int:
    """Grade every variant of both whole datasets (with the grader's defaults, or the options
    given as ``NAME VALUE`` pairs) and print each disagreement with evalplus."""
    rows = read_rows(MBPP_PLUS) + read_rows(HUMANEVAL_PLUS)
    options = dict(zip(argv[0::2], map(json.loads, argv[1::2]), strict=True))
    outcomes = grade_variants(rows, load_grader("code", **options))
    found = disagreements(outcomes)
    for prefix in ("Mbpp/", "HumanEval/"):
        total = sum(v["task_id"].startswith(prefix) for v, _ in outcomes)
        mine = {k: v for k, v in found.items() if k[0].startswith(prefix)}
        print(f"{prefix.rstrip('/')}: {total - len(mine)} agree, {len(mine)} disagree")
        for (task, variant), reason in sorted(mine.items()):
            print(f"  {task} {variant}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
