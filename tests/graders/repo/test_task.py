"""Repository tasks read from real published rows (SWE-bench Lite and Verified, tests/data/repo)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.graders.repo import ROWS
from truegrade.core import DataError
from truegrade.graders.repo import read_task


@pytest.mark.parametrize("row", ROWS, ids=[r["instance_id"] for r in ROWS])
def test_published_rows_are_read_as_they_are(row):
    task = read_task(row)
    assert task.instance_id == row["instance_id"] and task.base_commit == row["base_commit"]
    assert list(task.fail_to_pass) == json.loads(row["FAIL_TO_PASS"])
    assert list(task.pass_to_pass) == json.loads(row["PASS_TO_PASS"])
    assert task.gold_patch == row["patch"] and task.test_patch == row["test_patch"]
    assert task.environment_setup_commit == row["environment_setup_commit"]


def test_swe_gym_lists_read_like_swe_benchs_json_text():
    row = ROWS[0]
    gym = {k: v for k, v in row.items() if k != "environment_setup_commit"}
    gym |= {"FAIL_TO_PASS": json.loads(row["FAIL_TO_PASS"]), "PASS_TO_PASS": []}
    task = read_task(gym)
    assert task.fail_to_pass == read_task(row).fail_to_pass
    assert task.pass_to_pass == () and task.environment_setup_commit is None


def test_ids_the_published_row_cut_at_a_space_are_known():
    # SWE-bench's log parser keeps a name up to its first space; marshmallow-1359 has eight
    by_id = {r["instance_id"]: read_task(r) for r in ROWS}
    cut = by_id["marshmallow-code__marshmallow-1359"].truncated_ids
    assert len(cut) == 8
    assert "tests/test_fields.py::TestErrorMessages::test_make_error[required-Missing" in cut
    assert by_id["pallets__flask-5014"].truncated_ids == ()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"FAIL_TO_PASS": "[not json"}, "FAIL_TO_PASS is not a list"),
        ({"FAIL_TO_PASS": "[]"}, "FAIL_TO_PASS is empty"),
        ({"PASS_TO_PASS": [1, 2]}, "PASS_TO_PASS must be a list of test ids"),
        ({"base_commit": ""}, "has no base_commit"),
        ({"test_patch": None}, "has no test_patch"),
        ({"repo": 7}, "repo must be text"),
    ],
)
def test_a_row_that_is_not_a_task_names_its_field(change, message):
    with pytest.raises(DataError, match=message) as err:
        read_task(ROWS[0] | change)
    assert "marshmallow-code__marshmallow-1359" in str(err.value)


@pytest.mark.parametrize(
    ("row", "dataset"),
    [
        ({"instance_id": "x", "image_name": "swesmith.x86_64.a__b.1", "patch": ""}, "SWE-smith"),
        ({"docker_image": "r2e/x", "parsed_commit_content": "{}"}, "R2E-Gym"),
    ],
)
def test_rows_whose_task_is_an_image_are_refused_with_the_reason(row, dataset):
    with pytest.raises(DataError, match=f"a {dataset} row"):
        read_task(row)


UNRUNNABLE = {
    row["instance_id"]: row
    for row in map(
        json.loads,
        (Path(__file__).parents[2] / "data" / "repo" / "unrunnable.jsonl").read_text().splitlines(),
    )
}


@pytest.mark.parametrize(
    ("instance", "kind"),
    [
        ("django__django-10999", "Django's runtests.py ids"),
        ("pytest-dev__pytest-5262", "not pytest node ids"),  # a published id '[100%]'
    ],
)
def test_tasks_whose_ids_pytest_cannot_address_are_errors_never_zeros(instance, kind):
    row = UNRUNNABLE[instance]
    with pytest.raises(DataError, match=kind) as caught:
        read_task(row)
    assert "cannot be graded here" in str(caught.value) and instance in str(caught.value)


def test_an_unrunnable_task_is_a_grader_error_from_every_row_face():
    from truegrade.core import Sample
    from truegrade.graders.repo import RepoGrader

    row = UNRUNNABLE["django__django-10999"]
    sample = Sample.model_validate(
        {"id": "s", "response": row["patch"], "reference": {**row, "model_patch": row["patch"]}}
    )
    grade = RepoGrader().grade(sample)
    assert grade.error is not None and "Django's runtests.py ids" in grade.error
    assert grade.passed is None and grade.record("s")["score"] is None


def test_sympy_s_bare_names_are_read_to_be_found_in_the_test_patch_s_files():
    from truegrade.graders.repo._task import bare_ids

    task = read_task(UNRUNNABLE["sympy__sympy-11618"])
    assert bare_ids(task) == (
        "test_issue_11617",
        "test_point3D",
        "test_Point2D",
        "test_issue_9214",
        "test_transform",
    )
