"""Bias measurements from recorded verdicts: each one detects the bias it names, and only it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.reference import ALPACA_EVAL
from truegrade.lc import PreferenceTable, bias_report, read_preferences
from truegrade.lc._bias import length_preference, score_length_correlation

ALPACA = ALPACA_EVAL


def verdicts(seed, *, length_bias, first_bias, n=3000):
    """Pairs of equal quality judged by a judge with the given biases (order known)."""
    rng = np.random.default_rng(seed)
    model_chars = rng.uniform(100, 2000, n)
    baseline_chars = rng.uniform(100, 2000, n)
    first_is_model = rng.random(n) < 0.5
    logit = length_bias * np.sign(model_chars - baseline_chars)
    logit += np.where(first_is_model, first_bias, -first_bias)
    preference = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    return PreferenceTable(
        models=np.array(["m"] * n),
        instructions=np.array([str(i // 2) for i in range(n)]),
        preference=preference,
        model_chars=model_chars,
        baseline_chars=baseline_chars,
        baseline="base",
        first_is_model=first_is_model,
    )


def test_a_length_biased_judge_is_caught_and_an_unbiased_one_is_not():
    biased = bias_report(verdicts(0, length_bias=0.8, first_bias=0.0))
    fair = bias_report(verdicts(1, length_bias=0.0, first_bias=0.0))
    assert biased.prefers_longer.ci_low > 0.6
    assert fair.prefers_longer.contains(0.5)
    assert fair.prefers_first.contains(0.5)


def test_a_position_biased_judge_is_caught_separately_from_length():
    report = bias_report(verdicts(2, length_bias=0.0, first_bias=0.7))
    assert report.prefers_first.ci_low > 0.6
    assert report.prefers_longer.contains(0.5)


def test_pairs_of_equal_length_do_not_count_for_length_preference():
    estimate = length_preference([1.0, 0.0, 0.0], [10, 5, 7], [10, 9, 3])
    assert estimate.n == 2
    assert estimate.estimate == 0.5  # prefers the shorter in one, the longer in the other


def test_score_length_correlation_with_a_clustered_interval():
    rng = np.random.default_rng(3)
    lengths = rng.uniform(50, 3000, 600)
    scores = np.round(np.clip(3 + lengths / 600 + rng.normal(0, 1.5, 600), 1, 10))
    e = score_length_correlation(scores, lengths, clusters=[i // 3 for i in range(600)])
    assert e.ci_low > 0.3
    assert e.clusters == 200
    flat = score_length_correlation(rng.integers(1, 11, 600), lengths)
    assert flat.contains(0.0)
    assert np.isnan(score_length_correlation([1, 1, 1], [1, 2, 3]).estimate)


def test_consistency_and_notes_when_the_order_is_unknown():
    table = verdicts(4, length_bias=0.0, first_bias=0.0)
    unordered = PreferenceTable(
        models=table.models,
        instructions=table.instructions,
        preference=table.preference,
        model_chars=table.model_chars,
        baseline_chars=table.baseline_chars,
        baseline="base",
    )
    report = bias_report(unordered, consistent=[1, 0, 1, 1])
    assert report.prefers_first is None
    assert any("order the judge saw is not recorded" in note for note in report.notes)
    assert report.position_consistency.estimate == 0.75
    assert report.to_dict()["prefers_first"] is None


@pytest.mark.shared_data
def test_alpacaeval_judge_prefers_longer_outputs():
    report = bias_report(read_preferences(ALPACA / "preferences.csv.gz"))
    # raw, this mixes length with quality (the baseline is both longer and better than most)
    assert report.prefers_longer.ci_low > 0.8
    assert report.prefers_longer.clusters == 805
    # the verbose variant of a model is preferred for its length more than the concise one
    by_model = report.prefers_longer_by_model
    assert by_model["gpt-3.5-turbo-1106_verbose"].estimate > 0.5
