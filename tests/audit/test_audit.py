"""The audit on planted defects: every flag's precision and recall, measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audit import planted
from truegrade.audit import AuditReport, audit_items
from truegrade.core import load_grader

PLANTED = Path(planted.__file__)


def flagged(report: AuditReport, *names: str) -> set[str]:
    return {item.id for item in report.items if any(f.name in names for f in item.flags)}


def precision_recall(found: set[str], truth: set[str]) -> tuple[float, float]:
    precision = len(found & truth) / len(found) if found else 1.0
    recall = len(found & truth) / len(truth) if truth else 1.0
    return precision, recall


@pytest.fixture(scope="module")
def planted_report() -> tuple[AuditReport, dict[str, set[str]]]:
    rows, truth = planted.build()
    return audit_items(load_grader("math"), rows, reruns=2), truth


@pytest.mark.parametrize(
    ("flags", "truth_key"),
    [
        (("suspect_key",), "suspect_key"),
        (("reference_fails", "reference_unparseable"), "reference"),
        (("near_duplicate",), "near_duplicate"),
        (("answer_leak",), "answer_leak"),
        (("low_discrimination",), "low_discrimination"),
    ],
)
def test_each_planted_defect_is_found_and_nothing_else(planted_report, flags, truth_key):
    report, truth = planted_report
    precision, recall = precision_recall(flagged(report, *flags), truth[truth_key])
    print(f"{truth_key}: precision {precision:.2f}, recall {recall:.2f}")
    assert recall == 1.0
    assert precision == 1.0


def test_every_flag_carries_a_reason_and_the_report_renders(planted_report):
    report, _ = planted_report
    assert report.checks["discrimination"] == "ran"
    assert report.items_flagged == len(report.items) >= 11
    for item in report.items:
        for flag in item.flags:
            assert len(flag.reason) > 15
    suspect = next(f for i in report.items for f in i.flags if f.name == "suspect_key")
    assert "4 of 4 responses answer" in suspect.reason
    markdown = report.markdown()
    assert markdown.count("| suspect_key |") == 5


def test_flaky_grading_is_found():
    rows, truth = planted.flaky_rows()
    grader = load_grader(f"{PLANTED}:coin_flips")
    report = audit_items(grader, rows, reruns=8, checks=["flaky"])
    found = flagged(report, "flaky")
    precision, recall = precision_recall(found, truth)
    print(f"flaky: precision {precision:.2f}, recall {recall:.2f}")
    assert precision == 1.0
    assert recall == 1.0  # its verdicts alternate, so 8 reruns of an item never all agree


def test_a_grader_that_rejects_equivalent_forms_is_caught_and_math_is_not():
    rows = [
        {"id": f"q{i}", "prompt": f"Compute item {i}.", "reference": ref}
        for i, ref in enumerate([r"\frac{3}{4}", "12500", r"\{1, 2\}", "7"])
    ]
    naive = audit_items(
        load_grader(f"{PLANTED}:naive_exact"), rows, checks=["reference", "equivalents"]
    )
    # its regex cannot read nested braces: keys with them fail outright, the rest reject
    # the equivalent forms (12,500 with a separator, x = 7)
    assert flagged(naive, "reference_fails") == {"q0", "q2"}
    assert flagged(naive, "rejects_equivalent") == {"q1", "q3"}
    reason = next(f.reason for i in naive.items for f in i.flags if i.id == "q1")
    assert "thousands" in reason
    strict = audit_items(load_grader("math"), rows, checks=["reference", "equivalents"])
    assert strict.items_flagged == 0


def test_code_items_get_reformatted_and_renamed_solutions(tmp_path):
    rows = [
        {
            "id": "t",
            "prompt": 'def add(a, b):\n    """Add."""\n',
            "reference": {
                "entry_point": "add",
                "check": "def check(c):\n    assert c(1, 2) == 3\n",
            },
            "metadata": {"canonical_solution": "    total = a + b\n    return total\n"},
        }
    ]
    from truegrade.audit._equivalents import equivalent_responses
    from truegrade.core._sample import to_sample

    forms = dict(equivalent_responses(to_sample(rows[0]), "code"))
    assert "renamed_total" in forms["renamed_locals"]
    compile(forms["reformatted"].strip("`").removeprefix("python\n"), "x", "exec")
    # through the audit: a grader that diffs against the solution rejects the equal programs
    differ = audit_items(
        load_grader(f"{PLANTED}:solution_diff"),
        rows,
        kind="code",
        checks=["reference", "equivalents"],
    )
    assert flagged(differ, "rejects_equivalent") == {"t"}
    assert not flagged(differ, "reference_fails")  # its own reference passes
    sandboxed = audit_items(load_grader("code"), rows, checks=["reference", "equivalents"])
    assert sandboxed.items_flagged == 0  # the code grader runs them: equal programs pass


def test_unknown_checks_are_refused():
    with pytest.raises(ValueError, match="unknown checks"):
        audit_items(load_grader("math"), [], checks=["vibes"])


def test_audit_command_end_to_end(tmp_path):
    import json
    import os
    import subprocess
    import sys

    rows, _ = planted.build()
    data = tmp_path / "planted.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, md = tmp_path / "audit.json", tmp_path / "audit.md"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade",
            "audit",
            str(data),
            "-g",
            "math",
            "--reruns",
            "2",
            "--out",
            str(out),
            "--md",
            str(md),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    report = AuditReport.model_validate(json.loads(out.read_text()))
    assert report.by_flag["suspect_key"] == 5
    assert "reference_unparseable" in report.by_flag
    assert md.read_text().startswith("11 of 21 items flagged")
    bad = subprocess.run(
        [sys.executable, "-m", "truegrade", "audit", str(data), "-g", "math", "--checks", "vibes"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown checks vibes" in bad.stderr
