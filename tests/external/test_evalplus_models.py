"""Real model solutions to HumanEval+ (v0.1.10, as published), graded by ``code`` through the
``humaneval`` preset with the grader's defaults, against the verdicts EvalPlus itself gave them.

``data/evalplus_models.jsonl.gz`` (``extract_evalplus_models.py``) holds 984 greedy solutions of
six models, each with EvalPlus's own base and plus statuses from the result files published with
them, and those of EvalPlus 0.3.1's ``evaluate`` run again on this repository's copy of the
dataset. ``code`` must agree with the second on every solution; every disagreement with the
first is listed here with its reason: the test fails on a new one, and on a listed one that no
longer disagrees. The suite grades one model's 164 solutions (every task);
``python -m tests.external.test_evalplus_models`` grades all six and prints the agreement.

Each listed disagreement is one where EvalPlus run again passes the solution, as ``code`` does:
its published ``fail`` was a time-out of the machine it ran on. EvalPlus limits each input to 4
times the reference's own time on the wall clock (at least 1 s), so its verdicts move with the
load; ``code`` counts CPU time.
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


def evalplus_passed(row: dict[str, Any], *, rerun: bool = False) -> bool:
    """EvalPlus's verdict: the published one, or (``rerun``) that of its run here."""
    prefix = "rerun_" if rerun else ""
    return row[f"{prefix}base"] == "pass" and row[f"{prefix}plus"] == "pass"


def grade_solutions(model: str | None = None) -> list[tuple[dict[str, Any], Grade]]:
    """Every solution (of ``model``, or of all six), graded with the defaults."""
    tasks = {row["task_id"]: row for row in _read(HUMANEVAL_PLUS)}
    solutions = [s for s in _read(SOLUTIONS) if model is None or s["model"] == model]
    samples = [
        Sample.from_row({**tasks[s["task_id"]], "response": s["solution"]}, default_id=i)
        for i, s in enumerate(solutions)
    ]
    return list(zip(solutions, load_grader("code").grade_batch(samples), strict=True))


def disagreements(
    outcomes: list[tuple[dict[str, Any], Grade]], *, rerun: bool = False
) -> dict[tuple[str, str], str]:
    return {
        (row["task_id"], row["model"]): grade.error or grade.explanation[:200]
        for row, grade in outcomes
        if grade.error is not None or grade.passed is not evalplus_passed(row, rerun=rerun)
    }


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[dict[str, Any], Grade]]:
    return grade_solutions(IN_THE_SUITE)


def test_the_data_is_evalplus_s_own_grading_of_every_task():
    rows = _read(SOLUTIONS)
    assert len(rows) == 984 and len({r["model"] for r in rows}) == 6
    assert len({r["task_id"] for r in rows}) == 164
    assert sum(evalplus_passed(r) for r in rows) == 381
    assert sum(evalplus_passed(r, rerun=True) for r in rows) == 383
    assert len(_read(HUMANEVAL_PLUS)) == 164


def test_every_solution_is_graded_none_is_an_error(outcomes):
    assert len(outcomes) == 164
    errors = [(row["task_id"], grade.error) for row, grade in outcomes if grade.error is not None]
    assert errors == []


def test_every_verdict_is_evalplus_s_own_run_here(outcomes):
    assert disagreements(outcomes, rerun=True) == {}


def test_every_disagreement_with_the_published_verdicts_is_listed_and_still_disagrees(outcomes):
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
    total = len(outcomes)
    errors = sum(1 for _, grade in outcomes if grade.error is not None)
    print(f"{total} solutions, {errors} errors")
    for rerun, against in ((True, "EvalPlus 0.3.1 run here"), (False, "the published verdicts")):
        found = disagreements(outcomes, rerun=rerun)
        accepts = sum(
            1 for row, g in outcomes if g.passed and not evalplus_passed(row, rerun=rerun)
        )
        agree = total - len(found)
        print(
            f"against {against}: {agree} agree ({100 * agree / total:.2f}%), {accepts} passed "
            f"where EvalPlus failed, {len(found) - accepts - errors} failed where it passed"
        )
        for (task, model), reason in sorted(found.items()):
            mark = "listed" if (task, model) in DISAGREEMENTS else "NEW"
            print(f"  [{mark}] {task} {model}: {reason}")
    published = disagreements(outcomes)
    unlisted = published.keys() - DISAGREEMENTS.keys()
    ok = not unlisted and not disagreements(outcomes, rerun=True)
    return 0 if ok and (total - len(published)) / total >= AGREEMENT else 1


if __name__ == "__main__":
    sys.exit(main())
