"""Scaling raw rewards: sigmoid and z-scores (given, or from a reference set), by hand."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from truegrade.core import Sample, load_grader
from truegrade.graders.reward_model import RewardModelFlag
from truegrade.graders.reward_model._scale import ScoreScale, sigmoid

ROWS = [
    Sample(id=i, prompt="two plus two", response=r)
    for i, r in enumerate(["four", "the answer is four", "five", "i think it is ten", "no"])
]


def grader(path, **options):
    return load_grader({"type": "reward_model", "path": str(path), "device": "cpu", **options})


def raw(path, rows=ROWS) -> list[float]:
    return [g.score for g in grader(path).grade_batch(rows)]


def test_sigmoid_is_stable_at_the_extremes():
    assert sigmoid(0.0) == 0.5
    assert sigmoid(3.0) == pytest.approx(1 / (1 + math.exp(-3.0)))
    assert sigmoid(-3.0) == pytest.approx(1 - sigmoid(3.0))
    assert sigmoid(800.0) == 1.0
    assert sigmoid(-800.0) == 0.0


def test_a_reference_scale_uses_the_population_standard_deviation():
    scale = ScoreScale.from_reference([1.0, 2.0, 3.0, 6.0], "ref")
    assert scale.mean == 3.0
    assert scale.std == pytest.approx(statistics.pstdev([1.0, 2.0, 3.0, 6.0]))
    assert scale.apply(6.0) == pytest.approx(3.0 / statistics.pstdev([1.0, 2.0, 3.0, 6.0]))
    with pytest.raises(ValueError, match="at least 2"):
        ScoreScale.from_reference([1.0], "ref")
    with pytest.raises(ValueError, match="no spread"):
        ScoreScale.from_reference([2.0, 2.0], "ref")


def test_raw_scores_are_the_default_and_sigmoid_keeps_the_raw_one(tiny_rms):
    base = raw(tiny_rms["a"])
    grades = grader(tiny_rms["a"], normalize="sigmoid", pass_threshold=0.5).grade_batch(ROWS)
    for value, g in zip(base, grades, strict=True):
        assert g.score == pytest.approx(sigmoid(value))
        assert g.subscores == {"raw": pytest.approx(value)}
        assert g.passed is (g.score >= 0.5)
    assert [g.subscores for g in grader(tiny_rms["a"]).grade_batch(ROWS)] == [{}] * len(ROWS)
    assert {g.passed for g in grader(tiny_rms["a"]).grade_batch(ROWS)} == {None}


def test_a_zscore_with_the_given_statistics(tiny_rms):
    base = raw(tiny_rms["a"])
    grades = grader(tiny_rms["a"], normalize="zscore", mean=0.5, std=2.0).grade_batch(ROWS)
    assert [g.score for g in grades] == pytest.approx([(v - 0.5) / 2.0 for v in base])
    assert "z-score (mean 0.5, std 2" in grades[0].explanation


def test_a_zscore_against_a_reference_set(tiny_rms, tmp_path):
    reference = [
        {"id": f"r{i}", "prompt": "hello", "response": text}
        for i, text in enumerate(["world", "good answer", "bad answer", "paris", "yes", "no"])
    ]
    reference.append({"id": "unanswered", "prompt": "hello"})  # no response: not part of it
    (tmp_path / "ref.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reference))
    ref_raw = raw(tiny_rms["a"], [Sample.from_row(r) for r in reference[:-1]])
    mean, std = statistics.fmean(ref_raw), statistics.pstdev(ref_raw)
    spec = tmp_path / "rm.yaml"
    spec.write_text(
        f"type: reward_model\npath: {tiny_rms['a']}\ndevice: cpu\n"
        "normalize: zscore\nreference_set: ref.jsonl\npass_threshold: 0.0\n"
    )
    g = load_grader(spec)
    assert g.spec["reference_set"] == str((tmp_path / "ref.jsonl").resolve())
    grades = g.grade_batch(ROWS)
    assert [x.score for x in grades] == pytest.approx(
        [(v - mean) / std for v in raw(tiny_rms["a"])]
    )
    assert [x.passed for x in grades] == [x.score >= 0 for x in grades]
    assert "ref.jsonl (6 samples)" in grades[0].explanation


def test_an_unusable_reference_set_fails_the_samples_with_a_reason(tiny_rms, tmp_path):
    (tmp_path / "one.jsonl").write_text(json.dumps({"id": 1, "response": "yes"}) + "\n")
    g = grader(tiny_rms["a"], normalize="zscore", reference_set=str(tmp_path / "one.jsonl"))
    grades = g.grade_batch(ROWS[:2])
    assert all(x.error and "at least 2" in x.error for x in grades)
    assert all(RewardModelFlag.REFERENCE_SET in x.flags for x in grades)
