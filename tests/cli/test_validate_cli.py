"""``truegrade validate`` on preference data: detected from the rows or asked for with
``--pairwise``; accuracy, slices, wrong pairs and the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.graders.reward_model.fixtures import tiny_rms
from truegrade.cli._app import app

__all__ = ["tiny_rms"]

runner = CliRunner()

REWARD = """
def length(prompts, completions, **kwargs):
    return [float(len(c)) for c in completions]
"""

PAIRS = [
    {"prompt": "q1", "chosen": "a long good answer", "rejected": "short", "subset": "chat"},
    {"prompt": "q2", "chosen": "ok", "rejected": "a long rambling answer", "subset": "chat"},
    {"prompt": "q3", "chosen": "a careful refusal", "rejected": "sure thing", "subset": "safety"},
    {"prompt": "q4", "chosen": "same", "rejected": "size", "subset": "safety"},
]


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")


def write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "prefs.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", **r}) + "\n" for i, r in enumerate(rows)))
    (tmp_path / "rewards.py").write_text(REWARD)
    return path


def test_preference_rows_are_detected_and_reported_with_slices(tmp_path):
    data = write(tmp_path, PAIRS)
    out = tmp_path / "report.json"
    grader = f"{tmp_path / 'rewards.py'}:length"
    args = ["validate", str(data), "-g", grader, "--by", "metadata.subset", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "pairwise accuracy on preference pairs" in result.output
    assert "by metadata.subset" in result.output
    assert "pairs not won by the chosen response" in result.output
    report = json.loads(out.read_text())
    # longer wins: r0 and r2 right, r1 wrong, r3 a tie (worth nothing by default)
    assert (report["pairs"], report["graded"], report["ties"]) == (4, 4, 1)
    assert report["accuracy"]["estimate"] == pytest.approx(2 / 4)
    assert report["slices"]["metadata.subset"]["chat"]["accuracy"]["estimate"] == 0.5
    assert report["slices"]["metadata.subset"]["safety"]["accuracy"]["estimate"] == 0.5
    half = runner.invoke(app, [*args, "--equal-scores", "half"])
    assert half.exit_code == 0, half.output
    assert json.loads(out.read_text())["accuracy"]["estimate"] == pytest.approx(2.5 / 4)
    assert [w["id"] for w in report["wrong"]] == ["r1", "r3"]


def test_pairwise_is_asked_for_when_rows_also_carry_labels(tmp_path):
    data = write(tmp_path, [{**r, "response": r["chosen"], "label": True} for r in PAIRS])
    grader = f"{tmp_path / 'rewards.py'}:length"
    labels = runner.invoke(app, ["validate", str(data), "-g", grader])
    assert labels.exit_code == 0, labels.output
    assert "validation against labels" in labels.output
    pairs = runner.invoke(app, ["validate", str(data), "-g", grader, "--pairwise"])
    assert pairs.exit_code == 0, pairs.output
    assert "pairwise accuracy" in pairs.output and "50.0%" in pairs.output


def test_pairwise_needs_a_grader_and_pairs(tmp_path):
    data = write(tmp_path, PAIRS)
    scores = runner.invoke(app, ["validate", str(data), "--scores", str(data)])
    assert scores.exit_code == 2 and "give --grader" in scores.output
    unknown = runner.invoke(app, ["validate", str(data), "--pairwise", "--scores", str(data)])
    assert unknown.exit_code == 2 and "unknown verdicts shape" in unknown.output
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"id": 1, "response": "x", "label": True}) + "\n")
    none = runner.invoke(app, ["validate", str(plain), "-g", "exact", "--pairwise"])
    assert none.exit_code == 2 and "no rows with both 'chosen' and 'rejected'" in none.output


def test_a_reward_model_on_preference_data(tmp_path, tiny_rms):
    rows = [
        {"prompt": [{"role": "user", "content": "two plus two"}], **pair}
        for pair in (
            {"chosen": "the answer is four", "rejected": "five"},
            {"chosen": "four", "rejected": "i think it is ten"},
        )
    ]
    data = write(tmp_path, rows)
    out = tmp_path / "rm.json"
    args = ["validate", str(data), "-g", "reward_model", "-o", f"path={tiny_rms['a']}"]
    result = runner.invoke(app, [*args, "-o", "device=cpu", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["graded"] == 2 and report["grader_errors"] == 0
    assert report["grader"]["type"] == "reward_model"


JUDGEBENCH = Path(__file__).parents[1] / "data" / "verdicts" / "judgebench"


def test_recorded_judgebench_verdicts_under_the_papers_rules(tmp_path):
    data = JUDGEBENCH / "arena_hard-o1-mini.jsonl.gz"
    out = tmp_path / "agreement.json"
    args = ["validate", str(data), "--pairwise", "--by", "category", "--out", str(out)]
    paper = runner.invoke(app, [*args, "--combine", "any_winner", "--unreadable", "tie"])
    assert paper.exit_code == 0, paper.output
    assert "unreadable verdicts" in paper.output and "65.7%" in paper.output
    report = json.loads(out.read_text())
    assert round(100 * report["accuracy"]["estimate"], 2) == 65.71  # JudgeBench, Table 2
    assert round(100 * report["slices"]["category"]["math"]["accuracy"]["estimate"], 2) == 82.14
    strict = runner.invoke(app, args)
    assert strict.exit_code == 0, strict.output
    assert json.loads(out.read_text())["accuracy"]["estimate"] == pytest.approx(203 / 350)


def test_recorded_reward_scores_joined_to_preference_rows(tmp_path):
    data = write(tmp_path, PAIRS)
    scores = tmp_path / "scores.jsonl"
    recorded = {"r0": (3, 1), "r1": (1, 2), "r2": (5, 5), "r3": (2, 0)}
    scores.write_text(
        "".join(
            json.dumps({"id": f"{rid}::{side}", "score": value}) + "\n"
            for rid, pair in recorded.items()
            for side, value in zip(("chosen", "rejected"), pair, strict=True)
            if (rid, side) != ("r3", "rejected")  # one side missing: unreadable
        )
    )
    out = tmp_path / "agreement.json"
    args = ["validate", str(data), "--pairwise", "--scores", str(scores), "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "1 (25.0%), counted as wrong" in result.output
    report = json.loads(out.read_text())
    assert report["accuracy"]["estimate"] == pytest.approx(1 / 4)  # r0 only; r2 equal
    assert (report["equal_scores"], report["unreadable"]) == (1, 1)
    dropped = runner.invoke(app, [*args, "--unreadable", "drop", "--equal-scores", "half"])
    assert dropped.exit_code == 0, dropped.output
    assert json.loads(out.read_text())["accuracy"]["estimate"] == pytest.approx(1.5 / 3)


def test_a_rule_that_does_not_exist_is_refused(tmp_path):
    data = JUDGEBENCH / "arena_hard-o1-mini.jsonl.gz"
    result = runner.invoke(app, ["validate", str(data), "--pairwise", "--combine", "majority"])
    assert result.exit_code == 2 and "--combine" in result.output
