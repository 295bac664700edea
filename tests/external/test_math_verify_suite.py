"""Math-Verify's own test cases through ``math``: every disagreement is a documented choice.

The cases are Math-Verify's, extracted mechanically from its test files (see ``_suite`` for how
each is turned into a sample, and ``extract_math_verify.py`` for the extraction). This test
fails on any answer ``math`` accepts that the suite rejects, on any disagreement that is not
listed in ``data/math_verify_disagreements.yaml`` under a design choice, on a choice whose row
is missing from the "Design choices" table of ``docs/math.md``, and on a listed case that no
longer disagrees (so the list stays honest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.external._suite import DISAGREEMENTS, load_cases, prediction, samples
from truegrade.core import load_grader

pytestmark = pytest.mark.slow  # grades 270 cases in worker processes

DOCS = Path(__file__).resolve().parents[2] / "docs" / "math.md"


def _design_rows() -> dict[str, str]:
    """First cell -> the whole line, for each row of the docs' one "Design choices" table."""
    text = DOCS.read_text()
    section = text.split("## Design choices", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("rule", "---") and len(cells) >= 3:
            rows[cells[0]] = line
    return rows


@pytest.fixture(scope="module")
def outcomes():
    cases = load_cases()
    grades = load_grader("math").grade_batch(samples())
    return list(zip(cases, grades, strict=True))


@pytest.fixture(scope="module")
def listed():
    data = yaml.safe_load(DISAGREEMENTS.read_text())
    return data["choices"], {int(k): v for k, v in data["cases"].items()}


def test_the_cases_are_math_verify_suite_with_sources():
    cases = load_cases()
    assert len(cases) >= 250
    for case in cases:
        source = case["source"]
        assert source["repo"] == "huggingface/Math-Verify"
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["file"].startswith("tests/") and source["test"].startswith("test")
        assert isinstance(case["expected"], bool)
    assert {c["id"] for c in cases} == set(range(len(cases)))


def test_no_answer_the_suite_rejects_is_accepted(outcomes):
    wrong = [
        (c["id"], c["gold"][:60], c["pred"][:60], g.flags)
        for c, g in outcomes
        if g.passed is True and not c["expected"]
    ]
    assert wrong == []


def test_every_disagreement_is_a_documented_design_choice(outcomes, listed):
    choices, cases = listed
    rows = _design_rows()
    for name, rule in choices.items():
        assert rule in rows, f"choice {name!r}: no row {rule!r} in {DOCS}'s Design choices table"
    unexplained = []
    for case, grade in outcomes:
        if bool(grade.passed) != case["expected"] and case["id"] not in cases:
            unexplained.append(
                (
                    case["id"],
                    case["gold"][:50],
                    prediction(case["pred"])[:50],
                    grade.flags,
                    grade.explanation or grade.error,
                )
            )
    assert unexplained == []
    assert set(cases.values()) <= set(choices), set(cases.values()) - set(choices)


def test_every_listed_disagreement_still_disagrees(outcomes, listed):
    _, cases = listed
    by_id = {case["id"]: (case, grade) for case, grade in outcomes}
    agreeing = [i for i in cases if bool(by_id[i][1].passed) == by_id[i][0]["expected"]]
    assert agreeing == [], "these cases agree now: remove them from the disagreements list"


def test_the_boxing_rule():
    assert prediction("$9$") == r"\boxed{9}"
    assert prediction(r"\[ x^2 \]") == r"\boxed{x^2}"
    assert prediction("7,425,000") == r"\boxed{7,425,000}"
    assert prediction(r"\frac{1}{3}") == r"\boxed{\frac{1}{3}}"
    for unchanged in ("Answer $9$", "$1$ and $2$", r"$\boxed{4}$", "AZYUK2A", "the answer is 5"):
        assert prediction(unchanged) == unchanged
