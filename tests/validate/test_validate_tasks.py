"""``truegrade validate`` on rows whose tests live in the row: stdin/stdout programs and IFEval
constraints, through the command line and ``truegrade.validate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.task_rows import EXAMPLES, STDIO_ROWS
from truegrade.core import load_grader, to_samples
from truegrade.validate import ValidationReport, validate_grades


def run_validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truegrade", "validate", *args, "--quiet"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.system_tool("g++", package="g++")
def test_validate_stdio_rows_from_the_command_line(tmp_path):
    data = tmp_path / "stdio.jsonl"
    data.write_text("".join(json.dumps({**r, "group": r["id"]}) + "\n" for r in STDIO_ROWS))
    out = tmp_path / "v.json"
    result = run_validate(str(data), "-g", "code", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = ValidationReport.model_validate(json.loads(out.read_text()))
    c = report.overall.confusion
    assert (c.true_pass, c.false_pass, c.false_fail, c.true_fail) == (3, 0, 0, 2)
    assert report.overall.grader_errors == 0


def test_validate_instruction_rows_hardened_and_ifevals_own_verdicts(tmp_path):
    data = EXAMPLES / "data" / "instructions.jsonl"
    hard, plain = tmp_path / "hard.json", tmp_path / "plain.json"
    result = run_validate(str(data), "-g", "instructions", "--out", str(hard), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = ValidationReport.model_validate(json.loads(hard.read_text()))
    assert report.overall.graded == 48 and report.overall.grader_errors == 0
    assert (report.overall.confusion.false_pass, report.overall.confusion.false_fail) == (0, 0)
    # IFEval's own checks pass gamed responses (prompt echoes, keyword bags): false passes
    result = run_validate(
        str(data), "-g", "instructions", "-o", "hardened=false", "--by", "metadata.kind",
        "--out", str(plain), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    ifeval = ValidationReport.model_validate(json.loads(plain.read_text()))
    assert ifeval.overall.confusion.false_pass > 0
    assert ifeval.slices["metadata.kind"]["gamed"].confusion.false_pass > 0
    assert ifeval.slices["metadata.kind"]["slip"].confusion.false_pass == 0


def test_validate_grades_on_instruction_rows_from_python():
    rows = [
        json.loads(x) for x in (EXAMPLES / "data" / "instructions.jsonl").read_text().splitlines()
    ]
    rows = rows[:9]
    samples = to_samples(rows)
    grades = load_grader("instructions").grade_batch(samples)
    report = validate_grades(samples, grades, by=["metadata.kind"])
    assert report.overall.items == 9 and report.disagreements_total == 0
    assert {k: s.items for k, s in report.slices["metadata.kind"].items()} == {
        "gamed": 3,
        "honest": 3,
        "slip": 3,
    }
