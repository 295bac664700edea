"""All 164 HumanEval canonical solutions pass (response = prompt + canonical solution)."""

from __future__ import annotations

import pytest

from tests.graders.code.humaneval import problems, row
from truegrade import load_grader


@pytest.mark.slow
@pytest.mark.shared_data
def test_every_canonical_solution_passes():
    data = problems()
    grader = load_grader("code")
    rows = [row(p, p["prompt"] + p["canonical_solution"]) for p in data.values()]
    grades = grader.grade_batch(rows)
    failed = {
        r["id"]: (g.explanation, g.error) for r, g in zip(rows, grades, strict=True) if not g.passed
    }
    assert not failed
    assert len(grades) == 164
    assert all(g.score == 1.0 and g.subscores == {"check": 1.0} for g in grades)
    assert all("unsandboxed" not in g.flags for g in grades)
