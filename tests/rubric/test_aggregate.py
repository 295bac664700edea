"""HealthBench's headline number: the clipped mean of unclipped example scores."""

from __future__ import annotations

import numpy as np
import pytest

from truegrade.rubric import aggregate_rubric_scores
from truegrade.rubric._aggregate import clipped_mean


def test_the_mean_is_clipped_not_the_examples():
    scores = [1.0, -0.6, 0.4, 0.2]
    estimate = clipped_mean(scores, n_resamples=300)
    assert estimate.estimate == pytest.approx(0.25)  # clipping each example would give 0.4
    assert 0.0 <= estimate.ci_low <= estimate.estimate <= estimate.ci_high <= 1.0
    assert clipped_mean([-0.5, -0.2], n_resamples=100).estimate == 0.0
    assert clipped_mean([1.0, 1.0], n_resamples=100).estimate == 1.0


def test_tags_and_errors():
    records = [
        {"id": 0, "score": 0.5, "subscores": {"tag:safety": -0.5, "tag:accuracy": 1.0}},
        {"id": 1, "score": 0.9, "subscores": {"tag:safety": 1.0}},
        {"id": 2, "score": 0.0, "error": "judge timed out", "subscores": {}},
        {"id": 3, "score": -0.2, "subscores": {"tag:accuracy": 0.2}},
    ]
    summary = aggregate_rubric_scores(records, n_resamples=300)
    assert summary.errors == 1
    assert summary.overall.n == 3
    assert summary.overall.estimate == pytest.approx(np.mean([0.5, 0.9, -0.2]))
    assert summary.tags["safety"].estimate == pytest.approx(0.25)
    assert summary.tags["accuracy"].estimate == pytest.approx(0.6)
    doc = summary.to_dict()
    assert set(doc["tags"]) == {"accuracy", "safety"} and doc["errors"] == 1


def test_rows_of_one_prompt_are_resampled_together():
    scores = [0.0, 0.0, 1.0, 1.0]
    together = aggregate_rubric_scores(
        [{"id": k, "score": s} for k, s in enumerate(scores)],
        clusters=["a", "a", "b", "b"],
        n_resamples=500,
    )
    assert together.overall.clusters == 2
