"""``truegrade validate`` on preference data: detected from the rows or asked for with
``--pairwise``; accuracy, slices, wrong pairs and the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.graders.reward_model.fixtures import tiny_rms
from truegrade.cli import app

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
    # longer wins: r0 and r2 right, r1 wrong, r3 a tie
    assert (report["pairs"], report["graded"], report["ties"]) == (4, 4, 1)
    assert report["accuracy"]["estimate"] == pytest.approx(2.5 / 4)
    assert report["slices"]["metadata.subset"]["chat"]["accuracy"]["estimate"] == 0.5
    assert report["slices"]["metadata.subset"]["safety"]["accuracy"]["estimate"] == 0.75
    assert [w["id"] for w in report["wrong"]] == ["r1", "r3"]


def test_pairwise_is_asked_for_when_rows_also_carry_labels(tmp_path):
    data = write(tmp_path, [{**r, "response": r["chosen"], "label": True} for r in PAIRS])
    grader = f"{tmp_path / 'rewards.py'}:length"
    labels = runner.invoke(app, ["validate", str(data), "-g", grader])
    assert labels.exit_code == 0, labels.output
    assert "validation against labels" in labels.output
    pairs = runner.invoke(app, ["validate", str(data), "-g", grader, "--pairwise"])
    assert pairs.exit_code == 0, pairs.output
    assert "pairwise accuracy" in pairs.output and "62.5%" in pairs.output


def test_pairwise_needs_a_grader_and_pairs(tmp_path):
    data = write(tmp_path, PAIRS)
    scores = runner.invoke(app, ["validate", str(data), "--scores", str(data)])
    assert scores.exit_code == 2 and "give --grader" in scores.output
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
