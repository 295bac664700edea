"""``truegrade repo prepare``: every environment a file of tasks needs, built before grading
(several at once), each said with its time; a task whose environment cannot be had is named
with the reason and the others are built."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cli.test_grade_cli import run
from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS

pytestmark = [*NEEDS, pytest.mark.slow]


@pytest.fixture
def envs():
    # not under /tmp: the sandbox mounts its own scratch directory there
    home = Path.home() / ".cache" / "truegrade"
    home.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="prepare-test-", dir=home))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_prepare_builds_each_environment_once_then_finds_it(tmp_path, envs):
    rows = tmp_path / "rollouts.jsonl"
    row = ROWS[0]  # marshmallow-1359, twice (two predictions): one environment
    rows.write_text(
        "".join(json.dumps({**row, "model_patch": p}) + "\n" for p in (row["patch"], ""))
    )
    options = ["-o", f"repos=[{DATA}]", "-o", f"cache_dir={envs}"]
    first = run("repo", "prepare", str(rows), *options, "--out", "a.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [env] = json.loads((tmp_path / "a.json").read_text())
    assert env["built"] is True and env["error"] is None and env["tasks"] == [row["instance_id"]]
    assert env["path"].startswith(str(envs))
    again = run("repo", "prepare", str(rows), *options, "--out", "b.json", cwd=tmp_path)
    [env] = json.loads((tmp_path / "b.json").read_text())
    assert again.returncode == 0 and env["built"] is False and env["seconds"] < 5
    assert "already built" in again.stderr


def test_a_task_without_an_environment_is_named_and_the_rest_go_on(tmp_path):
    rows = tmp_path / "tasks.jsonl"
    known, unknown = ROWS[0], {**ROWS[0], "instance_id": "someone__else-1", "repo": "someone/else"}
    rows.write_text("".join(json.dumps(r) + "\n" for r in (known, unknown)))
    done = run(
        "repo", "prepare", str(rows), "-o", f"repos=[{DATA}]", "--out", "r.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    report = {p["repo"]: p for p in json.loads((tmp_path / "r.json").read_text())}
    assert report["someone/else"]["error"] and "someone__else-1" in done.stdout
    assert report[known["repo"]]["error"] is None
    alone = tmp_path / "alone.jsonl"
    alone.write_text(json.dumps(unknown) + "\n")
    failed = run("repo", "prepare", str(alone), "-o", f"repos=[{DATA}]", cwd=tmp_path)
    assert failed.returncode == 1 and "no environment could be built" in failed.stderr
