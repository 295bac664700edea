"""One patch judged on one task: refuse, export, apply, add canaries, run, read, decide.

``judge_patch`` is the whole trust boundary in order; the grader, the audits and the attacks all
call it, with the same rules (the audits may run the gold patch in a rotated order, or without
the response's refusals for the task's own patches).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from truegrade._budgets import wall_backstop_s
from truegrade.core import DataError
from truegrade.graders.repo._canaries import Canaries, plant_canaries
from truegrade.graders.repo._config import pytest_config
from truegrade.graders.repo._differential import (
    GoldTrace,
    Target,
    compare_with_gold,
    issue_module,
    issue_snippets,
    traced_modules,
)
from truegrade.graders.repo._env import Environment
from truegrade.graders.repo._patch import read_patch, refusal
from truegrade.graders.repo._run import TestRun, run_tests
from truegrade.graders.repo._task import RepoTask, bare_ids, with_node_ids
from truegrade.graders.repo._tells import tells
from truegrade.graders.repo._tree import (
    BaseTree,
    Snapshots,
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
    "base_problem",
    "gold_trace",
    "import_dirs",
    "judge_patch",
    "network_reason",
    "run_in_sandbox",
    "sandbox_for_env",
    "unfinished",
    "with_test_files",
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
    RUNNER_REACH = "runner_reach"
    """A verdict: the patch's code names the test runner (``pytest``, ``_pytest``,
    ``unittest``'s runner, JUnit reports, ``PYTEST_*`` variables). Refused before anything runs
    (0 of 673 gold patches outside pytest's own repository do it; there it is
    ``runner_import``)."""
    RUNNER_IMPORT = "runner_import"
    """A warning, not a verdict: the patch's code plays with ``sys.modules``, frames, ``atexit``
    or the process's exit, or runs code it reads at run time (``exec``, ``compile``, ``git``)
    (9 of 707 gold patches do, for their own reasons)."""
    SPECIAL_CASED = "special_cased_literal"
    """A warning, not a verdict: the patch's code holds a literal value that the task's tests
    check for (a special case for the test rather than a fix; 29 of 707 gold patches do)."""
    DIVERGES_FROM_GOLD = "diverges_from_gold"
    """A verdict (under the default ``differential="fail"``): the patch resolves the tests, but
    a call the tests make into the code the gold patch changes, with the same arguments, returns
    or raises something else than it does with the gold patch, or leaves its object in another
    state (``truegrade.graders.repo._differential``)."""
    MESSAGE_DIFFERS_FROM_GOLD = "message_differs_from_gold"
    """A warning: such a call raises the gold patch's exception type with another message."""
    RUNNER_IN_TREE = "runner_in_tree"
    """A warning about the task: the environment has no pytest of its own, so the runner is the
    tree's (pytest's own repository): the construction that keeps the runner out of the patch's
    reach cannot hold, and the canaries are the only check of the account."""


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
    """Why the run's account cannot be trusted, or None."""
    if run.anomalies:
        return "; ".join(run.anomalies)
    # a module that did not import ran none of its tests, canaries included
    breach = canaries.breach(run.outcomes, frozenset(run.collection_errors))
    if breach:
        return breach
    if run.failed and run.exit_code == 0:
        return "pytest exited 0 with failed tests in its report"
    if not run.failed and run.exit_code == 1:
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
    said = run.output.strip().splitlines()[-3:]
    told = f" (it said: {' / '.join(said)})" if said else ""
    if not run.reported:
        return RepoFlag.TESTS_DID_NOT_RUN, "the run gave no account of its tests" + told
    if run.exit_code is None and not run.anomalies:  # ended before pytest returned
        how = (
            f"status {run.status}"
            if run.status is not None and run.status >= 0
            else (f"signal {-run.status}" if run.status is not None else "an unknown status")
        )
        return RepoFlag.TESTS_DID_NOT_RUN, f"the runner ended ({how}) before pytest finished" + told
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
    differential: str = "off",
    trace: bool = False,
) -> Judgement:
    """Judge ``patch`` (the response's diff; None: the response held none) on ``task``.

    ``enforce=False`` skips the response's refusals (for the task's own gold patch in the
    audits, which may touch what a response may not). ``differential`` (``off``, ``flag``,
    ``fail``) compares a patch that resolves the tests with the task's gold patch on the calls
    the tests make into the code the gold patch changes (``gold_trace``); ``trace`` only
    records those calls (``Judgement.run.calls``).

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
    try:
        base = snapshots.base(task)
    except Exception as exc:
        raise TaskProblem(str(exc)) from exc
    published = task
    if bare_ids(task):  # sympy's bare names, found in the test patch's files
        task = _with_files(task, base, test_files)
    path_dirs = import_dirs(env, base)
    flags: list[str] = []
    changed: list[str] = []
    if patch.strip():
        reading = read_patch(patch)
        if reading.problem:
            return Judgement(False, reading.problem, [RepoFlag.PATCH_UNREADABLE])
        changed = [f.path for f in reading.files]
        if enforce:
            task_files = frozenset(test_files)
            shape = base.shape(path_dirs)
            for file in reading.files:
                why = refusal(file, task_files, shape)
                if why:
                    return Judgement(False, f"refused: {why}", [RepoFlag.PATCH_REFUSED])
            found = tells(patch, task.test_patch, repo=task.repo)
            if RepoFlag.RUNNER_REACH in found:
                return Judgement(False, _REACH_REASON, [*found])
            flags += found
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
        planted = plant_canaries(tree, files, task.fail_to_pass) if canaries else Canaries()
        config, _ = pytest_config(_reader(tree, test_files, base), files)
        compare = differential != "off" and bool(task.gold_patch.strip())
        targets = _targets(task, path_dirs, base) if compare or trace else []
        issue = _plant_issue(task, tree, files, base) if targets else []
        issue_file = [issue[0].split("::", 1)[0]] if issue else []
        tree_tar = base.overlay(tree, [*touched, *issue_file])
    wanted = [*task.fail_to_pass, *task.pass_to_pass, *planted.ids, *issue]
    files = [*files, *issue_file]
    run = run_in_sandbox(
        env,
        settings,
        tree_tar,
        files,
        path_dirs,
        rotate=rotate,
        config=config,
        wanted=wanted,
        trace=targets,
    )
    judgement = _decide(task, run, planted, flags)
    if enforce and patch.strip() and _task_may_be_at_fault(task, judgement):
        problem = base_problem(task, env=env, snapshots=snapshots, settings=settings)
        if problem is not None:
            raise TaskProblem(problem)
    if compare and targets and judgement.passed:
        gold = gold_trace(task, env=env, snapshots=snapshots, settings=settings)
        required = [*task.fail_to_pass, *issue]
        _hold_to_gold(judgement, gold, run, required, targets, fail=differential == "fail")
    if task is not published:  # outcomes under the ids the row published
        _as_published(judgement, task, published)
    return judgement


_RESOLVED: dict[tuple[str, str], dict[str, str]] = {}


def with_test_files(task: RepoTask, snapshots: Snapshots) -> RepoTask:
    """``task`` with its tests named as pytest addresses them (a bare name, as sympy's rows
    give them, becomes ``path::name`` in the test patch's files); a task with none is itself.

    Raises:
        TaskProblem: a name is not one function of the test patch's files, or the snapshot or
            the test patch is broken.
    """
    if not bare_ids(task):
        return task
    reading = read_patch(task.test_patch)
    if reading.problem:
        raise TaskProblem(f"the task's test patch: {reading.problem}")
    try:
        base = snapshots.base(task)
    except Exception as exc:
        raise TaskProblem(str(exc)) from exc
    return _with_files(task, base, [f.path for f in reading.files])


def _with_files(task: RepoTask, base: BaseTree, test_files: Sequence[str]) -> RepoTask:
    """``task`` with each bare test name (sympy's ``test_issue_11617``) as the node id of the
    one top-level function of that name in the test patch's files, once per process; a name
    found in none of them, or in several, leaves the task ungradable here (``TaskProblem``).
    The files are the task's own (the base tree with its test patch), never the response's."""
    names = bare_ids(task)
    digest = hashlib.sha256("\0".join((task.test_patch, *names)).encode()).hexdigest()
    key = (task.instance_id, digest)
    found = _RESOLVED.get(key)
    if found is None:
        defined: dict[str, list[str]] = {}
        with workspace() as tree:
            base.extract(tree, test_files)
            problem = apply_patch(tree, task.test_patch)
            if problem:
                raise TaskProblem(f"the task's test patch does not apply: {problem}")
            for path in test_files:
                file = tree / path
                if not path.endswith(".py") or not file.is_file():
                    continue
                try:
                    module = ast.parse(file.read_bytes())
                except (SyntaxError, ValueError):
                    continue
                for node in module.body:
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                        defined.setdefault(node.name, []).append(path)
        unfound = [n for n in names if len(defined.get(n, [])) != 1]
        if unfound:
            shown = ", ".join(f"{n} (in {len(defined.get(n, []))})" for n in unfound[:3])
            raise TaskProblem(
                f"its tests are named without their files (as sympy's bin/test runs them), and "
                f"{len(unfound)} of them are not one function of the test patch's files: {shown}"
            )
        found = _RESOLVED[key] = {n: f"{defined[n][0]}::{n}" for n in names}
    return with_node_ids(task, found)


def _as_published(judged: Judgement, task: RepoTask, published: RepoTask) -> None:
    """Rename a judgement's tests from the node ids they ran under to the row's own ids."""
    back = dict(
        zip(
            (*task.fail_to_pass, *task.pass_to_pass),
            (*published.fail_to_pass, *published.pass_to_pass),
            strict=True,
        )
    )
    judged.tests = {back.get(t, t): s for t, s in judged.tests.items()}
    judged.subscores = {
        (f"test:{back[k[5:]]}" if k.startswith("test:") and k[5:] in back else k): v
        for k, v in judged.subscores.items()
    }


_TARGETS: dict[tuple[str, str], list[Target]] = {}


def _targets(task: RepoTask, path_dirs: list[str], base: BaseTree) -> list[Target]:
    """``traced_modules`` of the task's gold patch, once per process."""
    key = (hashlib.sha256(task.gold_patch.encode()).hexdigest(), repr(path_dirs))
    if key not in _TARGETS:
        _TARGETS[key] = traced_modules(task.gold_patch, path_dirs, base)
    return _TARGETS[key]


def _plant_issue(task: RepoTask, tree: Path, files: Sequence[str], base: BaseTree) -> list[str]:
    """Write the issue's code blocks as a test module beside the first FAIL_TO_PASS test (its
    name fixed by the task, so the gold patch's run and every other have the same test ids);
    the ids of its tests, or none when the issue has no code."""
    snippets = issue_snippets(task.problem_statement)
    if not snippets:
        return []
    first = (task.fail_to_pass or ("",))[0].split("::", 1)[0]
    folder = PurePosixPath(first if first in files else files[0]).parent
    token = hashlib.sha256(task.instance_id.encode()).hexdigest()[:8]
    path = str(folder / f"test_issue_{token}.py")
    if base.file(path) is not None or (tree / path).exists():
        return []
    (tree / path).write_text(issue_module(snippets), encoding="utf-8")
    return [f"{path}::test_issue_{k}" for k in range(len(snippets))]


def _hold_to_gold(
    judgement: Judgement,
    gold: GoldTrace,
    run: TestRun,
    required: Sequence[str],
    targets: Sequence[Target],
    *,
    fail: bool,
) -> None:
    changed = [name for target in targets for name in target.changed]
    found = compare_with_gold(gold, run.calls, required, changed)
    if found.messages:
        judgement.flags.append(RepoFlag.MESSAGE_DIFFERS_FROM_GOLD)
    if not found.diverges:
        if found.messages:
            judgement.explanation += f"; a message differs from the gold's: {found.describe()}"
        return
    judgement.flags.append(RepoFlag.DIVERGES_FROM_GOLD)
    said = (
        "behaves unlike the gold patch on the inputs the tests and the issue give: "
        + found.describe()
    )
    if fail:
        judgement.passed = False
        judgement.explanation = f"the tests pass, but the patch {said}"
    else:
        judgement.explanation += f"; the patch {said}"


_BASE: dict[tuple[str, str, str, str], str | None] = {}
_TASK_SIDE = frozenset(
    {RepoFlag.TESTS_DID_NOT_RUN, RepoFlag.TEST_MISSING, RepoFlag.TIME_LIMIT, RepoFlag.IDLE_LIMIT}
)


_NETWORK = re.compile(
    r"(Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|gaierror|NewConnectionError|MaxRetryError|ConnectionRefusedError|No address associated"
    r"|getaddrinfo failed|\[Errno (?:101|-2|-3|-5)\])"
)


def network_reason(judged: Judgement) -> str | None:
    """The line of a run's output saying a test reached for the network (the sandbox gives
    none), or None."""
    run = judged.run
    text = run.sandbox.stdout + "\n" + run.sandbox.stderr if run and run.sandbox else ""
    for line in text.splitlines():
        if _NETWORK.search(line):
            return " ".join(line.split())[:200]
    return None


def _task_may_be_at_fault(task: RepoTask, judged: Judgement) -> bool:
    """Whether a patch's failure could be the task's: its tests did not run, one is missing,
    they ran out of time, or a PASS_TO_PASS test did not pass (a wrong fix that fails only
    FAIL_TO_PASS tests is the patch's alone: those fail on the base tree by definition)."""
    if judged.passed or RepoFlag.RUNNER_TAMPERED in judged.flags:
        return False
    if _TASK_SIDE.intersection(judged.flags):
        return True
    return any(judged.tests.get(t, "missing") != "passed" for t in task.pass_to_pass)


def base_problem(
    task: RepoTask, *, env: Environment, snapshots: Snapshots, settings: RunSettings
) -> str | None:
    """Why the task cannot be graded here, from its tests run with no patch at all (once per
    process and task), or None: the tests ran, and every PASS_TO_PASS test passed.

    A task whose tests do not run, or whose PASS_TO_PASS tests fail, with no patch (a test
    that needs the network, a dependency the environment lacks, output past the runner's cap)
    would fail every patch, the gold one too: a grade of 0 would blame the patch for the task.
    The run is the task's own (the base tree and its test patch), so nothing a response does
    reaches it.
    """
    told = "\0".join((task.test_patch, *task.fail_to_pass, "", *task.pass_to_pass))
    digest = hashlib.sha256(told.encode()).hexdigest()
    key = (task.instance_id, digest, str(env.path), settings.isolation)
    if key in _BASE:
        return _BASE[key]
    judged = judge_patch(task, "", env=env, snapshots=snapshots, settings=settings, enforce=False)
    failing = [t for t in task.pass_to_pass if judged.tests.get(t, "missing") != "passed"]
    problem: str | None = None
    if not judged.tests or RepoFlag.TESTS_DID_NOT_RUN in judged.flags:
        problem = (
            "its tests do not run here even with no patch "
            f"({judged.explanation}): the task cannot be graded here"
        )
    elif failing:
        shown = ", ".join(f"{t} ({judged.tests.get(t, 'missing')})" for t in failing[:3])
        network = network_reason(judged)
        cause = (
            f"its tests reach for the network, which the sandbox does not give ({network})"
            if network
            else "the environment or the network, not the patch"
        )
        problem = (
            f"with no patch, {len(failing)} of its "
            f"{len(task.pass_to_pass)} PASS_TO_PASS tests do not pass here ({shown}"
            f"{' ...' if len(failing) > 3 else ''}): {cause}; the task cannot be graded here "
            "(truegrade audit shows more)"
        )
    _BASE[key] = problem
    return problem


_GOLD: dict[tuple[str, str, str, str], GoldTrace] = {}
_GOLD_RUNS = 2


def gold_trace(
    task: RepoTask, *, env: Environment, snapshots: Snapshots, settings: RunSettings
) -> GoldTrace:
    """What the tests' calls into the code the gold patch changes come to with the gold patch
    applied (run twice; calls that differ between the runs are left out), once per process.

    Raises:
        TaskProblem: the gold patch does not resolve the task here, so nothing can be compared
            with it.
    """
    digest = hashlib.sha256((task.gold_patch + "\0" + task.test_patch).encode()).hexdigest()
    key = (task.instance_id, digest, str(env.path), settings.isolation)
    known = _GOLD.get(key)
    if known is not None:
        return known
    runs = []
    for _ in range(_GOLD_RUNS):
        judged = judge_patch(
            task,
            task.gold_patch,
            env=env,
            snapshots=snapshots,
            settings=settings,
            enforce=False,
            canaries=False,
            trace=True,
        )
        if not judged.passed or judged.run is None:
            raise TaskProblem(
                "the gold patch does not resolve the task here, so no patch can be compared "
                f"with it: {judged.explanation}"
            )
        runs.append(judged.run.calls)
    known = _GOLD[key] = GoldTrace.from_runs(runs)
    return known


_REACH_REASON = (
    "refused: the patch's code reaches for the test runner (its modules, its report, its "
    "configuration or its environment variables), which code under test has no business with"
)


def _reader(tree: Path, test_files: Sequence[str], base: BaseTree) -> Callable[[str], bytes | None]:
    """Files of the task's own tree: the base commit with the task's test patch (from
    ``tree``, for the files the test patch touched), never the response's changes."""
    written = set(test_files)

    def read(path: str) -> bytes | None:
        if path in written:
            local = tree / path
            return local.read_bytes() if local.is_file() and not local.is_symlink() else None
        return base.file(path)

    return read


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
    config: str = "[pytest]\n",
    wanted: Sequence[str] = (),
    trace: Sequence[Target] = (),
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
        config=config,
        wanted=wanted,
        trace=[t.as_job() for t in trace],
    )


def _decide(task: RepoTask, run: TestRun, planted: Canaries, flags: list[str]) -> Judgement:
    if run.runner_in_tree:
        flags = [*flags, RepoFlag.RUNNER_IN_TREE]
    ended = unfinished(run)
    if ended is not None:
        flag, reason = ended
        return Judgement(False, reason, [*flags, flag], run=run)
    truncated = set(task.truncated_ids)
    expected = (*task.fail_to_pass, *task.pass_to_pass)
    tests = {t: _status_of(t, run.outcomes, t in truncated) for t in expected}
    if planted.ids:
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
