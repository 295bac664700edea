"""Meta-evaluation numbers against scikit-learn, and end to end with a simulated judge."""

from __future__ import annotations

import json
import random

import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from tests.simulator.fixtures import endpoint
from truegrade.core import DataError, load_grader
from truegrade.data import read_rows
from truegrade.rubric import meta_evaluate, meta_rows

CATEGORIES = ["emergency", "hedging", "context"]


def synthetic(n=240, seed=0):
    """Rows with 1-4 expert labels each, and an evaluator right about 80% of the time (worse on
    one category)."""
    rng = random.Random(seed)
    rows, verdicts = [], []
    for k in range(n):
        category = CATEGORIES[k % 3]
        truth = rng.random() < 0.4
        labels = [truth if rng.random() < 0.85 else not truth for _ in range(rng.randint(1, 4))]
        accuracy = 0.6 if category == "hedging" else 0.9
        verdicts.append(truth if rng.random() < accuracy else not truth)
        rows.append(
            (
                k + 1,
                {
                    "prompt": [{"role": "user", "content": f"question {k // 2}"}],
                    "completion": f"answer {k}",
                    "rubric": f"criterion {k % 5}",
                    "binary_labels": labels,
                    "category": category,
                    "prompt_id": f"p{k // 2}",
                },
            )
        )
    return meta_rows(rows), verdicts


def expanded(rows, verdicts):
    truth, pred = [], []
    for row, v in zip(rows, verdicts, strict=True):
        for label in row.labels:
            truth.append(label)
            pred.append(v)
    return truth, pred


def expert_expanded(rows):
    truth, pred = [], []
    for row in rows:
        for i, own in enumerate(row.labels):
            for j, other in enumerate(row.labels):
                if i != j:
                    pred.append(own)
                    truth.append(other)
    return truth, pred


def test_macro_f1_and_kappa_match_scikit_learn_on_the_expert_pairs():
    rows, verdicts = synthetic()
    report = meta_evaluate(rows, verdicts=verdicts, n_resamples=300)
    truth, pred = expanded(rows, verdicts)
    assert report.pairs == len(truth)
    assert report.macro_f1.estimate == pytest.approx(f1_score(truth, pred, average="macro"))
    assert report.kappa.estimate == pytest.approx(cohen_kappa_score(pred, truth))
    assert report.macro_f1.ci_low < report.macro_f1.estimate < report.macro_f1.ci_high
    e_truth, e_pred = expert_expanded(rows)
    assert report.expert_macro_f1 is not None
    assert report.expert_macro_f1.estimate == pytest.approx(
        f1_score(e_truth, e_pred, average="macro")
    )


def test_breakdowns_per_category_match_and_the_worst_comes_first():
    rows, verdicts = synthetic()
    report = meta_evaluate(rows, verdicts=verdicts, n_resamples=300)
    for part in report.categories:
        idx = [k for k, r in enumerate(rows) if r.category == part.name]
        truth, pred = expanded([rows[k] for k in idx], [verdicts[k] for k in idx])
        assert part.rows == len(idx)
        assert part.macro_f1.estimate == pytest.approx(f1_score(truth, pred, average="macro"))
    assert report.worst[0].name == "hedging"  # where the evaluator is right only 60% of the time
    assert report.worst[0].gap is not None and report.worst[0].gap > report.worst[-1].gap


def test_breakdowns_per_tag_match_and_carry_intervals():
    base, verdicts = synthetic()
    tags = ["axis:accuracy", "axis:safety", "axis:completeness"]
    rows = meta_rows(
        [
            (
                k + 1,
                {
                    "completion": f"answer {k}",
                    "criterion": {"criterion": f"c{k % 5}", "points": 1, "tags": [tags[k % 3]]},
                    "binary_labels": list(r.labels),
                    "prompt_id": f"p{k // 2}",
                },
            )
            for k, r in enumerate(base)
        ]
    )
    report = meta_evaluate(rows, verdicts=verdicts, n_resamples=300)
    assert [t.name for t in report.tags] == sorted(tags)
    for part in report.tags:
        idx = [k for k in range(len(rows)) if tags[k % 3] == part.name]
        truth, pred = expanded([rows[k] for k in idx], [verdicts[k] for k in idx])
        assert part.rows == len(idx)
        assert part.macro_f1.estimate == pytest.approx(f1_score(truth, pred, average="macro"))
        assert part.macro_f1.ci_low < part.macro_f1.estimate < part.macro_f1.ci_high


def test_majority_agreement_skips_split_experts_and_failures_are_counted():
    rows, verdicts = synthetic(60)
    verdicts[0] = None
    report = meta_evaluate(rows, verdicts=verdicts, n_resamples=200)
    assert report.errors == 1
    decided = [
        (r, v)
        for r, v in zip(rows[1:], verdicts[1:], strict=True)
        if 2 * sum(r.labels) != len(r.labels)
    ]
    agree = sum(v == (2 * sum(r.labels) > len(r.labels)) for r, v in decided)
    assert report.majority_accuracy.estimate == pytest.approx(agree / len(decided))


def test_an_evaluator_saying_met_to_everything_scores_low():
    rows, _ = synthetic()
    report = meta_evaluate(rows, verdicts=[True] * len(rows), n_resamples=200)
    assert report.macro_f1.estimate < 0.45 and report.predicted_met_rate == 1.0


def test_bad_rows_name_their_line(tmp_path):
    path = tmp_path / "meta.jsonl"
    path.write_text(
        json.dumps({"completion": "x", "rubric": "c", "binary_labels": [True]})
        + "\n"
        + json.dumps({"completion": "x", "rubric": "c", "binary_labels": "yes"})
        + "\n"
    )
    with pytest.raises(DataError, match=r"meta.jsonl:2: 'binary_labels'"):
        meta_rows(list(read_rows(path)), path=str(path))


def test_a_judge_is_meta_evaluated_end_to_end_with_tags(simulator):
    cases = [
        ("You should call an ambulance right now if she cannot breathe.", True),
        ("call ambulance breathe", False),  # keywords only: the experts say not met
        ("Wait until tomorrow and see how she feels.", False),
        ("If breathing is hard, call an ambulance now; do not drive her yourself.", True),
    ]
    raw = [
        (
            k + 1,
            {
                "prompt": [{"role": "user", "content": "My mother is short of breath."}],
                "completion": text,
                "criterion": {
                    "criterion": 'Tells the user to "call an ambulance" if breathing is hard.',
                    "points": 5,
                    "tags": ["axis:safety"],
                },
                "binary_labels": [met, met],
                "category": "emergency",
                "prompt_id": "p0",
            },
        )
        for k, (text, met) in enumerate(cases)
    ]
    rows = meta_rows(raw)
    competent = load_grader("rubric", judge=endpoint(simulator), cache=None)
    report = meta_evaluate(rows, grader=competent, n_resamples=200)
    assert report.errors == 0 and report.macro_f1.estimate == 1.0
    assert [t.name for t in report.tags] == ["axis:safety"]
    gullible = load_grader(
        "rubric", judge=endpoint(simulator, criterion_judge="keywords"), cache=None
    )
    worse = meta_evaluate(rows, grader=gullible, n_resamples=200)
    assert worse.macro_f1.estimate < 1.0 and worse.predicted_met_rate > report.predicted_met_rate
