"""Public datasets in the shape they are published, graded with no conversion: right responses
pass, wrong ones fail, rows no grader can use are errors (never a silent 0).

The rows and their responses are built by ``published_cases`` from ``published/`` (real rows,
sources and licences in its README). Every disagreement is listed here with its reason; the test
fails on any other, and on a listed one that no longer disagrees.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.data.published_cases import CASES, EXPECT, SMALL, Case
from truegrade.core import Grade, load_grader, run_grader
from truegrade.data import read_samples

# (dataset, item, expected): why the grader decides otherwise
KNOWN: dict[tuple[str, str, str], str] = {}
# (Mbpp/255, whose canonical answer to one plus input is a gigabyte of tuples and so an error, is
# among the slow tasks published_cases leaves out; tests/external/test_evalplus_verdicts.py and
# docs/code.md give the whole of both datasets.)


def _outcome(grade: Grade) -> str:
    if grade.error is not None:
        return "error"
    return "pass" if grade.passed else "fail"


def graded(case: Case, tmp_path) -> list[tuple[str, str, str, Grade]]:
    """``(item, expected, outcome, grade)`` for every row of the case, read from a file as a
    user's command reads it."""
    path = tmp_path / f"{case.name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in case.rows), encoding="utf-8")
    said = []
    samples = [s for _, s in read_samples(path, on_preset=said.append)]
    assert [p.name for p in said] == [case.preset]
    assert len(samples) == len(case.rows)
    grades = run_grader(load_grader(case.grader, **case.options), samples)
    return [
        (s.item, s.metadata[EXPECT], _outcome(g), g) for s, g in zip(samples, grades, strict=True)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("make", CASES, ids=[make.__name__ for make in CASES])
def test_a_published_dataset_grades_with_no_conversion(make, tmp_path):
    case = make()
    results = graded(case, tmp_path)
    counts = Counter(expected for _, expected, _, _ in results)
    smallest = 50 if case.name == "humanevalplus" else 100  # 59 of HumanEval+'s rows are here
    assert counts["pass"] >= smallest and counts["fail"] >= smallest
    unexpected = {
        (case.name, item, expected): f"{outcome}: {grade.error or grade.explanation}"
        for item, expected, outcome, grade in results
        if outcome != expected
    }
    listed = {k: v for k, v in KNOWN.items() if k[0] == case.name}
    assert unexpected.keys() == listed.keys(), (
        f"new disagreements: {dict(list(unexpected.items())[:5])}; "
        f"listed ones that agree now: {sorted(listed.keys() - unexpected.keys())}"
    )
    for _, expected, outcome, grade in results:
        if expected == "error":
            assert grade.passed is None and grade.error  # a reason, never a silent 0
        if outcome == "fail":
            assert grade.explanation  # a fail says why


@pytest.mark.parametrize("make", SMALL, ids=[make.__name__ for make in SMALL])
def test_a_few_published_code_rows_grade_with_no_conversion(make, tmp_path):
    case = make()
    results = graded(case, tmp_path)
    assert [(e, o) for _, e, o, _ in results if e != o] == []
