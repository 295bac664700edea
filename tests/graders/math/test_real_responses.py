"""The math grader on 800 real Qwen2.5-Math responses, against adjudicated truth.

Truth (``tests/data/math_qwen25_truth.jsonl``) is Math-Verify's verdict wherever it and Qwen's own
checker agree, and a hand adjudication wherever they or we disagree
(``tests/data/math_qwen25_adjudicated.jsonl``, one reason per case). The responses themselves are
read from the shared reference data and are not part of the project.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reference import QWEN_MATH, read_jsonl
from truegrade.core import load_grader

ROOT = Path(__file__).resolve().parents[3]
DATA = QWEN_MATH
TRUTH = ROOT / "tests" / "data" / "math_qwen25_truth.jsonl"
ADJUDICATED = ROOT / "tests" / "data" / "math_qwen25_adjudicated.jsonl"


def _truth() -> dict[tuple[int, int], bool]:
    out = {}
    for line in TRUTH.read_text().splitlines()[1:]:
        row = json.loads(line)
        for k, bit in enumerate(row["correct"]):
            out[(row["idx"], k)] = bit == "1"
    return out


@pytest.mark.shared_data
def test_no_false_accepts_and_no_misses_on_800_real_responses():
    truth = _truth()
    rows = read_jsonl(DATA)
    samples = [
        {"id": f"{r['idx']}-{k}", "response": c, "reference": r["answer"]}
        for r in rows
        for k, c in enumerate(r["code"])
    ]
    grades = load_grader("math").grade_batch(samples)
    false_accepts, misses = [], []
    for sample, grade in zip(samples, grades, strict=True):
        idx, k = (int(x) for x in sample["id"].split("-"))
        assert grade.error is None, (sample["id"], grade.error)
        if grade.passed and not truth[(idx, k)]:
            false_accepts.append(sample["id"])
        if not grade.passed and truth[(idx, k)]:
            misses.append((sample["id"], grade.explanation))
    assert false_accepts == []
    assert misses == []


@pytest.mark.shared_data
def test_every_adjudicated_case_is_graded_as_adjudicated():
    rows = {row["idx"]: row for row in read_jsonl(DATA)}
    grader = load_grader("math")
    for line in ADJUDICATED.read_text().splitlines():
        case = json.loads(line)
        assert case["reason"]
        response = rows[case["idx"]]["code"][case["k"]]
        grade = grader.grade({"id": 1, "response": response, "reference": case["gold"]})
        assert grade.passed is case["correct"], (case, grade)
