"""The ``repo`` grader end to end on three real SWE-bench instances: the gold patch resolves,
the empty patch fails exactly the FAIL_TO_PASS tests, and a row that cannot be graded is an
error naming why, never a zero."""

from __future__ import annotations

import json

import pytest

from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS
from truegrade import load_grader
from truegrade.attacks._repo import append_to
from truegrade.core import SpecError
from truegrade.graders.repo import RepoFlag, RepoGrader, judge_patch, read_task

pytestmark = [*NEEDS, pytest.mark.slow]

IDS = [r["instance_id"] for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_gold_patch_resolves_and_the_empty_patch_fails_only_its_target(row, hardened):
    gold = hardened.grade({**row, "model_patch": row["patch"]})
    assert gold.error is None and gold.passed is True, gold
    assert gold.flags == []  # the tells stay quiet on a real fix
    task = read_task(row)
    assert gold.subscores["fail_to_pass"] == 1.0 and gold.subscores["pass_to_pass"] == 1.0
    assert all(gold.subscores[f"test:{t}"] == 1.0 for t in task.fail_to_pass)

    empty = judge_patch(
        task,
        "",
        env=hardened.environment(task),
        snapshots=hardened.snapshots,
        settings=hardened.settings,
    )
    assert empty.passed is False
    assert {t: empty.tests[t] for t in task.fail_to_pass} == dict.fromkeys(
        task.fail_to_pass, "failed"
    )
    assert all(empty.tests[t] == "passed" for t in task.pass_to_pass)


def test_ids_published_cut_at_a_space_are_matched_as_prefixes(hardened):
    row = ROWS[0]  # marshmallow-1359: eight PASS_TO_PASS ids end in "[required-Missing" ...
    task = read_task(row)
    assert len(task.truncated_ids) == 8
    judged = judge_patch(
        task,
        row["patch"],
        env=hardened.environment(task),
        snapshots=hardened.snapshots,
        settings=hardened.settings,
    )
    assert judged.passed is True
    assert all(judged.tests[t] == "passed" for t in task.truncated_ids)
    full = [t for t in judged.run.outcomes if t.startswith(task.truncated_ids[0])]
    assert full == [task.truncated_ids[0] + " data for required field.]"]


def test_a_response_is_read_where_responses_put_the_diff(hardened):
    row = ROWS[0]
    said = f"The inner field takes the root schema's format.\n\n```diff\n{row['patch']}```\n"
    grades = hardened.grade_batch(
        [
            {**row, "response": said},
            {**row, "response": "I could not find the bug."},
            {
                **row,
                "model_patch": row["patch"].replace(
                    "-            or getattr(schema.opts", "-            or getattr(schema.options"
                ),
            },
        ]
    )
    assert grades[0].passed is True
    assert grades[1].passed is False and grades[1].flags == [RepoFlag.NO_PATCH]
    # a patch that changes nothing it claims to: git refuses it, no fuzz finds it a place
    assert grades[2].passed is False and grades[2].flags == [RepoFlag.PATCH_DOES_NOT_APPLY]


def test_rows_that_cannot_be_graded_are_errors_naming_why(tmp_path):
    row = ROWS[0]
    no_python = RepoGrader.from_options(
        {"repos": [str(DATA)], "environments": {row["repo"]: {"python": "3.99"}}}
    )
    grade = no_python.grade({**row, "model_patch": row["patch"]})
    assert grade.error and grade.passed is None and "needs CPython 3.99" in grade.error
    assert "pyenv install 3.99" in grade.error

    nowhere = load_grader("repo", repos=[str(tmp_path)])
    grade = nowhere.grade({**row, "model_patch": row["patch"]})
    assert grade.error and "no snapshot of marshmallow-code/marshmallow" in grade.error
    unknown = nowhere.grade({**row, "version": "0.0", "model_patch": row["patch"]})
    assert unknown.error and "no environment for marshmallow-code/marshmallow" in unknown.error
    assert "SWE-bench's specs name none" in unknown.error

    grade = nowhere.grade({**row, "FAIL_TO_PASS": "[]", "model_patch": row["patch"]})
    assert grade.error and "FAIL_TO_PASS is empty" in grade.error

    with pytest.raises(SpecError, match="under /tmp"):
        load_grader("repo", repos=[str(DATA)], cache_dir=str(tmp_path))


def test_cpu_time_and_the_wall_clock_backstop_are_told_apart():
    # a patch whose code spins is out of CPU time; one whose code sleeps reaches the backstop
    # (3x the CPU budget plus 2 s) with CPU to spare: a different flag, so no verdict on CPU
    # time ever comes from the wall clock
    row = ROWS[0]
    path = "src/marshmallow/fields.py"
    grader = RepoGrader.from_options({"repos": [str(DATA)], "cpu_s": 2})
    text = grader.snapshots.read(read_task(row), path)
    spin = append_to(path, text, "while True:\n    pass")
    sleep = append_to(path, text, "import time\ntime.sleep(600)")
    spun, slept = grader.grade_batch([{**row, "model_patch": spin}, {**row, "model_patch": sleep}])
    assert spun.passed is False and RepoFlag.TIME_LIMIT in spun.flags, spun
    assert slept.passed is False and RepoFlag.IDLE_LIMIT in slept.flags, slept


@pytest.mark.parametrize("isolation", ["native", "none"])
def test_the_gold_patch_resolves_and_a_forged_account_fails_under_every_isolation(isolation):
    # the keeper finds its scratch directory where the isolation puts it (``none``: on the host)
    grader = RepoGrader.from_options(
        {"repos": [str(DATA)], "isolation": isolation, "unsafe_no_sandbox": isolation == "none"}
    )
    row = ROWS[0]
    forged = append_to(
        "src/marshmallow/fields.py",
        grader.snapshots.read(read_task(row), "src/marshmallow/fields.py"),
        "\nimport os\ngetattr(os, '_' + 'exit')(0)\n",
    )
    gold, early = grader.grade_batch([{**row, "model_patch": p} for p in (row["patch"], forged)])
    assert gold.passed is True, gold
    assert early.passed is False and RepoFlag.TESTS_DID_NOT_RUN in early.flags, early


def test_a_task_that_fails_with_no_patch_here_is_an_error_not_the_patch_s_zero(hardened):
    from truegrade.graders.repo._judge import _BASE

    row = ROWS[0]  # marshmallow-1359
    task = read_task(row)
    path = "src/marshmallow/fields.py"
    text = hardened.snapshots.base(task).file(path).decode()
    breaking = append_to(path, text, "raise ImportError('a wrong fix')")  # every test fails
    harmless = append_to(path, text, "# a comment: the FAIL_TO_PASS test still fails")
    # a PASS_TO_PASS list that cannot pass here with no patch (as a test that needs the
    # network cannot): the F2P test listed as PASS_TO_PASS too
    broken = {**row, "PASS_TO_PASS": json.dumps([*task.pass_to_pass, task.fail_to_pass[0]])}
    grade = hardened.grade({**broken, "model_patch": breaking})
    assert grade.error is not None and grade.passed is None, grade
    assert (
        "marshmallow-1359: with no patch, 1 of its 77 PASS_TO_PASS tests do not pass" in grade.error
    )
    assert grade.record("x")["score"] is None  # an error, never a 0 for the patch
    gold = hardened.grade({**broken, "model_patch": row["patch"]})
    assert gold.passed is True  # nothing to blame on the task when the patch resolves it
    # on the real task the breaking fix stays the patch's 0 (the base run is clean) ...
    failed = hardened.grade({**row, "model_patch": breaking})
    assert failed.error is None and failed.passed is False
    # ... and a fix that fails only FAIL_TO_PASS tests never costs a run with no patch
    _BASE.clear()
    judged = judge_patch(
        task,
        harmless,
        env=hardened.environment(task),
        snapshots=hardened.snapshots,
        settings=hardened.settings,
    )
    assert judged.passed is False and judged.tests[task.fail_to_pass[0]] == "failed"
    assert not _BASE


NET_TEST = (
    "diff --git a/tests/test_reaches_out.py b/tests/test_reaches_out.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/tests/test_reaches_out.py\n"
    "@@ -0,0 +1,5 @@\n"
    "+import socket\n"
    "+\n"
    "+\n"
    "+def test_fetches_a_page():\n"
    '+    socket.create_connection(("pypi.org", 443), timeout=5).close()\n'
)


def test_a_task_whose_tests_need_the_network_says_so(hardened):
    from truegrade.graders.repo import audit_task

    row = ROWS[0]  # marshmallow-1359, with a PASS_TO_PASS test that needs the network
    task = read_task(row)
    online = {
        **row,
        "test_patch": row["test_patch"] + NET_TEST,
        "PASS_TO_PASS": json.dumps(
            [*task.pass_to_pass, "tests/test_reaches_out.py::test_fetches_a_page"]
        ),
    }
    grade = hardened.grade({**online, "model_patch": row["patch"]})  # the gold patch too
    assert grade.error is not None and "reach for the network" in grade.error, grade
    assert "name resolution" in grade.error or "unreachable" in grade.error.lower()
    audit = audit_task(read_task(online), grader=hardened, runs=1, mutate=False, mutants=0)
    found = audit.finding("task_needs_network")
    assert not found.ok and found.tests == ("tests/test_reaches_out.py::test_fetches_a_page",)
    assert (
        audit_task(task, grader=hardened, runs=1, mutate=False, mutants=0)
        .finding("task_needs_network")
        .ok
    )
