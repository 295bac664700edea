"""Length-controlled win rates: recovery on synthetic verdicts, and AlpacaEval's leaderboard
reproduced from its real verdicts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from tests.reference import ALPACA_EVAL
from truegrade.core import DataError
from truegrade.lc import (
    LCOptions,
    PreferenceTable,
    compare_to_leaderboard,
    length_controlled,
    read_leaderboard,
    read_preferences,
)
from truegrade.lc._glm import sigmoid

ROOT = Path(__file__).resolve().parents[2]
ALPACA = ALPACA_EVAL


def synthetic(seed=0, instructions=400, length_effect=1.5):
    """Verdicts from a length-biased judge: the truth (length term zeroed) is known."""
    rng = np.random.default_rng(seed)
    quality = {"short_good": 0.5, "verbose_bad": -0.8, "plain": -0.3, "terse": 0.0}
    quality.update({f"other{i}": float(q) for i, q in enumerate(rng.normal(-0.5, 0.8, 6))})
    verbosity = {"short_good": 0.6, "verbose_bad": 1.8, "plain": 1.0, "terse": 0.5}
    verbosity.update({f"other{i}": float(v) for i, v in enumerate(rng.uniform(0.6, 1.6, 6))})
    gamma = rng.normal(0, 1, instructions)
    base_len = rng.uniform(300, 2500, instructions)
    rows = {k: [] for k in ("m", "x", "y", "lm", "lb")}
    truth = {}
    for model, theta in quality.items():
        lengths = 1200 * verbosity[model] * rng.lognormal(0, 0.5, instructions)
        d = lengths - base_len
        z = theta + length_effect * np.tanh(d / d.std(ddof=1)) + gamma
        rows["m"] += [model] * instructions
        rows["x"] += [str(i) for i in range(instructions)]
        rows["y"] += list((rng.random(instructions) < sigmoid(z)).astype(float))
        rows["lm"] += list(lengths)
        rows["lb"] += list(base_len)
        truth[model] = 100 * float(sigmoid(theta + gamma).mean())
    table = PreferenceTable(
        models=np.array(rows["m"]),
        instructions=np.array(rows["x"]),
        preference=np.array(rows["y"]),
        model_chars=np.array(rows["lm"]),
        baseline_chars=np.array(rows["lb"]),
        baseline="base",
    )
    return table, truth


def test_length_control_recovers_the_win_rate_a_length_neutral_judge_would_give():
    table, truth = synthetic()
    report = length_controlled(table)
    verbose = report.model("verbose_bad")
    # the verbose model's raw win rate is inflated by the judge's length bias; LC removes most
    raw_bias = verbose.win_rate_pct - truth["verbose_bad"]
    assert raw_bias > 10
    assert abs(verbose.lc_win_rate_pct - truth["verbose_bad"]) < raw_bias / 2
    for name, true_lc in truth.items():
        entry = report.model(name)
        assert abs(entry.lc_win_rate_pct - true_lc) < 3 * entry.lc_standard_error_pct + 1, name
    assert report.pooled_effects["length"] == pytest.approx(1.5, abs=0.3)
    assert report.model("short_good").coefficients["length"] > 0.5  # prefers longer: positive


def test_lc_ranks_by_quality_where_raw_ranks_partly_by_verbosity():
    from scipy.stats import spearmanr

    table, truth = synthetic(seed=1)
    report = length_controlled(table, options=LCOptions(n_splits=0))
    names = sorted(truth)
    true = [truth[m] for m in names]
    raw = spearmanr([report.model(m).win_rate_pct for m in names], true).statistic
    lc = spearmanr([report.model(m).lc_win_rate_pct for m in names], true).statistic
    assert lc >= 0.9
    assert lc > raw


def test_raw_win_rate_and_counts_follow_alpacaeval_definitions():
    table, _ = synthetic(instructions=50)
    entry = length_controlled(table, options=LCOptions(n_splits=0)).model("plain")
    y = table.preference[table.rows_of("plain")]
    assert entry.win_rate_pct == pytest.approx(100 * y.mean())
    assert entry.standard_error_pct == pytest.approx(100 * y.std(ddof=1) / np.sqrt(y.size))
    assert entry.n_wins + entry.n_losses + entry.n_draws == entry.n == 50


def test_extra_covariates_are_controlled_like_length():
    table, _ = synthetic(seed=2, length_effect=0.0)
    rng = np.random.default_rng(5)
    lists = rng.poisson(3, len(table)).astype(float)
    # a judge that loves markdown lists: add list-driven wins to one model
    pref = table.preference.copy()
    fan = table.models == "terse"
    lists[fan] += 6
    pref[fan] = np.where(rng.random(fan.sum()) < 0.35, 1.0, pref[fan])
    listy = PreferenceTable(
        models=table.models,
        instructions=table.instructions,
        preference=pref,
        model_chars=table.model_chars,
        baseline_chars=table.baseline_chars,
        baseline="base",
        covariates={"markdown_lists": (lists, np.full(len(table), 3.0))},
    )
    fast = LCOptions(n_splits=0)
    plain = length_controlled(listy, options=fast).model("terse")
    controlled = length_controlled(
        listy, controls=["length", "markdown_lists"], options=fast
    ).model("terse")
    assert "markdown_lists" in controlled.coefficients
    assert controlled.lc_win_rate_pct < plain.lc_win_rate_pct
    with pytest.raises(ValueError, match="unknown covariate 'headers'"):
        length_controlled(listy, controls=["headers"])


def test_a_table_with_only_the_baseline_is_refused():
    only = PreferenceTable(
        models=np.array(["base"] * 3),
        instructions=np.array(["1", "2", "3"]),
        preference=np.full(3, 0.5),
        model_chars=np.ones(3),
        baseline_chars=np.ones(3),
        baseline="base",
    )
    with pytest.raises(ValueError, match="no verdicts on any model other than the baseline"):
        length_controlled(only)


def test_preferences_outside_zero_one_are_refused():
    with pytest.raises(ValueError, match="probabilities"):
        PreferenceTable(
            models=np.array(["a"]),
            instructions=np.array(["1"]),
            preference=np.array([1.5]),
            model_chars=np.ones(1),
            baseline_chars=np.ones(1),
            baseline="b",
        )


def write_csv(path, rows):
    header = (
        "model,instruction_idx,generator_1,generator_2,preference,output_1_chars,output_2_chars"
    )
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_reader_converts_alpacaeval_preferences_and_drops_exact_duplicates(tmp_path):
    path = write_csv(
        tmp_path / "prefs.csv",
        [
            "m,0,base,m,2.0,100,300",
            "m,0,base,m,2.0,100,300",  # an exact repeat
            "m,1,base,m,0,100,100",  # 0 is AlpacaEval's draw
            "m,2,base,m,1.25,100,50",
            "m,3,base,m,,100,50",  # the judge failed: no verdict
        ],
    )
    table = read_preferences(path)
    assert table.baseline == "base"
    assert table.duplicates_dropped == 1
    assert table.preference.tolist() == [1.0, 0.5, 0.25]
    assert table.model_chars.tolist() == [300.0, 100.0, 50.0]


def test_reader_turns_around_rows_where_the_baseline_is_second(tmp_path):
    path = write_csv(tmp_path / "p.csv", ["m,0,base,m,1.2,10,20", "m,1,m,base,1.2,30,40"])
    table = read_preferences(path, baseline="base")
    assert table.preference == pytest.approx([0.2, 0.8])
    assert table.model_chars.tolist() == [20.0, 30.0]


def test_reader_errors_name_the_line(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", ["m,0,base,m,2.0,100,300", "m,1,base,m,7,100,300"])
    with pytest.raises(DataError, match=r"bad.csv:3: preference must be in \[1, 2\]"):
        read_preferences(bad)
    nan = write_csv(tmp_path / "nan.csv", ["m,0,base,m,2.0,abc,300"])
    with pytest.raises(DataError, match="output_1_chars is not a number"):
        read_preferences(nan)
    several = write_csv(tmp_path / "s.csv", ["m,0,a,m,2.0,1,3", "m,0,b,m,2.0,1,3"])
    with pytest.raises(DataError, match="several baselines"):
        read_preferences(several)
    with pytest.raises(DataError, match="verdicts file not found"):
        read_preferences(tmp_path / "missing.csv")


def test_annotation_records_give_lengths_and_markdown_covariates(tmp_path):
    records = [
        {
            "instruction": "Q1",
            "output_1": "short",
            "output_2": "# Title\n\n- a\n- b\n1. c",
            "generator_1": "base",
            "generator_2": "m",
            "preference": 2.0,
        },
        {
            "instruction": "Q2",
            "output_1": "## H\n* x",
            "output_2": "plain",
            "generator_1": "base",
            "generator_2": "m",
            "preference": 1.0,
        },
    ]
    path = tmp_path / "annotations.json.gz"
    with gzip.open(path, "wt") as handle:
        json.dump(records, handle)
    table = read_preferences(path)
    lists, base_lists = table.covariates["markdown_lists"]
    headers, base_headers = table.covariates["markdown_headers"]
    assert lists.tolist() == [3.0, 0.0] and base_lists.tolist() == [0.0, 1.0]
    assert headers.tolist() == [1.0, 0.0] and base_headers.tolist() == [0.0, 1.0]
    assert table.model_chars.tolist() == [len(records[0]["output_2"]), 5.0]


@pytest.fixture(scope="module")
def alpaca_report():
    table = read_preferences(ALPACA / "preferences.csv.gz")
    return table, length_controlled(table)


@pytest.mark.shared_data
def test_raw_win_rates_match_the_published_leaderboard(alpaca_report):
    table, report = alpaca_report
    published = read_leaderboard(ALPACA / "leaderboard.csv", column="win_rate")
    errors = read_leaderboard(ALPACA / "leaderboard.csv", column="standard_error")
    agreement = compare_to_leaderboard(report, published, column="win_rate_pct")
    assert agreement.n >= 55
    assert agreement.max_abs_error < 1e-6
    for entry in report.models:
        if entry.model in errors and entry.model != table.baseline:
            assert entry.standard_error_pct == pytest.approx(errors[entry.model], abs=1e-6)
    assert table.duplicates_dropped > 0  # two models' rows are stored twice in the file


@pytest.mark.shared_data
def test_lc_win_rates_reproduce_the_published_leaderboard(alpaca_report):
    _, report = alpaca_report
    published = read_leaderboard(ALPACA / "leaderboard.csv")
    agreement = compare_to_leaderboard(report, published, exclude=["gpt4_gamed"])
    assert agreement.n >= 55
    assert agreement.spearman >= 0.98
    assert agreement.mean_abs_error <= 1.5
    gamed = agreement.excluded["gpt4_gamed"]
    # the truncation attack: LC lifts it from 3.7 but stays far below an honest model
    assert report.model("gpt4_gamed").win_rate_pct < 5 < gamed["ours"] < 25
    assert all(entry.converged for entry in report.models)
    assert report.model(report.baseline).lc_win_rate_pct == 50.0
