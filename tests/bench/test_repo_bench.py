"""The repository-task benchmark: each instance's grade paired with its bare run."""

from __future__ import annotations

import json

import pytest

from tests.graders.repo import DATA, ROWS
from truegrade.bench import run_repo_bench


@pytest.mark.slow
@pytest.mark.system_tool("bwrap", package="bubblewrap")
@pytest.mark.system_tool("git", package="git")
def test_each_grade_is_paired_with_the_same_tests_run_bare(tmp_path) -> None:
    row = ROWS[0]  # marshmallow-1359, the quickest
    (tmp_path / "instances.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / row["instance_id"]).symlink_to(DATA / row["instance_id"])
    report = run_repo_bench(data=tmp_path / "instances.jsonl", runs=1, cold=False)
    assert report.pairs == [("repo grader, marshmallow-1359", "bare pytest, marshmallow-1359")]
    assert [m.anchor for m in report.measurements] == [False, True]
    assert all(len(m.samples) == 1 and m.samples[0] > 0 for m in report.measurements)
    assert report.details == {"cold environment build, s": {}}
