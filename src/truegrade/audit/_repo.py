"""The item audit's checks of repository tasks: the task's own claim run in the sandbox.

A repository item is sound when its row's claim holds (FAIL_TO_PASS fails at base, PASS_TO_PASS
passes, the gold patch resolves in every rotated run and fails the task made impossible): that
is ``truegrade.graders.repo.audit_task``, run here for each item with the ``repo`` grader the
audit was given (its environments, snapshots and sandbox), its failed checks becoming flags.
"""

from __future__ import annotations

from collections.abc import Mapping

from truegrade.core import DataError, Grader, Sample
from truegrade.graders import walk
from truegrade.graders.repo import RepoGrader, audit_task, read_task

__all__ = ["task_flags"]


def task_flags(grader: Grader, item: Sample, runs: int) -> list[tuple[str, str]]:
    """``(flag, reason)`` for each check of the item's task that failed (none when the grader
    holds no ``repo`` grader or the row is no task: the grades say why)."""
    repo = next((node for node in walk(grader) if isinstance(node, RepoGrader)), None)
    if repo is None:
        return []
    row = item.reference if isinstance(item.reference, Mapping) else item.metadata
    try:
        task = read_task(row)
    except DataError:
        return []
    try:
        audit = audit_task(task, grader=repo, runs=max(2, runs))
    except DataError as exc:  # no environment, no snapshot, a test patch that does not apply
        return [("task_unrunnable", str(exc))]
    return [(f"task_{f.check}", f.detail) for f in audit.problems]
