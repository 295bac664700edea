"""``truegrade import-package``: rows out, a check with an exit status, packages it cannot
judge named and skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from truegrade.cli._app import app

PACKAGES = Path(__file__).parents[1] / "data" / "packages"
runner = CliRunner()


def test_rows_go_to_out_one_per_submission_the_grader_runs(tmp_path):
    out = tmp_path / "rows.jsonl"
    result = runner.invoke(
        app, ["import-package", str(PACKAGES / "domjudge-fltcmp"), "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["reference"]["time_limit_s"] == 5.0 for r in rows)
    assert {r["expected_verdict"] for r in rows} >= {"accepted"}
    assert all(r["response"].startswith("```") for r in rows)
    assert "domjudge-fltcmp:" in result.output and "time limit 5 s" in result.output


def test_check_exits_0_when_every_label_holds_and_1_when_one_does_not(tmp_path):
    ok = runner.invoke(app, ["import-package", str(PACKAGES / "domjudge-fltcmp"), "--check", "-q"])
    assert ok.exit_code == 0, ok.output
    assert "get their label's verdict (100.0%)" in ok.output
    planted = tmp_path / "planted"
    shutil.copytree(PACKAGES / "domjudge-fltcmp", planted)
    (planted / "submissions" / "accepted" / "zero.py").write_text("print(0)\n")
    bad = runner.invoke(app, ["import-package", str(planted), "--check", "-q", "--json"])
    assert bad.exit_code == 1, bad.output
    report = json.loads(bad.output[bad.output.index("[") :])
    wrong = [s for s in report[0]["submissions"] if not s["agrees"]]
    assert [s["id"].split("/")[-1] for s in wrong] == ["zero.py"]


def test_a_contest_directory_is_read_and_what_cannot_be_judged_is_skipped(tmp_path):
    contest = tmp_path / "contest"
    contest.mkdir()
    for name in ("problemtools-oddecho", "domjudge-fltcmp"):
        shutil.copytree(PACKAGES / name, contest / name)
    out = tmp_path / "rows.jsonl"
    result = runner.invoke(app, ["import-package", str(contest), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "skipped: problemtools-oddecho: a scoring problem" in result.output
    only = runner.invoke(app, ["import-package", str(contest / "problemtools-oddecho")])
    assert only.exit_code == 2 and "no package here can be judged" in only.output
    assert "scoring" in only.output
    unknown = runner.invoke(
        app, ["import-package", str(contest / "domjudge-fltcmp"), "-o", "no_such_key=1"]
    )
    assert unknown.exit_code == 2 and "no_such_key" in unknown.output
    missing = runner.invoke(app, ["import-package", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "not a directory" in missing.output
