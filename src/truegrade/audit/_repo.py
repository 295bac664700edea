"""The item audit's checks of repository tasks: the task's own claim run in the sandbox.

A repository item is sound when its row's claim holds (FAIL_TO_PASS fails at base, PASS_TO_PASS
passes, the gold patch resolves in every rotated run and fails the task made impossible): that
is ``truegrade.graders.repo.audit_task``, run here for each item with the ``repo`` grader the
audit was given (its environments, snapshots and sandbox), its failed checks becoming flags.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from truegrade.core import DataError, Grader, Sample
from truegrade.graders import walk
from truegrade.graders.repo import RepoGrader, TaskAudit, audit_task, read_task

__all__ = ["task_flags"]

_AUDITS: OrderedDict[tuple[Any, ...], TaskAudit] = OrderedDict()
"""Task audits run in this process, by everything that decides them: the task, its environment,
the snapshots, the run settings and the number of runs. The claim is the task's, not a grader's:
a card of two graders of the same rows (the demo's log grading beside ``repo``) audits each task
once instead of running its tests ``runs + 2`` times per grader."""
_KEPT = 256


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
    runs = max(2, runs)
    try:
        key = (task, repo.environment(task).path, repo.snapshots.roots, repo.settings, runs)
        audit = _AUDITS.get(key) or audit_task(task, grader=repo, runs=runs)
    except DataError as exc:  # no environment, no snapshot, a test patch that does not apply
        return [("task_unrunnable", str(exc))]
    _AUDITS[key] = audit
    _AUDITS.move_to_end(key)
    while len(_AUDITS) > _KEPT:
        _AUDITS.popitem(last=False)
    return [(f"task_{f.check}", f.detail) for f in audit.problems]
