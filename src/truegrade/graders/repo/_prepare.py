"""Every environment a file of tasks needs, built ahead of grading.

A task's environment is built the first time a patch of it is graded; for a reward server or a
first training step that is a wait of tens of seconds inside a request. ``prepare_environments``
builds each distinct environment of a set of tasks once, several at a time, so grading starts
warm; a task whose environment cannot be built is reported with the reason, and the others go
on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from truegrade.core import DataError
from truegrade.graders.repo._grader import RepoGrader
from truegrade.graders.repo._task import RepoTask

__all__ = ["Prepared", "prepare_environments"]


@dataclass
class Prepared:
    """One environment: the tasks that share it, and how building it went."""

    repo: str
    version: str | None
    python: str
    packages: int
    tasks: list[str] = field(default_factory=list)
    seconds: float = 0.0
    built: bool = False
    """Built now (False: it was in the cache already)."""
    path: str | None = None
    error: str | None = None


def prepare_environments(
    grader: RepoGrader,
    tasks: Iterable[RepoTask],
    *,
    workers: int = 2,
    progress: Callable[[Prepared], None] | None = None,
) -> list[Prepared]:
    """Build the environments of ``tasks`` with ``grader``'s options, ``workers`` at a time.

    Returns one ``Prepared`` per distinct environment, in the order first met; a task with no
    environment named, or one whose build fails, has its ``error`` (the others are built).
    ``progress`` is told each environment as it is done.
    """
    groups: dict[str, tuple[RepoTask, Prepared]] = {}
    failed: list[Prepared] = []
    for task in tasks:
        try:
            spec = grader.environment_spec(task)
        except DataError as exc:
            failed.append(
                Prepared(task.repo, task.version, "?", 0, [task.instance_id], error=str(exc))
            )
            continue
        key = f"{task.repo}\0{task.environment_setup_commit or task.base_commit}\0{spec!r}"
        if key not in groups:
            groups[key] = (
                task,
                Prepared(task.repo, task.version, spec.python, len(spec.requirements)),
            )
        groups[key][1].tasks.append(task.instance_id)

    def build(task: RepoTask, prepared: Prepared) -> Prepared:
        start = time.perf_counter()
        cached = grader.environment_cached(task)
        try:
            env = grader.environment(task)
            prepared.path = str(env.path)
            prepared.built = not cached
        except DataError as exc:
            prepared.error = str(exc)
        prepared.seconds = time.perf_counter() - start
        return prepared

    done: list[Prepared] = []
    for item in failed:
        done.append(item)
        if progress is not None:
            progress(item)
    with ThreadPoolExecutor(max(1, workers)) as pool:
        futures = [pool.submit(build, task, prepared) for task, prepared in groups.values()]
        for future in as_completed(futures):
            if progress is not None:
                progress(future.result())
    done += [prepared for _, prepared in groups.values()]
    return done
