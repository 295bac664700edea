"""``truegrade overopt`` and ``truegrade monitor`` end to end, on files as users have them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from truegrade.cli._app import app
from truegrade.core import OutputError
from truegrade.goodhart import synthetic_pool, synthetic_training_log
from truegrade.report import plot_overopt

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # keep paths and messages on one line


PNG = b"\x89PNG\r\n\x1a\n"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory) -> Path:
    pool = synthetic_pool(prompts=150, pool_size=48, noise="student_t", seed=4)
    return write_jsonl(tmp_path_factory.mktemp("pool") / "pool.jsonl", pool.rows())


def test_overopt_writes_curves_fits_peak_and_plot(pool_file, tmp_path):
    out, plot = tmp_path / "curve.json", tmp_path / "curve.png"
    result = runner.invoke(
        app,
        [
            "overopt",
            str(pool_file),
            "--proxy",
            "proxy",
            "--gold",
            "metadata.gold",
            "--group",
            "prompt_id",
            "--resamples",
            "200",
            "--out",
            str(out),
            "--plot",
            str(plot),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "gold peaks at n =" in result.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "truegrade.overopt/1"
    assert doc["input"] == {
        "file": str(pool_file),
        "proxy": "proxy",
        "gold": "metadata.gold",
        "group": "prompt_id",
    }
    assert (doc["prompts"], doc["samples"]) == (150, 7200)
    assert doc["peak"]["overoptimized"] and 6 <= doc["peak"]["n"] <= 23
    assert set(doc["fits"]) == {"gold", "proxy"} and set(doc["fits"]["gold"]) == {"bon", "rl"}
    assert plot.read_bytes().startswith(PNG)


def test_overopt_names_the_bad_line(tmp_path):
    rows = [{"g": 1, "p": 0.5, "q": 1.0}, {"g": 1, "p": "high", "q": 0.0}]
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    result = runner.invoke(
        app, ["overopt", str(data), "--proxy", "p", "--gold", "q", "--group", "g"]
    )
    assert result.exit_code == 2
    assert f"{data}:2:" in result.output and "'p' must be a finite number" in result.output
    rows[1] = {"p": 0.5, "q": 0.0}
    write_jsonl(data, rows)
    result = runner.invoke(
        app, ["overopt", str(data), "--proxy", "p", "--gold", "q", "--group", "g"]
    )
    assert result.exit_code == 2 and f"{data}:2: no 'g'" in result.output


def test_overopt_refuses_an_n_larger_than_every_pool(pool_file):
    result = runner.invoke(
        app,
        [
            "overopt",
            str(pool_file),
            "--proxy",
            "proxy",
            "--gold",
            "metadata.gold",
            "--group",
            "prompt_id",
            "--n",
            "4,100",
        ],
    )
    assert result.exit_code == 2 and "exceeds the largest pool (48 samples)" in result.output


def test_monitor_reports_alerts_with_evidence(tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", synthetic_training_log("constant_batch", seed=2))
    out, plot = tmp_path / "alerts.json", tmp_path / "monitor.png"
    result = runner.invoke(
        app, ["monitor", str(log), "--out", str(out), "--plot", str(plot), "--fail-on-alert"]
    )
    assert result.exit_code == 1, result.output
    assert "every reward is 0" in result.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "truegrade.monitor/1"
    assert doc["input"]["shape"] == "per-sample" and doc["input"]["steps"] == 200
    (alert,) = doc["alerts"]
    assert alert["rule"] == "constant_batch" and alert["start_step"] == 120
    assert len(doc["series"]["step"]) == 200 and "flag:hedged" in doc["series"]
    assert plot.read_bytes().startswith(PNG)


def test_monitor_reads_a_trainer_state_json(tmp_path):
    history = [
        {
            "step": s,
            "reward": 0.02 * s,
            "reward_std": 0.3,
            "loss": 0.1,
            "completions/mean_length": 200.0 + (s % 3),
        }
        for s in range(1, 60)
    ]
    history.insert(5, {"step": 5, "eval_loss": 0.4})  # evaluation and summary entries
    history.append({"step": 59, "train_runtime": 100.0})
    state = tmp_path / "trainer_state.json"
    state.write_text(json.dumps({"global_step": 59, "log_history": history}))
    result = runner.invoke(app, ["monitor", str(state), "--fail-on-alert"])
    assert result.exit_code == 0, result.output
    assert "59 steps" in result.output and "per-step" in result.output
    assert "no alerts" in result.output and "skipped 2 rows: no reward" in result.output
    state.write_text(json.dumps({"log_history": [{"step": 1, "loss": 0.3}]}))
    result = runner.invoke(app, ["monitor", str(state)])
    assert result.exit_code == 2 and f"{state}:1: no reward column" in result.output


def test_plotting_without_matplotlib_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(OutputError, match=r"pip install 'truegrade\[plot\]'"):
        plot_overopt({"points": []}, tmp_path / "x.png")
