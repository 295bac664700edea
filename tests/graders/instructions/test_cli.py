"""``truegrade grade`` and ``truegrade attack`` on the bundled instruction-following rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DATA = EXAMPLES / "data" / "instructions.jsonl"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truegrade", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_grade_streams_one_verdict_per_row_with_a_subscore_per_constraint(tmp_path):
    out = tmp_path / "graded.jsonl"
    result = run(
        "grade",
        str(DATA),
        "-g",
        str(EXAMPLES / "graders" / "instructions.yaml"),
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    rows = {json.loads(line)["id"]: json.loads(line) for line in DATA.read_text().splitlines()}
    graded = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(graded) == len(rows)
    for record in graded:
        row = rows[record["id"]]
        assert record["passed"] is row["label"], record
        assert len(record["subscores"]) == len(row["instruction_id_list"])
    assert "pass rate" in result.stdout and "33.33%" in result.stdout


def test_attack_finds_plain_ifeval_exploitable_and_the_hardened_grader_not(tmp_path):
    plain = run(
        "attack",
        str(DATA),
        "-g",
        "instructions",
        "-o",
        "hardened=false",
        "-o",
        "execution=inline",
        "--out",
        str(tmp_path / "plain.json"),
        cwd=tmp_path,
    )
    assert plain.returncode == 0, plain.stderr
    report = json.loads((tmp_path / "plain.json").read_text())
    assert report["kind"] == "instructions"
    assert report["exploitability"]["items_exploited"] == report["exploitability"]["items"]
    hard = run(
        "attack",
        str(DATA),
        "-g",
        "instructions",
        "-o",
        "execution=inline",
        "--out",
        str(tmp_path / "hard.json"),
        cwd=tmp_path,
    )
    assert hard.returncode == 0, hard.stderr
    report = json.loads((tmp_path / "hard.json").read_text())
    assert report["exploitability"]["items_exploited"] == 0
    assert report["controls"]["passed"] == report["controls"]["tried"] > 0
