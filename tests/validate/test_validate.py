"""Validation against labels: known confusion counts, clustered intervals, slices, scores files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from truegrade.core import Grade, Sample, load_grader
from truegrade.data import read_samples
from truegrade.stats import proportion_ci
from truegrade.validate import ValidationReport, validate_grades

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def make(
    label: bool,
    passed: bool | None,
    score: float = 0.0,
    group: str | None = None,
    subject: str = "a",
    error: str | None = None,
) -> tuple[Sample, Grade]:
    sample = Sample(
        id=len(_counter), label=label, group=group, response="r", metadata={"subject": subject}
    )
    _counter.append(1)
    return sample, Grade(score=score, passed=passed, error=error)


_counter: list[int] = []


def test_known_confusion_counts_and_rates():
    rows = (
        [make(True, True)] * 0
        + [make(True, True) for _ in range(40)]
        + [make(True, False) for _ in range(10)]
        + [make(False, True) for _ in range(5)]
        + [make(False, False) for _ in range(45)]
        + [make(False, None, error="judge down")]
    )
    samples, grades = zip(*rows, strict=True)
    report = validate_grades(list(samples), list(grades))
    c = report.overall.confusion
    assert (c.true_pass, c.false_fail, c.false_pass, c.true_fail) == (40, 10, 5, 45)
    assert report.overall.grader_errors == 1
    assert report.overall.false_pass_rate.estimate == pytest.approx(5 / 50)
    assert report.overall.false_fail_rate.estimate == pytest.approx(10 / 50)
    assert report.overall.accuracy.estimate == pytest.approx(85 / 100)
    # Cohen's kappa by hand: p_o = .85, p_e = .5*.45 + .5*.55 = .5
    assert report.overall.kappa.estimate == pytest.approx((0.85 - 0.5) / 0.5)
    assert [d.kind for d in report.disagreements].count("false_pass") == 5
    assert len(report.disagreements) == report.disagreements_total == 15  # all listed
    capped = validate_grades(list(samples), list(grades), max_disagreements=4)
    assert len(capped.disagreements) == 4 and capped.disagreements_total == 15


def test_false_pass_rate_interval_is_clustered_on_the_prompt():
    # 10 prompts, 10 responses each; the grader passes every wrong response on 2 prompts
    rows = [make(False, p < 2, group=f"p{p}") for p in range(10) for _ in range(10)]
    samples, grades = zip(*rows, strict=True)
    report = validate_grades(list(samples), list(grades))
    fpr = report.overall.false_pass_rate
    assert fpr.estimate == pytest.approx(0.2) and fpr.clusters == 10
    naive = proportion_ci([p < 2 for p in range(10) for _ in range(10)])
    assert (fpr.ci_high - fpr.ci_low) > 1.5 * (naive.ci_high - naive.ci_low)


def test_scores_give_auroc_and_slices_are_separate():
    rows = [
        make(
            i % 2 == 0,
            None,
            score=(0.9 if i % 2 == 0 else 0.2) + i / 1000,
            subject="x" if i < 20 else "y",
        )
        for i in range(40)
    ]
    samples, grades = zip(*rows, strict=True)
    report = validate_grades(list(samples), list(grades), by=["metadata.subject"])
    assert report.overall.auroc is not None and report.overall.auroc.estimate == 1.0
    assert set(report.slices["metadata.subject"]) == {"x", "y"}
    assert report.slices["metadata.subject"]["x"].items == 20


def test_numeric_labels_use_the_label_threshold():
    samples = [Sample(id=i, label=v, response="r") for i, v in enumerate([0.9, 0.2, 0.7])]
    grades = [Grade(score=1.0, passed=True)] * 3
    report = validate_grades(samples, grades, label_threshold=0.6)
    assert report.overall.confusion.false_pass == 1


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truegrade", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_validate_command_grades_or_reads_scores(tmp_path):
    data = EXAMPLES / "data" / "arith.jsonl"
    out = tmp_path / "v.json"
    result = run_cli(
        "validate",
        str(data),
        "-g",
        "math",
        "--by",
        "metadata.kind",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = ValidationReport.model_validate(json.loads(out.read_text()))
    assert report.overall.confusion.false_pass == 0
    assert report.overall.confusion.false_fail == 0
    assert "false pass rate" in result.stdout
    # the same check from precomputed grades of the naive reward
    grades = tmp_path / "naive.jsonl"
    naive = load_grader(f"{EXAMPLES}/graders/naive_last_number.py:reward", pass_threshold=1)
    samples = [s for _, s in read_samples(data)]
    grades.write_text(
        "".join(
            json.dumps(g.record(s.id)) + "\n"
            for s, g in zip(samples, naive.grade_batch(samples), strict=True)
        )
    )
    from_scores = run_cli(
        "validate", str(data), "--scores", str(grades), "--out", str(out), cwd=tmp_path
    )
    assert from_scores.returncode == 0, from_scores.stderr
    report = ValidationReport.model_validate(json.loads(out.read_text()))
    assert report.overall.confusion.false_pass == 48
    assert report.overall.false_pass_rate.estimate == pytest.approx(0.8)


def test_validate_command_errors(tmp_path):
    unlabelled = tmp_path / "u.jsonl"
    unlabelled.write_text('{"id": 1, "response": "x", "reference": "x"}\n')
    result = run_cli("validate", str(unlabelled), "-g", "exact", cwd=tmp_path)
    assert result.returncode == 2 and "no rows with a 'label'" in result.stderr
    both = run_cli("validate", str(unlabelled), cwd=tmp_path)
    assert both.returncode == 2 and "exactly one of --grader" in both.stderr
    labelled = tmp_path / "l.jsonl"
    labelled.write_text('{"id": 1, "response": "x", "label": true}\n{"id": 2, "label": false}\n')
    missing = run_cli("validate", str(labelled), "--scores", "nope.jsonl", cwd=tmp_path)
    assert missing.returncode == 2 and "nope.jsonl: results file not found" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "score": 1.0}\n{"id": 2, "score": "high"}\n')
    wrong = run_cli("validate", str(labelled), "--scores", str(bad), cwd=tmp_path)
    assert wrong.returncode == 2, wrong.stderr
    assert "bad.jsonl:2: not a grade (score:" in wrong.stderr and "Traceback" not in wrong.stderr
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": 1, "score": 1.0}\n{"id": 2, "score": 0.0}\n')
    typo = run_cli(
        "validate", str(labelled), "--scores", str(good), "--by", "metadata.subjet", cwd=tmp_path
    )
    assert typo.returncode == 0, typo.stderr
    assert "no labelled row has 'metadata.subjet'" in " ".join(typo.stderr.split())


def test_slices_show_auroc_when_the_grader_gives_scores(tmp_path):
    rows = [
        {"id": i, "response": "r", "label": i % 2 == 0, "metadata": {"subject": "ab"[i % 4 // 2]}}
        for i in range(40)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        "".join(
            json.dumps({"id": i, "score": (0.6 if i % 2 == 0 else 0.4) + i / 1000}) + "\n"
            for i in range(40)
        )
    )
    result = run_cli(
        "validate", str(data), "--scores", str(scores), "--by", "metadata.subject", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    by_subject = result.stdout.split("by metadata.subject")[1]
    assert "AUROC" in by_subject and by_subject.count("1.000") >= 2  # both slices separate


def test_a_grader_that_takes_no_side_is_never_credited_for_it():
    # a pairwise judge that ties (or flips with the order) on every pair: its pass/fail is
    # "fail", which used to agree with every label that prefers the baseline (here half)
    rows = [make(label, False) for label in (True, False, True, False)]
    samples = [s for s, _ in rows]
    grades = [Grade(score=0.5, passed=False, flags=["abstained"]) for _ in rows]
    o = validate_grades(samples, grades).overall
    assert o.accuracy.estimate == 0.0
    assert o.abstention_rate is not None and o.abstention_rate.estimate == 1.0
    assert o.confusion.abstained == 4 and o.confusion.true_fail == 0
    assert o.false_pass_rate.estimate == 0.0  # an abstention is not a pass either
    assert o.false_fail_rate.estimate == 1.0  # but every right response went unrewarded
    report = validate_grades(samples, grades)
    assert {d.kind for d in report.disagreements} == {"abstained"}
    # a judge that decides gets the credit it earns, and no abstention
    decided = [Grade(score=float(s.label), passed=bool(s.label)) for s in samples]
    o = validate_grades(samples, decided).overall
    assert (o.accuracy.estimate, o.confusion.abstained) == (1.0, 0)
    assert o.abstention_rate is not None and o.abstention_rate.estimate == 0.0
