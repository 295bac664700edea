"""``truegrade lc``, ``truegrade bias`` and ``truegrade simulate-judge`` as a user runs them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.reference import ALPACA_EVAL
from tests.simulator.fixtures import endpoint
from truegrade.cli._app import app

ALPACA = ALPACA_EVAL
runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    return result


def synthetic_csv(path, models=6, instructions=120, seed=0):
    rng = np.random.default_rng(seed)
    lines = [
        "model,instruction_idx,generator_1,generator_2,preference,output_1_chars,output_2_chars"
    ]
    for m in range(models):
        verbosity = 0.5 + m * 0.3
        for x in range(instructions):
            base, mine = rng.integers(200, 2000), int(rng.integers(200, 2000) * verbosity)
            p = 1 / (1 + np.exp(-(-0.5 + np.tanh((mine - base) / 800))))
            lines.append(f"m{m},{x},base,m{m},{1 + float(rng.random() < p)},{base},{mine}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lc_prints_and_writes_raw_and_length_controlled_win_rates(tmp_path):
    data = synthetic_csv(tmp_path / "prefs.csv")
    out = tmp_path / "lc.json"
    result = invoke("lc", data, "--out", out, "--bias")
    assert result.exit_code == 0, result.output
    assert "LC win rate %" in result.output and "P(prefers the longer output)" in result.output
    report = json.loads(out.read_text())
    models = {m["model"]: m for m in report["report"]["models"]}
    assert set(models) == {f"m{i}" for i in range(6)}
    assert report["report"]["pooled_effects"]["length"] > 0.3
    assert report["bias"]["prefers_longer"]["estimate"] > 0.5


def test_lc_against_another_model_and_errors(tmp_path):
    data = synthetic_csv(tmp_path / "prefs.csv")
    result = invoke("lc", data, "--baseline", "m2")
    assert result.exit_code == 0, result.output
    assert "LC vs other %" in result.output
    missing = invoke("lc", tmp_path / "nope.csv")
    assert missing.exit_code == 2 and "nope.csv: verdicts file not found" in missing.output
    unknown = invoke("lc", data, "--baseline", "zz")
    assert unknown.exit_code == 2 and "neither the verdicts' baseline" in unknown.output
    covariate = invoke("lc", data, "--control", "markdown_lists")
    assert covariate.exit_code == 2 and "unknown covariate" in covariate.output


@pytest.mark.shared_data
def test_lc_checks_itself_against_the_published_leaderboard(tmp_path):
    out = tmp_path / "lc.json"
    result = invoke(
        "lc",
        ALPACA / "preferences.csv.gz",
        "--leaderboard",
        ALPACA / "leaderboard.csv",
        "--exclude",
        "gpt4_gamed",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    check = json.loads(out.read_text())["leaderboard"]
    assert check["raw"]["max_abs_error"] < 1e-6
    assert check["lc"]["spearman"] >= 0.98 and check["lc"]["mean_abs_error"] <= 1.5
    assert "gpt4_gamed (reported apart)" in result.output


def test_bias_reads_a_judge_grades_file(simulator, tmp_path):
    spec = endpoint(simulator, position_bias=0.6)
    (tmp_path / "judge.yaml").write_text(
        json.dumps({"type": "judge", "mode": "pairwise", "cache": None, **spec})
    )
    rows = [
        {
            "id": i,
            "prompt": f"Q{i}",
            "response": "word " * (i % 9 + 1),
            "reference": "term " * (i % 5 + 1),
        }
        for i in range(60)
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    graded = invoke(
        "grade",
        tmp_path / "pairs.jsonl",
        "--grader",
        tmp_path / "judge.yaml",
        "--out",
        tmp_path / "grades.jsonl",
        "--quiet",
    )
    assert graded.exit_code == 0, graded.output
    assert "position_inconsistent" in graded.output
    result = invoke("bias", tmp_path / "grades.jsonl", "--out", tmp_path / "bias.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "bias.json").read_text())
    assert report["prefers_first"]["ci_low"] > 0.6  # the simulated judge's position bias, found
    assert report["position_consistency"]["estimate"] < 0.7
    assert report["prefers_longer"] is not None


def test_lc_and_bias_find_and_correct_a_simulated_length_bias(simulator, tmp_path):
    # the same responses (mostly longer than the baseline) judged twice: by a length-neutral
    # judge and by one with a bonus of 1.5 logits per doubling of length
    base = "term " * 10
    rows = [
        {"id": i, "prompt": f"Q{i}", "response": "word " * (5 * (1 + i % 8)), "reference": base}
        for i in range(160)
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = {}
    for bias in (0.0, 1.5):
        spec = tmp_path / f"judge{bias}.yaml"
        judge = endpoint(simulator, length_bias=bias)
        spec.write_text(json.dumps({"type": "judge", "mode": "pairwise", "cache": None, **judge}))
        grades = tmp_path / f"grades{bias}.jsonl"
        graded = invoke("grade", tmp_path / "pairs.jsonl", "-g", spec, "--out", grades, "-q")
        assert graded.exit_code == 0, graded.output
        lc = invoke("lc", grades, "--out", tmp_path / f"lc{bias}.json")  # the grades file itself
        assert lc.exit_code == 0, lc.output
        (model,) = json.loads((tmp_path / f"lc{bias}.json").read_text())["report"]["models"]
        assert invoke("bias", grades, "--out", tmp_path / f"b{bias}.json").exit_code == 0
        longer = json.loads((tmp_path / f"b{bias}.json").read_text())["prefers_longer"]
        found[bias] = (
            model["win_rate_pct"] / 100,
            model["lc_win_rate_pct"] / 100,
            longer["estimate"],
        )
    (raw0, lc0, longer0), (raw1, lc1, longer1) = found[0.0], found[1.5]
    assert raw1 - raw0 > 0.10  # the biased judge inflates the longer responses' win rate...
    assert abs(lc1 - lc0) < (raw1 - raw0) / 2  # ...length control takes most of it back...
    assert longer1 - longer0 > 0.10  # ...and the bias report sees the judge prefer length


def test_lc_refuses_what_is_not_pairwise_verdicts(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": 1, "prompt": "q", "response": "a"}) + "\n")
    result = invoke("lc", rows)
    assert result.exit_code == 2 and "not pairwise verdicts" in result.output
    scores = tmp_path / "scores.jsonl"
    record = {"id": 1, "score": 0.7, "subscores": {"raw_score": 7, "candidate_chars": 40}}
    scores.write_text(json.dumps(record) + "\n")
    pointwise = invoke("lc", scores)
    assert pointwise.exit_code == 2 and "pointwise judge scores" in pointwise.output


def test_simulate_judge_serves_until_stopped(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "truegrade",
            "simulate-judge",
            "--port",
            str(port),
            "-s",
            "position_bias=1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                    assert json.loads(r.read())["data"][0]["id"] == "truegrade-simulator"
                break
            except OSError:
                assert time.monotonic() < deadline, (
                    process.stderr.read().decode() if process.poll() is not None else "not up"
                )
                time.sleep(0.1)
    finally:
        process.terminate()
        process.communicate(timeout=10)  # reaps the process and closes its pipe
    bad = invoke("simulate-judge", "-s", "position_bias=7")
    assert bad.exit_code == 2 and "position_bias" in bad.output


@pytest.mark.parametrize(("sycophancy", "self_preference"), [(0.0, 0.0), (0.3, 0.3)])
def test_bias_probes_measure_a_simulated_judge(simulator, tmp_path, sycophancy, self_preference):
    behaviour = {
        "sycophancy": sycophancy,
        "self_preference": self_preference,
        "self_marker": "Certainly! Here is",
    }
    for mode in ("score", "pairwise"):
        spec = {"type": "judge", "mode": mode, "cache": None, **endpoint(simulator, **behaviour)}
        spec["model"] = "gpt-4o-mini"
        (tmp_path / f"{mode}.yaml").write_text(json.dumps(spec))
    out = tmp_path / "probes.json"
    result = invoke(
        "bias", "--probe", "sycophancy", "--grader", tmp_path / "score.yaml", "--out", out
    )
    assert result.exit_code == 0, result.output
    assert "score shift toward the user's stated view" in result.output
    syc = json.loads(out.read_text())["probes"]["sycophancy"]
    assert syc["verdict"] == ("biased" if sycophancy else "not detected")
    result = invoke(
        "bias", "--probe", "self-preference", "-g", tmp_path / "pairwise.yaml", "--out", out
    )
    assert result.exit_code == 0, result.output
    own = json.loads(out.read_text())["probes"]["self-preference"]
    assert own["verdict"] == ("biased" if self_preference else "not detected")
    assert own["details"]["judge_family"] == "openai"


def test_bias_probes_need_a_grader_and_a_known_probe(tmp_path):
    assert invoke("bias").exit_code == 2
    assert "give --grader" in invoke("bias", "--probe", "sycophancy").output
    result = invoke("bias", "--probe", "flattery", "--grader", "exact")
    assert result.exit_code == 2
    assert "sycophancy or self-preference" in result.output
