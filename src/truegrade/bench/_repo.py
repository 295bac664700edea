"""Repository tasks: the ``repo`` grader against the same tests run bare.

Per instance, with the environment built (warm): the time of one grade of the gold patch through
the grader (``grade``: export, ``git apply`` of both patches, canaries, the sandboxed pytest run,
the keeper's account read and matched) against pytest run on the same files in the same venv, in a
tree prepared once, with no sandbox, no report and no canaries (the floor: what any harness must
spend running the tests). The two alternate, so a change of load hits both. Cold: the
environment built from its pinned requirements into an empty cache, once per instance, reported
apart (it is paid once per repository and environment, not per grade).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement, load_average, machine
from truegrade.core import DataError
from truegrade.data import read_rows
from truegrade.graders.repo import (
    RepoGrader,
    apply_patch,
    import_dirs,
    read_patch,
    read_task,
    run_files,
)

__all__ = ["run_repo_bench"]


def _bare(grader: RepoGrader, row: dict[str, Any]) -> tuple[Callable[[], None], Callable[[], None]]:
    """A bare run of the instance's tests (gold patch applied), and how to clean up after."""
    task = read_task(row)
    env = grader.environment(task)
    tree = Path(tempfile.mkdtemp(prefix="truegrade-bench-"))
    grader.snapshots.export(task, tree)
    for patch in (task.gold_patch, task.test_patch):
        problem = apply_patch(tree, patch)
        if problem:
            raise RuntimeError(f"{task.instance_id}: {problem}")
    files = run_files(task, [f.path for f in read_patch(task.test_patch).files], tree)
    path = os.pathsep.join(str(tree / d) for d in import_dirs(env, tree))
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(tree), "PYTHONPATH": path}
    environ.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    argv = [str(env.python), "-m", "pytest", "-p", "no:cacheprovider", "-q", *files]

    def run() -> None:
        done = subprocess.run(argv, cwd=tree, env=environ, capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{task.instance_id}: bare pytest exited {done.returncode}")

    return run, lambda: shutil.rmtree(tree, ignore_errors=True)


def run_repo_bench(
    *,
    data: Path,
    runs: int = 5,
    cold: bool = True,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Time the ``repo`` grader against bare pytest on every instance of ``data`` (SWE-bench
    rows, each with its snapshot in the file's directory, as ``tests/data/repo`` holds them).

    Raises:
        DataError: the file cannot be read, a row is not a task, or has no snapshot or
            environment; all before anything is timed.
    """
    say = progress or (lambda _msg: None)
    at_start = machine()  # the load before the run, not at the report's making
    numbered = list(read_rows(data, what="SWE-bench instances"))
    if not numbered:
        raise DataError(f"{data}: no instances")
    repos = data.parent
    grader = RepoGrader.from_options({"repos": [str(repos)]})
    for line, row in numbered:  # every task read, its tree and environment found, before timing
        try:
            task = read_task(row)
            if not task.gold_patch:
                raise DataError(f"task {task.instance_id!r} has no gold patch to time")
            grader.snapshots.base(task)
            grader.environment(task)
        except DataError as exc:
            raise DataError(f"{data}:{line}: {exc}") from None
    rows = [row for _, row in numbered]
    measurements: list[Measurement] = []
    pairs: list[tuple[str, str]] = []
    builds: dict[str, float] = {}
    for row in rows:
        name = row["instance_id"]
        if cold:
            cache = Path(tempfile.mkdtemp(prefix="truegrade-bench-", dir=Path.home()))
            try:
                fresh = RepoGrader.from_options({"repos": [str(repos)], "cache_dir": str(cache)})
                say(f"{name}: building its environment cold")
                started = time.perf_counter()
                fresh.environment(read_task(row))
                builds[name] = round(time.perf_counter() - started, 2)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        say(f"{name}: {runs} grades and {runs} bare runs, alternating")
        bare, cleanup = _bare(grader, row)
        gold = {**row, "model_patch": row["patch"]}
        first = grader.grade(gold)  # the worker and its sandbox started, untimed
        if first.passed is not True:
            raise RuntimeError(f"{name}: the gold patch did not resolve: {first}")
        ours: list[float] = []
        floor: list[float] = []
        try:
            bare()
            for _ in range(runs):
                started = time.perf_counter()
                grade = grader.grade(gold)
                ours.append((time.perf_counter() - started) * 1000)
                if grade.passed is not True:
                    raise RuntimeError(f"{name}: the gold patch did not resolve: {grade}")
                started = time.perf_counter()
                bare()
                floor.append((time.perf_counter() - started) * 1000)
        finally:
            cleanup()
        short = name.split("__")[-1]
        measurements.append(Measurement(f"repo grader, {short}", False, ours))
        measurements.append(Measurement(f"bare pytest, {short}", True, floor))
        pairs.append((f"repo grader, {short}", f"bare pytest, {short}"))
    return BenchReport(
        title="Repository tasks: one grade of the gold patch vs the same tests run bare",
        metric="ms per grade",
        lower_is_better=True,
        params={"instances": len(rows), "runs": runs},
        measurements=measurements,
        pairs=pairs,
        notes=[
            "Warm: the environment built. A grade is the grader's whole work on one patch "
            "(fresh export, git apply of the patch and the test patch, canaries, the tests run "
            "in the sandbox, the keeper's account read and matched); bare is pytest on the same "
            "files in the same venv, in a tree prepared once, no sandbox, no report.",
            "Cold: building each environment from its pinned requirements into an empty cache "
            "(seconds, in details), paid once per repository, environment and Python.",
            f"load average at the end: {load_average()}",
        ],
        details={"cold environment build, s": builds},
        machine=at_start,
    )
