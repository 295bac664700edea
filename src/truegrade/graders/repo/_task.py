"""A repository-level task read from its published row (SWE-bench, SWE-Gym).

A row names a repository, the commit the task starts from, the task's tests (``test_patch``,
applied after the response's patch) and which tests the response must make pass
(``FAIL_TO_PASS``) or keep passing (``PASS_TO_PASS``). SWE-bench publishes the two lists as JSON
text and SWE-Gym as lists; both are read as they are. Rows of datasets whose tasks live in a
container image or a branch of a mirror (SWE-smith, R2E-Gym) name no base commit to start from,
and are refused with that reason rather than guessed at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from truegrade.core import DataError

__all__ = ["RepoTask", "bare_ids", "read_task", "with_node_ids"]

#: Keys that mark a row of a dataset whose task is an image or a branch, not a commit.
_IMAGE_KEYS = {
    "image_name": "SWE-smith",
    "docker_image": "R2E-Gym",
    "parsed_commit_content": "R2E-Gym",
}


class RepoTask(BaseModel):
    """One repository-level task, as its row states it."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    repo: str
    """``owner/name`` of the repository."""
    base_commit: str
    """The commit the response's patch applies to."""
    test_patch: str
    """The task's tests, applied after the response's patch."""
    fail_to_pass: tuple[str, ...]
    """Test ids that fail at the base commit and must pass with the response."""
    pass_to_pass: tuple[str, ...]
    """Test ids that pass at the base commit and must still pass."""
    gold_patch: str = ""
    """The reference solution (``patch``), when the row has one."""
    problem_statement: str = ""
    """The issue the patch resolves; its code blocks are inputs of the differential check."""
    version: str | None = None
    environment_setup_commit: str | None = None
    """The commit whose dependencies the environment is built from (SWE-bench)."""

    @property
    def truncated_ids(self) -> tuple[str, ...]:
        """Test ids cut short in the published row.

        SWE-bench's log parser takes a test's name up to the first space, so a parametrized id
        whose parameter holds a space was published cut there (``test_x[a b]`` as ``test_x[a``):
        such an id names no test pytest knows, and can only be matched as a prefix.
        """
        return tuple(
            t for t in (*self.fail_to_pass, *self.pass_to_pass) if t.count("[") > t.count("]")
        )


def _test_ids(row: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = row.get(key)
    if isinstance(value, str):  # SWE-bench: the list as JSON text
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: {key} is not a list nor JSON text of one ({exc})") from exc
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise DataError(f"{where}: {key} must be a list of test ids, got {value!r:.80}")
    return tuple(value)


_DJANGO_ID = re.compile(r"^\w+ \([\w.]+\)")
_BARE_NAME = re.compile(r"^\w+$")


def _check_runnable(ids: Sequence[str], where: str) -> None:
    """Refuse a task whose tests no runner here can address: pytest runs ids of the form
    ``path::name`` (or a test file), and bare function names (sympy's, which its ``bin/test``
    runs by name) are found in the test patch's files; an id of another form would be reported
    missing for every patch, the gold one included, so the row would score 0 without a word.

    Raises:
        DataError: naming the ids and the runner they were written for.
    """
    odd = [t for t in ids if "::" not in t and not t.endswith(".py")]
    if not odd:
        return
    if all(_BARE_NAME.match(t) for t in odd):
        return  # sympy's bare function names: found in the test patch's files when judged
    if all(_DJANGO_ID.match(t) for t in odd):
        kind = "Django's runtests.py ids (`test_name (module.Class)`)"
    else:
        kind = "not pytest node ids (`path::name`)"
    shown = ", ".join(repr(t) for t in odd[:3]) + (" ..." if len(odd) > 3 else "")
    raise DataError(
        f"{where}: {len(odd)} of its {len(ids)} test ids are {kind}: {shown}. The repo grader "
        "runs pytest, which cannot address them, so every patch (the gold one too) would find "
        "them missing: the task cannot be graded here"
    )


def bare_ids(task: RepoTask) -> tuple[str, ...]:
    """The task's test ids that are bare function names (sympy's), to be found in its files."""
    return tuple(t for t in (*task.fail_to_pass, *task.pass_to_pass) if _BARE_NAME.match(t))


def with_node_ids(task: RepoTask, found: Mapping[str, str]) -> RepoTask:
    """``task`` with each bare name replaced by the node id ``found`` gives it."""
    return task.model_copy(
        update={
            "fail_to_pass": tuple(found.get(t, t) for t in task.fail_to_pass),
            "pass_to_pass": tuple(found.get(t, t) for t in task.pass_to_pass),
        }
    )


def _text(row: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise DataError(f"{where}: the row has no {key}")
        return None
    if not isinstance(value, str):
        raise DataError(f"{where}: {key} must be text, got {type(value).__name__}")
    return value


def read_task(row: Mapping[str, Any]) -> RepoTask:
    """The task a published row describes; ``DataError`` naming the field when it cannot be one.

    Examples:
        >>> task = read_task({"instance_id": "o__r-1", "repo": "o/r", "base_commit": "ab12",
        ...     "test_patch": "diff --git a/t.py b/t.py", "FAIL_TO_PASS": '["t.py::test_a"]',
        ...     "PASS_TO_PASS": []})
        >>> task.fail_to_pass, task.pass_to_pass
        (('t.py::test_a',), ())
    """
    where = f"task {row.get('instance_id')!r}" if row.get("instance_id") else "task"
    for key, dataset in _IMAGE_KEYS.items():
        if key in row and "base_commit" not in row:
            raise DataError(
                f"{where}: a {dataset} row ({key}) names a container image or a branch, not a "
                "base commit with a test patch; only rows of SWE-bench's shape (SWE-bench, "
                "SWE-Gym) are read"
            )
    fail_to_pass = _test_ids(row, "FAIL_TO_PASS", where)
    if not fail_to_pass:
        raise DataError(f"{where}: FAIL_TO_PASS is empty: no test says the task was done")
    pass_to_pass = _test_ids(row, "PASS_TO_PASS", where)
    _check_runnable((*fail_to_pass, *pass_to_pass), where)
    return RepoTask(
        instance_id=str(_text(row, "instance_id", where)),
        repo=str(_text(row, "repo", where)),
        base_commit=str(_text(row, "base_commit", where)),
        test_patch=str(_text(row, "test_patch", where)),
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        gold_patch=_text(row, "patch", where, required=False) or "",
        problem_statement=_text(row, "problem_statement", where, required=False) or "",
        version=_text(row, "version", where, required=False),
        environment_setup_commit=_text(row, "environment_setup_commit", where, required=False),
    )
