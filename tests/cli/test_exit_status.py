"""No silent success: a run that graded nothing, a named column that is not there, and the
``--fail-on`` gates exit non-zero with one line; a failed run leaves nothing in the way."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.cli.test_grade_cli import run, write_rows

PUBLISHED = Path(__file__).parents[1] / "data" / "published"
EXAMPLES = Path(__file__).parents[2] / "examples"


def _math_rows(n: int) -> list[dict]:
    with gzip.open(PUBLISHED / "math_test.jsonl.gz", "rt") as handle:
        return [json.loads(line) for line, _ in zip(handle, range(n), strict=False)]


def test_a_run_whose_rows_all_errored_exits_1_with_one_line(tmp_path):
    rows = [{"problem": r["problem"], "response": r"\boxed{1}"} for r in _math_rows(4)]
    data = write_rows(tmp_path / "noref.jsonl", rows)
    result = run("grade", str(data), "-g", "math", "-q", "--out", "g.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert "all 4 rows are errors (could not grade)" in line
    assert "needs a reference" in line
    assert len((tmp_path / "g.jsonl").read_text().splitlines()) == 4  # the errors are kept


def test_a_run_with_some_rows_graded_exits_0(tmp_path):
    rows = [
        {"id": 1, "response": r"\boxed{1}", "reference": "1"},
        {"id": 2, "response": r"\boxed{1}"},
    ]
    data = write_rows(tmp_path / "some.jsonl", rows)
    assert run("grade", str(data), "-g", "math", "-q", cwd=tmp_path).returncode == 0


def test_a_failed_run_leaves_no_empty_results_file_in_the_way(tmp_path):
    data = write_rows(tmp_path / "d.jsonl", [{"id": 1, "reference": "1"}])
    first = run("grade", str(data), "-g", "exact", "--out", "o.jsonl", cwd=tmp_path)
    assert first.returncode == 2 and not (tmp_path / "o.jsonl").exists()
    write_rows(data, [{"id": 1, "reference": "1", "response": "1"}])
    assert run("grade", str(data), "-g", "exact", "--out", "o.jsonl", cwd=tmp_path).returncode == 0


def test_a_failed_run_that_saved_results_says_how_to_finish(tmp_path):
    rows = [{"id": i, "reference": "1", "response": "1"} for i in range(20)] + [{"id": 99}]
    data = write_rows(tmp_path / "d.jsonl", rows)
    args = ("grade", str(data), "-g", "exact", "--out", "o.jsonl", "--batch-size", "8")
    first = run(*args, cwd=tmp_path)
    assert first.returncode == 2
    assert "results saved in o.jsonl" in first.stderr and "--resume" in first.stderr
    write_rows(data, rows[:-1])
    assert run(*args, "--resume", cwd=tmp_path).returncode == 0


def test_a_named_field_column_that_is_missing_is_an_error_listing_the_columns(tmp_path):
    data = write_rows(tmp_path / "d.jsonl", [{"id": 1, "gen": "1", "gold": "1"}])
    result = run("grade", str(data), "-g", "exact", "--field", "response=output", cwd=tmp_path)
    assert result.returncode == 2
    assert "--field response=output: the row has no 'output'" in result.stderr
    assert "'id', 'gen', 'gold'" in result.stderr
    mapped = run(
        "grade",
        str(data),
        "-g",
        "exact",
        "--field",
        "response=gen",
        "--field",
        "reference=gold",
        cwd=tmp_path,
    )
    assert mapped.returncode == 0, mapped.stderr


@pytest.mark.parametrize("option", [["--gold", "metadata.nosuch"], ["--length", "nolen"]])
def test_monitor_refuses_a_named_column_no_row_holds(tmp_path, option):
    log = write_rows(tmp_path / "log.jsonl", [{"step": i, "reward": i / 30} for i in range(30)])
    result = run("monitor", str(log), *option, "--fail-on-alert", cwd=tmp_path)
    assert result.returncode == 2
    assert "no row with a reward holds that column" in result.stderr
    assert "no alerts" not in result.stdout


def test_attack_and_audit_fail_on_a_fraction_and_card_on_a_verdict(tmp_path):
    data = str(EXAMPLES / "data" / "arith.jsonl")
    naive = str(EXAMPLES / "graders" / "naive_last_number.py") + ":reward"
    attacked = run("attack", data, "-g", naive, "-q", "--fail-on", "0.5", cwd=tmp_path)
    assert attacked.returncode == 1
    assert "--fail-on 0.5: 12 of 12 items exploited (100%)" in attacked.stderr
    held = run("attack", data, "-g", "math", "-q", "--fail-on", "0", cwd=tmp_path)
    assert held.returncode == 0, held.stderr
    # one run: its exit status against the share of items its own report flags
    audited = run(
        "audit", data, "-g", naive, "-q", "--fail-on", "0", "--out", "a.json", cwd=tmp_path
    )
    flagged = json.loads((tmp_path / "a.json").read_text())["items_flagged"]
    assert audited.returncode == (1 if flagged else 0), audited.stderr
    card = run("card", data, "-g", naive, "--checks", "none", "--fail-on", "unsafe", cwd=tmp_path)
    assert card.returncode == 1 and "--fail-on unsafe: the verdict is unsafe" in card.stderr
    safe = run("card", data, "-g", "math", "--checks", "none", "--fail-on", "unsafe", cwd=tmp_path)
    assert safe.returncode == 0, safe.stderr


def test_a_published_dataset_is_read_by_its_preset_and_the_preset_is_said(tmp_path):
    rows = [{**r, "response": r["solution"]} for r in _math_rows(6)]
    data = write_rows(tmp_path / "math.jsonl", rows)
    result = run("grade", str(data), "-g", "math", "-q", "--out", "g.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "reading math.jsonl as math (MATH, MATH-500, NuminaMath)" in result.stderr
    grades = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert all(g["passed"] for g in grades)
    # read as columns, 'solution' is still a reference column (TRL's), read whole by the grader
    plain = run("grade", str(data), "-g", "math", "-q", "--preset", "none", cwd=tmp_path)
    assert plain.returncode == 0 and "reading" not in plain.stderr
    bare = [{"problem": r["problem"], "response": r["response"]} for r in rows]
    write_rows(data, bare)
    none = run("grade", str(data), "-g", "math", "-q", "--overwrite", cwd=tmp_path)
    assert none.returncode == 1  # no reference anywhere: every row is an error
    unknown = run("grade", str(data), "-g", "math", "--preset", "gsm9k", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown preset 'gsm9k'" in unknown.stderr
