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


def test_a_whole_eval_set_of_checks_is_compiled_once():
    """Cycling twice through 500 problems (1000 check and helper sources, MBPP's size) compiles
    each source once: the second pass is all hits (a smaller cache would miss every time)."""
    from truegrade.graders.code._harness import _compiled

    _compiled.cache_clear()
    sources = [f"def check(candidate):\n    assert candidate({i}) == {i}\n" for i in range(1000)]
    for _ in range(2):
        for source in sources:
            _compiled(source, "<check>")
    info = _compiled.cache_info()
    assert (info.misses, info.hits) == (1000, 1000)
