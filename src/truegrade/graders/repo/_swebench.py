"""The harness the ``repo`` grader is measured against: a patch graded as SWE-bench's harness
grades it (``harness: swebench``), in the same sandbox and environment.

What it does, as SWE-bench v4.1's harness does: apply the patch with ``git apply``, falling back
to ``patch --fuzz=5``; check out the test patch's files as they are at the base commit (and
nothing else); apply the test patch; run ``pytest -rA`` on its files in the tree the patch
changed, with plugins autoloaded; read each test's status from the printed log, the last line
naming it winning (a name being the first word after its status); count ``PASSED`` and
``XFAIL`` as passing. It exists to show, on the grader card, what the hardened harness stops:
it is not a way to grade.
"""

from __future__ import annotations

import shutil

from truegrade.graders.repo._env import Environment
from truegrade.graders.repo._judge import (
    Judgement,
    RepoFlag,
    RunSettings,
    TaskProblem,
    import_dirs,
    run_in_sandbox,
    unfinished,
)
from truegrade.graders.repo._patch import read_patch
from truegrade.graders.repo._task import RepoTask
from truegrade.graders.repo._tree import Snapshots, apply_patch, pack_tree, run_files, workspace

__all__ = ["judge_as_swebench", "parse_log"]

_STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")


def parse_log(log: str) -> dict[str, str]:
    """Each test's status as SWE-bench's pytest log parser reads it: a line that starts with a
    status names the test in its second word; a later line overrides an earlier one."""
    found: dict[str, str] = {}
    for line in log.splitlines():
        if not line.startswith(_STATUSES):
            continue
        if line.startswith("FAILED"):
            line = line.replace(" - ", " ")
        words = line.split()
        if len(words) > 1:
            found[words[1]] = words[0]
    return found


def judge_as_swebench(
    task: RepoTask,
    patch: str | None,
    *,
    env: Environment,
    snapshots: Snapshots,
    settings: RunSettings,
) -> Judgement:
    """Grade ``patch`` as SWE-bench's harness would (see the module docstring)."""
    if patch is None:
        return Judgement(False, "the response holds no diff", [RepoFlag.NO_PATCH])
    test_files = [f.path for f in read_patch(task.test_patch).files]
    try:
        base = snapshots.base(task)
    except Exception as exc:
        raise TaskProblem(str(exc)) from exc
    with workspace() as tree:
        base.extract(tree)
        problem = apply_patch(tree, patch, fuzzy=True)
        if problem:
            return Judgement(
                False, f"the patch does not apply: {problem}", [RepoFlag.PATCH_DOES_NOT_APPLY]
            )
        for path in test_files:  # the test patch's files, back as they were: only those
            target = tree / path
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
        base.extract(tree, test_files)
        problem = apply_patch(tree, task.test_patch)
        if problem:
            return Judgement(
                False, f"the test patch does not apply: {problem}", [RepoFlag.PATCH_DOES_NOT_APPLY]
            )
        files = run_files(task, test_files, tree)
        tree_tar = pack_tree(tree)
        path_dirs = import_dirs(env, tree)
    run = run_in_sandbox(env, settings, tree_tar, files, path_dirs, log_only=True)
    ended = unfinished(run)
    if ended is not None and ended[0] != RepoFlag.TESTS_DID_NOT_RUN:
        return Judgement(False, ended[1], [ended[0]], run=run)
    statuses = parse_log(run.log)
    tests = {t: statuses.get(t, "missing") for t in (*task.fail_to_pass, *task.pass_to_pass)}
    resolved = all(s in ("PASSED", "XFAIL") for s in tests.values())
    bad = [f"{t} {s}" for t, s in tests.items() if s not in ("PASSED", "XFAIL")]
    explanation = (
        "resolved (read from the log)" if resolved else "not resolved: " + "; ".join(bad[:5])
    )
    return Judgement(resolved, explanation, [], run=run, tests=tests)
