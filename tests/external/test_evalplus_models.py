"""Real model solutions to HumanEval+ (v0.1.10, as published), graded by ``code`` through the
``humaneval`` preset with the grader's defaults, against the verdicts EvalPlus itself gave them.

``data/evalplus_models.jsonl.gz`` (``extract_evalplus_models.py``) holds 984 greedy solutions of
six models, each with EvalPlus's own base and plus statuses from the result files published with
them. Every disagreement is listed here with its reason: the test fails on a new one, and on a
listed one that no longer disagrees. The suite grades one model's 164 solutions (every task);
``python -m tests.external.test_evalplus_models`` grades all six and prints the agreement.

Each listed disagreement was checked by running EvalPlus 0.3.1's own ``check_correctness`` on the
solution on an idle machine: EvalPlus passes it there, as ``code`` does. Its recorded ``fail``
was a time-out of the machine it ran on: EvalPlus limits each input to 4 times the reference's
own time on the wall clock (at least 1 s), so its verdicts move with the load; ``code`` counts
CPU time.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from truegrade.core import Grade, Sample, load_grader

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE / "data" / "evalplus_models.jsonl.gz"
HUMANEVAL_PLUS = HERE.parent / "data" / "published" / "humanevalplus.jsonl.gz"
IN_THE_SUITE = "meta-llama--Meta-Llama-3-8B-Instruct"
AGREEMENT = 0.995

# (task, model): why ``code`` decides otherwise than the verdict EvalPlus recorded
DISAGREEMENTS = {
    ("HumanEval/15", "custom_finetuned_models--llama3_base_dpo"): (
        "' '.join of the numbers (the canonical solution's own code): EvalPlus recorded a "
        "time-out on n = 1000001, and passes it on an idle machine"
    ),
    ("HumanEval/139", "custom_finetuned_models--mistral2_instruct_dpo"): (
        "the product of factorials, recursively: EvalPlus recorded a time-out on n = 95, and "
        "passes it on an idle machine"
    ),
}


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def evalplus_passed(row: dict[str, Any]) -> bool:
    return row["base"] == "pass" and row["plus"] == "pass"


def grade_solutions(model: str | None = None) -> list[tuple[dict[str, Any], Grade]]:
    """Every solution (of ``model``, or of all six), graded with the defaults."""
    tasks = {row["task_id"]: row for row in _read(HUMANEVAL_PLUS)}
    solutions = [s for s in _read(SOLUTIONS) if model is None or s["model"] == model]
    samples = [
        Sample.from_row({**tasks[s["task_id"]], "response": s["solution"]}, default_id=i)
        for i, s in enumerate(solutions)
    ]
    return list(zip(solutions, load_grader("code").grade_batch(samples), strict=True))


def disagreements(outcomes: list[tuple[dict[str, Any], Grade]]) -> dict[tuple[str, str], str]:
    return {
        (row["task_id"], row["model"]): grade.error or grade.explanation[:200]
        for row, grade in outcomes
        if grade.error is not None or grade.passed is not evalplus_passed(row)
    }


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[dict[str, Any], Grade]]:
    return grade_solutions(IN_THE_SUITE)


def test_the_data_is_evalplus_s_own_grading_of_every_task():
    rows = _read(SOLUTIONS)
    assert len(rows) == 984 and len({r["model"] for r in rows}) == 6
    assert len({r["task_id"] for r in rows}) == 164
    assert sum(evalplus_passed(r) for r in rows) == 381
    assert len(_read(HUMANEVAL_PLUS)) == 164


def test_every_solution_is_graded_none_is_an_error(outcomes):
    assert len(outcomes) == 164
    errors = [(row["task_id"], grade.error) for row, grade in outcomes if grade.error is not None]
    assert errors == []


def test_every_disagreement_with_evalplus_is_listed_and_still_disagrees(outcomes):
    found = disagreements(outcomes)
    listed = {key for key in DISAGREEMENTS if key[1] == IN_THE_SUITE}
    assert found.keys() == listed, (
        f"new: {dict((k, found[k]) for k in list(found.keys() - listed)[:5])}; "
        f"agreeing now: {sorted(listed - found.keys())}"
    )
    agreed = len(outcomes) - len(found)
    assert agreed / len(outcomes) >= AGREEMENT


def main() -> int:
    """Grade all six models' solutions and print the agreement and each disagreement."""
    outcomes = grade_solutions()
    found = disagreements(outcomes)
    accepts = sum(1 for row, grade in outcomes if grade.passed and not evalplus_passed(row))
    errors = sum(1 for _, grade in outcomes if grade.error is not None)
    total = len(outcomes)
    print(
        f"{total} solutions: {total - len(found)} agree ({100 * (total - len(found)) / total:.2f}%)"
        f", {errors} errors, {accepts} passed where EvalPlus recorded a fail"
    )
    for (task, model), reason in sorted(found.items()):
        mark = "listed" if (task, model) in DISAGREEMENTS else "NEW"
        print(f"  [{mark}] {task} {model}: {reason}")
    unlisted = found.keys() - DISAGREEMENTS.keys()
    return 1 if unlisted or (total - len(found)) / total < AGREEMENT else 0


if __name__ == "__main__":
    sys.exit(main())
