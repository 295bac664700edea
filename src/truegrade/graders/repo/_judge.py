"""One patch judged on one task: refuse, export, apply, add canaries, run, read, decide.

``judge_patch`` is the whole trust boundary in order; the grader, the audits and the attacks all
call it, with the same rules (the audits may run the gold patch in a rotated order, or without
the response's refusals for the task's own patches).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from truegrade._budgets import wall_backstop_s
from truegrade.core import DataError
from truegrade.graders.repo._env import Environment
from truegrade.graders.repo._patch import read_patch, refusal
from truegrade.graders.repo._run import TestRun, run_tests
from truegrade.graders.repo._task import RepoTask
from truegrade.graders.repo._tells import tells
from truegrade.graders.repo._tree import (
    BaseTree,
    Canaries,
    Snapshots,
    add_canaries,
    apply_patch,
    run_files,
    workspace,
)
from truegrade.sandbox import Sandbox, SandboxConfig

__all__ = [
    "Judgement",
    "RepoFlag",
    "RunSettings",
    "TaskProblem",
    "import_dirs",
    "judge_patch",
    "run_in_sandbox",
    "sandbox_for_env",
    "unfinished",
]


class RepoFlag:
    """Flags of the ``repo`` grader."""

    NO_PATCH = "no_patch"
    """The response holds no diff."""
    PATCH_UNREADABLE = "patch_unreadable"
    """git cannot read the diff."""
    PATCH_REFUSED = "patch_refused"
    """The diff changes a test, a ``conftest.py``, configuration, a start-up hook or a link."""
    PATCH_DOES_NOT_APPLY = "patch_does_not_apply"
    """``git apply`` (no fuzz) refused the diff on the base tree."""
    RUNNER_TAMPERED = "runner_tampered"
    """A canary came out wrong, or pytest's exit status contradicts its report: something in
    the tree changed how outcomes are reported."""
    TEST_MISSING = "test_missing"
    """An expected test was not in the report (deleted, renamed, not collected)."""
    TEST_SKIPPED = "test_skipped"
    """An expected test was skipped or xfailed (not passed)."""
    TESTS_DID_NOT_RUN = "tests_did_not_run"
    """No report: pytest did not start, crashed, or the report was removed."""
    TIME_LIMIT = "time_limit"
    """The tests used up their CPU-time budget (``cpu_s``)."""
    IDLE_LIMIT = "idle_limit"
    """The tests reached the wall-clock backstop (3x ``cpu_s`` plus 2 s) having used less CPU
    time than their budget: they slept or hung, as the ``code`` grader names it. Kept apart from
    ``time_limit`` so a verdict on CPU time is never one on wall-clock time."""
    MEMORY_LIMIT = "memory_limit"
    """The tests ran out of memory."""
    RUNNER_IMPORT = "runner_import"
    """A tell, not a verdict: the patch's non-test code imports pytest or unittest internals,
    plays with ``sys.modules``, frames, ``atexit`` or the process's exit, or runs code it reads
    at run time (``exec``, ``compile``, ``git``)."""
    SPECIAL_CASED = "special_cased_literal"
    """A tell, not a verdict: the patch's code holds a literal value that the task's tests
    check for (a special case for the test rather than a fix)."""


class TaskProblem(DataError):
    """The task itself cannot be graded (its test patch does not apply, its snapshot is
    missing): an error for the row, never a zero for the response."""


@dataclass(frozen=True)
class RunSettings:
    """How the tests run: the sandbox's isolation and limits."""

    cpu_s: float = 300.0
    memory_mb: int = 4096
    max_processes: int = 64
    isolation: str = "auto"
    unsafe_no_sandbox: bool = False
    scratch_mb: int = 1024


@dataclass
class Judgement:
    """The outcome of one patch on one task, before it becomes a verdict."""

    passed: bool
    explanation: str
    flags: list[str] = field(default_factory=list)
    subscores: dict[str, float] = field(default_factory=dict)
    run: TestRun | None = None
    tests: dict[str, str] = field(default_factory=dict)
    """Expected test id -> ``passed``, ``failed``, ``skipped``, ``xfailed`` or ``missing``."""

    def verdict(self) -> dict[str, Any]:
        score = 1.0 if self.passed else 0.0
        return {
            "score": score,
            "passed": self.passed,
            "flags": list(dict.fromkeys(self.flags)),
            "explanation": self.explanation,
            # a patch stopped before its tests ran passed none of them (the shares a trainer
            # logs are then over every graded row, not only the ones that ran)
            "subscores": self.subscores or {"fail_to_pass": 0.0, "pass_to_pass": 0.0},
        }


_SANDBOXES: dict[SandboxConfig, Sandbox] = {}


def sandbox_for_env(env: Environment, settings: RunSettings) -> Sandbox:
    """This process's sandbox for one environment (its venv and interpreter read-only)."""
    config = SandboxConfig(
        isolation=settings.isolation,  # type: ignore[arg-type]
        allow_unsandboxed=settings.unsafe_no_sandbox,
        memory_mb=settings.memory_mb,
        max_processes=settings.max_processes,
        open_files=1024,
        file_size_mb=256,
        scratch_mb=settings.scratch_mb,
        output_bytes=1 << 20,
        preimport=(),
        read_only_dirs=(str(env.path), str(env.base_prefix)),
    )
    box = _SANDBOXES.get(config)
    if box is None:
        box = _SANDBOXES[config] = Sandbox(config)
    return box.start()


def _status_of(expected: str, outcomes: dict[str, str], truncated: bool) -> str:
    if expected in outcomes:
        return outcomes[expected]
    if truncated:  # published cut at a space: every test it names must have passed
        found = [o for t, o in outcomes.items() if t.startswith(expected)]
        if found:
            return "passed" if all(o == "passed" for o in found) else "failed"
    return "missing"


def _tampering(run: TestRun, canaries: Canaries) -> str | None:
    """Why the run's reporting cannot be trusted, or None."""
    out = run.outcomes
    for names, wanted in ((canaries.must_fail, "failed"), (canaries.must_pass, "passed")):
        for name in names:
            if out.get(name) != wanted:
                said = out.get(name, "missing")
                return f"the canary {name.split('::')[-1]} that must be {wanted} was {said}"
    failed = any(o == "failed" for o in out.values())
    if run.exit_code is None:
        return "pytest's exit status was not recorded"
    if failed and run.exit_code == 0:
        return "pytest exited 0 with failed tests in its report"
    if not failed and run.exit_code == 1:
        return "pytest exited 1 with no failed test in its report"
    return None


def unfinished(run: TestRun) -> tuple[str, str] | None:
    """(flag, reason) when the run ended without a usable report."""
    result = run.sandbox
    if result is not None and result.status == "cpu_limit":
        return RepoFlag.TIME_LIMIT, f"the tests used up their CPU time ({result.error})"
    if result is not None and result.status == "timeout":  # the wall-clock backstop
        return RepoFlag.IDLE_LIMIT, (
            f"the tests ran past the wall-clock backstop with CPU time to spare, {result.cpu_s:.1f}"
            " s used: they waited or hung (on a machine starved that long, run them again)"
        )
    if result is not None and result.status == "memory":
        return RepoFlag.MEMORY_LIMIT, "the tests ran out of memory"
    if result is not None and result.status == "sandbox_error":
        raise TaskProblem(f"the sandbox failed: {result.error}")
    if not run.reported:
        said = run.output.strip().splitlines()[-3:]
        return RepoFlag.TESTS_DID_NOT_RUN, "pytest wrote no report" + (
            f" (it said: {' / '.join(said)})" if said else ""
        )
    return None


def judge_patch(
    task: RepoTask,
    patch: str | None,
    *,
    env: Environment,
    snapshots: Snapshots,
    settings: RunSettings,
    enforce: bool = True,
    rotate: int = 0,
    canaries: bool = True,
) -> Judgement:
    """Judge ``patch`` (the response's diff; None: the response held none) on ``task``.

    ``enforce=False`` skips the response's refusals (for the task's own gold patch in the
    audits, which may touch what a response may not).

    Raises:
        TaskProblem: the task cannot be graded (its snapshot or test patch is broken, the
            sandbox failed).
    """
    if patch is None:
        return Judgement(False, "the response holds no diff", [RepoFlag.NO_PATCH])
    test_reading = read_patch(task.test_patch)
    if test_reading.problem:
        raise TaskProblem(f"the task's test patch: {test_reading.problem}")
    test_files = [f.path for f in test_reading.files]
    flags: list[str] = []
    changed: list[str] = []
    if patch.strip():
        reading = read_patch(patch)
        if reading.problem:
            return Judgement(False, reading.problem, [RepoFlag.PATCH_UNREADABLE])
        changed = [f.path for f in reading.files]
        if enforce:
            task_files = frozenset(test_files)
            for file in reading.files:
                why = refusal(file, task_files)
                if why:
                    return Judgement(False, f"refused: {why}", [RepoFlag.PATCH_REFUSED])
            flags += tells(patch, task.test_patch)
    try:
        base = snapshots.base(task)
    except Exception as exc:
        raise TaskProblem(str(exc)) from exc
    named = [t.split("::", 1)[0] for t in (*task.fail_to_pass, *task.pass_to_pass)]
    touched = sorted({*changed, *test_files, *named})
    # only the files the patches touch (and the tests to run) are written out and patched;
    # the rest of the tree goes to the sandbox as the snapshot holds it
    with workspace() as tree:
        base.extract(tree, touched)
        problem = apply_patch(tree, patch)
        if problem:
            return Judgement(
                False, f"the patch does not apply: {problem}", [RepoFlag.PATCH_DOES_NOT_APPLY]
            )
        problem = apply_patch(tree, task.test_patch)
        if problem:  # the response may not touch its files: the task itself is broken
            raise TaskProblem(f"the task's test patch does not apply: {problem}")
        files = run_files(task, test_files, tree)
        if not files:
            raise TaskProblem("none of the task's test files is in the tree")
        planted = add_canaries(tree, files) if canaries else Canaries((), ())
        path_dirs = import_dirs(env, base)
        tree_tar = base.overlay(tree, touched)
    run = run_in_sandbox(env, settings, tree_tar, files, path_dirs, rotate=rotate)
    return _decide(task, run, planted, flags)


def import_dirs(env: Environment, tree: Path | BaseTree) -> list[str]:
    """The tree's directories on ``sys.path``, since the repository is not installed: the
    environment's ``source_dirs``, else ``src`` when there is one; the root always."""
    if isinstance(tree, BaseTree):
        has_src = "src" in tree.members and tree.members["src"].isdir()
    else:
        has_src = (tree / "src").is_dir()
    given = env.spec.source_dirs or (("src",) if has_src else ())
    return [d for d in given if d not in ("", ".")] + ["."]


def run_in_sandbox(
    env: Environment,
    settings: RunSettings,
    tree_tar: bytes,
    files: list[str],
    path_dirs: list[str],
    *,
    rotate: int = 0,
    log_only: bool = False,
) -> TestRun:
    """Run the packed tree's tests in this process's sandbox for ``env``."""
    return run_tests(
        sandbox_for_env(env, settings),
        python=str(env.python),
        tree_tar=tree_tar,
        files=files,
        path_dirs=path_dirs,
        cpu_s=settings.cpu_s,
        wall_s=wall_backstop_s(settings.cpu_s),
        plugins=env.spec.plugins,
        rotate=rotate,
        log_only=log_only,
    )


def _decide(task: RepoTask, run: TestRun, planted: Canaries, flags: list[str]) -> Judgement:
    ended = unfinished(run)
    if ended is not None:
        flag, reason = ended
        return Judgement(False, reason, [*flags, flag], run=run)
    truncated = set(task.truncated_ids)
    expected = (*task.fail_to_pass, *task.pass_to_pass)
    tests = {t: _status_of(t, run.outcomes, t in truncated) for t in expected}
    if planted.must_fail or planted.must_pass:
        tampered = _tampering(run, planted)
        if tampered:
            return Judgement(
                False,
                f"the run's report cannot be trusted: {tampered}",
                [*flags, RepoFlag.RUNNER_TAMPERED],
                run=run,
                tests=tests,
            )
    f2p = [tests[t] == "passed" for t in task.fail_to_pass]
    p2p = [tests[t] == "passed" for t in task.pass_to_pass]
    subscores = {f"test:{t}": 1.0 if s == "passed" else 0.0 for t, s in tests.items()}
    subscores["fail_to_pass"] = sum(f2p) / len(f2p)
    if p2p:
        subscores["pass_to_pass"] = sum(p2p) / len(p2p)
    if any(s == "missing" for s in tests.values()):
        flags.append(RepoFlag.TEST_MISSING)
    if any(s in ("skipped", "xfailed") for s in tests.values()):
        flags.append(RepoFlag.TEST_SKIPPED)
    resolved = all(f2p) and all(p2p)
    if resolved:
        explanation = f"resolved: {len(f2p)} FAIL_TO_PASS and {len(p2p)} PASS_TO_PASS tests pass"
    else:
        bad = [f"{t} {s}" for t, s in tests.items() if s != "passed"]
        explanation = (
            f"not resolved: FAIL_TO_PASS {sum(f2p)}/{len(f2p)}, PASS_TO_PASS "
            f"{sum(p2p)}/{len(p2p)} pass; " + "; ".join(bad[:5]) + (" ..." if len(bad) > 5 else "")
        )
    return Judgement(resolved, explanation, flags, subscores=subscores, run=run, tests=tests)
