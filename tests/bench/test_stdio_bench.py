"""The stdio benchmark: its generated problems are right, and each figure has its anchor."""

from __future__ import annotations

import pytest

from truegrade.bench import run_stdio_bench
from truegrade.bench._stdio import _plain_grade, stdio_problems, submission


@pytest.mark.system_tool("g++", package="g++")
def test_the_plain_harness_passes_the_generated_programs_and_fails_a_wrong_one() -> None:
    rows = stdio_problems(2, 3)
    assert [r["reference"]["language"] for r in rows] == ["cpp", "python"]
    assert all(_plain_grade(r, 2.0, 256) for r in rows)
    wrong = stdio_problems(2, 3, offset=5)[1]
    wrong["reference"] = rows[1]["reference"]  # another k: every expected output differs
    assert not _plain_grade(wrong, 2.0, 256)


@pytest.mark.slow
@pytest.mark.system_tool("g++", package="g++")
def test_sandbox_and_grader_figures_are_each_paired_with_an_anchor() -> None:
    report = run_stdio_bench(problems=2, tests=2, runs=5, workers=1, submissions=1)
    names = {m.name: m for m in report.measurements}
    assert len(report.pairs) == 7
    assert all(a in names and o in names and names[a].anchor for o, a in report.pairs)
    passed = [
        m.extra["problems passed"] for m in report.measurements if "problems passed" in m.extra
    ]
    assert passed == [2, 2, 2, 2]
    compiled = [m for m in report.measurements if "ms per submission" in m.extra]
    assert len(compiled) == 4 and all(m.extra["failed"] == 0 for m in compiled)
    assert report.details["precompiled header made in s"] > 0
    assert len(report.details["load average at end"]) == 3


@pytest.mark.system_tool("g++", package="g++")
def test_the_compile_cost_submission_is_right_for_the_plain_harness() -> None:
    row = submission(1000, tests=3)
    assert "bits/stdc++.h" in row["response"] and len(row["reference"]["stdio"]) == 3
    assert _plain_grade(row, 2.0, 256)
    wrong = submission(1001, tests=3)
    wrong["reference"] = row["reference"]
    assert not _plain_grade(wrong, 2.0, 256)
