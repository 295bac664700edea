from __future__ import annotations

import math
import statistics

import pytest

from truegrade.stats import summarize
from truegrade.stats._mean import mean_se


def test_unclustered_is_the_textbook_standard_error():
    values = [0.1, 0.7, 0.3, 0.9, 0.4, 1.0]
    result = mean_se(values)
    assert result.mean == pytest.approx(statistics.fmean(values))
    assert result.se == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)))


def test_clustered_matches_the_sandwich_formula_by_hand():
    # two clusters of perfectly correlated values: the naive SE badly understates the error
    values = [1, 1, 1, 0, 0, 0]
    clusters = ["a", "a", "a", "b", "b", "b"]
    clustered = mean_se(values, clusters)
    # residual sums: +1.5 and -1.5; var = G/(G-1) * (1.5^2 + 1.5^2) / n^2 = 2 * 4.5 / 36
    assert clustered.se == pytest.approx(math.sqrt(2 * 4.5 / 36))
    assert clustered.se > mean_se(values).se
    assert clustered.clusters == 2


def test_degenerate_inputs():
    assert math.isnan(mean_se([]).mean)
    assert math.isnan(mean_se([1.0]).se)
    with pytest.raises(ValueError, match="cluster ids"):
        mean_se([1, 2], ["a"])


def test_summary_counts_errors_verdicts_and_flags():
    records = [
        {"score": 1.0, "passed": True, "flags": ["exact_match"], "error": None},
        {"score": 0.0, "passed": False, "flags": ["hedged"], "error": None},
        {"score": 0.0, "passed": None, "flags": ["timeout"], "error": "killed"},
        {"score": 0.5, "passed": None, "flags": [], "error": None},
    ]
    summary = summarize(records)
    assert (summary.rows, summary.errors, summary.verdicts, summary.passed) == (4, 1, 2, 1)
    assert summary.pass_rate == 0.5
    assert summary.score.n == 3 and summary.score.mean == pytest.approx(0.5)
    assert summary.flags == {"exact_match": 1, "hedged": 1, "timeout": 1}
