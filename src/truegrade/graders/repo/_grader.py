"""``repo``: a patch to a repository, judged by the task's tests in the sandbox.

The grader reads each row as its dataset publishes it (``read_task``), resolves the task's
environment in the caller's process (built once into the cache, so the first grade of a
repository pays for it and no worker's deadline does), and sends each patch to the engine's
killable workers, where ``judge_patch`` applies the trust boundary and runs the tests in the
sandbox. A row that cannot be graded (no snapshot, no interpreter, a test patch that does not
apply) is an error, never a zero.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from truegrade.core import DataError, Flag, Grade, Sample, SpecError
from truegrade.graders._kernel import GraderOptions, Kernel, KernelGrader, error_verdict
from truegrade.graders.repo._env import (
    Environment,
    EnvironmentUnavailable,
    EnvSpec,
    build_environment,
    environment_ready,
    read_requirements,
)
from truegrade.graders.repo._judge import RunSettings, TaskProblem, judge_patch
from truegrade.graders.repo._patch import extract_patch
from truegrade.graders.repo._specs import swebench_spec
from truegrade.graders.repo._swebench import judge_as_swebench
from truegrade.graders.repo._task import RepoTask, read_task
from truegrade.graders.repo._tree import Snapshots, remember_roots

__all__ = ["EnvironmentOptions", "RepoGrader", "RepoKernel", "RepoOptions", "default_cache_dir"]

_MARGIN_S = 60.0


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/truegrade/repo-envs`` (``~/.cache/...`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truegrade" / "repo-envs"


class EnvironmentOptions(BaseModel):
    """A task environment as an option: the Python and the requirements (a list, or a file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    python: str
    requirements: list[str] | str = Field(default_factory=list)
    """pip requirement lines, or the path of a requirements file."""
    source_dirs: list[str] | None = None
    plugins: list[str] = Field(default_factory=list)


class RepoOptions(GraderOptions):
    """Options of ``repo``.

    Attributes:
        repos: Directories holding the repositories' snapshots (``<instance_id>/base.tar.gz``
            with an optional ``requirements.txt`` beside it, or git directories
            ``<owner>__<name>.git``); relative to the spec's directory.
        environments: Environments by ``instance_id``, ``owner/name@version`` or
            ``owner/name`` (the first that names the task wins); a task with none takes the
            ``requirements.txt`` beside its snapshot.
        cache_dir: Where built environments are kept (default ``default_cache_dir()``).
        interpreters: Python version -> interpreter path, before pyenv's and ``PATH``'s.
        cpu_s: CPU-time budget of one run of the tests (its wall-clock backstop follows).
        memory_mb: Memory limit of the tests' processes.
        isolation: The sandbox's isolation (``auto``, ``bwrap``, ``native``; ``none`` needs
            ``unsafe_no_sandbox``).
        unsafe_no_sandbox: Allow running the tests with no isolation where none works.
        harness: ``hardened`` (the default), or ``swebench``: the patch graded as SWE-bench's
            harness grades it (log parsing, fuzzy application, only the test patch's files
            reset), in the same sandbox; the naive grader of the card, never a way to grade.
        differential: What a patch that resolves the tests but behaves unlike the task's gold
            patch on the calls those tests make into the code the gold patch changes comes to:
            ``fail`` (the default: ``diverges_from_gold``, score 0), ``flag`` (the flag, the
            tests' verdict kept) or ``off``. Needs the row's gold ``patch``; the gold patch's
            record is made once per worker, the first time a patch resolves the task.
    """

    repos: list[str] = Field(default_factory=list)
    environments: dict[str, EnvironmentOptions] = Field(default_factory=dict)
    cache_dir: str | None = None
    interpreters: dict[str, str] = Field(default_factory=dict)
    cpu_s: float = Field(default=300.0, gt=0)
    memory_mb: int = Field(default=4096, ge=256)
    isolation: Literal["auto", "bwrap", "native", "none"] = "auto"
    unsafe_no_sandbox: bool = False
    harness: Literal["hardened", "swebench"] = "hardened"
    differential: Literal["fail", "flag", "off"] = "fail"


@dataclass(frozen=True)
class RepoKernel:
    """The per-sample work, run in a worker: judge one patch (picklable)."""

    roots: tuple[str, ...]
    settings: RunSettings
    harness: str = "hardened"
    differential: str = "fail"

    def __call__(self, payload: Any) -> dict[str, Any]:
        patch, task, env = payload
        snapshots = Snapshots(self.roots)
        try:
            if self.harness == "swebench":
                judged = judge_as_swebench(
                    task, patch, env=env, snapshots=snapshots, settings=self.settings
                )
            else:
                judged = judge_patch(
                    task,
                    patch,
                    env=env,
                    snapshots=snapshots,
                    settings=self.settings,
                    differential=self.differential,
                )
            return judged.verdict()
        except TaskProblem as exc:
            return error_verdict(f"task {task.instance_id}: {exc}", Flag.BAD_REFERENCE)


def _task_row(sample: Sample) -> Mapping[str, Any]:
    if isinstance(sample.reference, Mapping):
        return sample.reference
    return sample.metadata


class RepoGrader(KernelGrader):
    """A patch to a repository, judged by its task's tests (SWE-bench rows as published).

    Examples:
        >>> g = RepoGrader.from_options({"repos": ["tests/data/repo"]})
        >>> g.grade(row_with_model_patch).passed  # doctest: +SKIP
        True
    """

    kind = "repo"
    family = "repo"
    Options = RepoOptions
    default_execution = "process"
    inline_refused = "the tests of a patched repository can run without bound"
    options: RepoOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.requires_reference = False  # the task is the row itself
        o = self.options
        base = self.base_dir or Path.cwd()
        self.roots = tuple(str((base / r).resolve()) for r in o.repos)
        self.snapshots = Snapshots(self.roots)
        remember_roots(self.roots)
        self.cache_dir = Path(o.cache_dir).resolve() if o.cache_dir else default_cache_dir()
        if self.cache_dir == Path("/tmp") or Path("/tmp") in self.cache_dir.parents:  # noqa: S108
            raise SpecError(
                f"cache_dir {self.cache_dir} is under /tmp, where the sandbox mounts its own "
                "scratch directory: the tests could not see the environment; choose another"
            )
        self.settings = RunSettings(
            cpu_s=o.cpu_s,
            memory_mb=o.memory_mb,
            isolation=o.isolation,
            unsafe_no_sandbox=o.unsafe_no_sandbox,
        )
        if o.timeout_s is None:
            self.timeout_s = o.cpu_s * 3 + _MARGIN_S
        self._environments: dict[tuple[str, str], Environment | str] = {}

    # -- the row ---------------------------------------------------------------------------------

    def _spec(self, task: RepoTask) -> EnvSpec:
        o = self.options
        base = self.base_dir or Path.cwd()
        keys = [task.instance_id, f"{task.repo}@{task.version}", task.repo]
        for key in keys:
            given = o.environments.get(key)
            if given is None:
                continue
            requirements = given.requirements
            if isinstance(requirements, str):
                lines = (base / requirements).read_text(encoding="utf-8").splitlines()
                requirements = [x.strip() for x in lines if x.strip() and not x.startswith("#")]
            return EnvSpec(
                python=given.python,
                requirements=tuple(requirements),
                source_dirs=tuple(given.source_dirs) if given.source_dirs is not None else None,
                plugins=tuple(given.plugins),
            )
        path = self.snapshots.requirements(task)
        if path is not None:
            return read_requirements(path)
        found = swebench_spec(task.repo, task.version)
        if found is None:
            raise DataError(
                f"task {task.instance_id!r}: no environment for {task.repo} (version "
                f"{task.version}): SWE-bench's specs name none; name one in the environments "
                "option, or put a requirements.txt whose first line is '# CPython X.Y' beside "
                "its snapshot"
            )
        return found

    def task_of(self, sample: Sample) -> RepoTask:
        """The task a row describes (its published columns, as the grader reads them).

        Raises:
            DataError: the row is not a task (the field named).
        """
        return read_task(_task_row(sample))

    def environment_spec(self, task: RepoTask) -> EnvSpec:
        """What the task's environment is made of (its Python and pinned packages).

        Raises:
            DataError: no environment is named for the task.
        """
        return self._spec(task)

    def environment_cached(self, task: RepoTask) -> bool:
        """Whether the task's environment is built already (grading it waits for no build)."""
        try:
            spec = self._spec(task)
        except DataError:
            return False
        return environment_ready(
            repo=task.repo,
            commit=task.environment_setup_commit or task.base_commit,
            spec=spec,
            cache_dir=self.cache_dir,
            interpreters=self.options.interpreters,
        )

    def environment(self, task: RepoTask) -> Environment:
        """The task's environment, built into the cache the first time (in this process)."""
        spec = self._spec(task)
        commit = task.environment_setup_commit or task.base_commit
        key = (task.repo, commit + repr(spec))
        known = self._environments.get(key)
        if isinstance(known, str):
            raise EnvironmentUnavailable(known)
        if known is None:
            try:
                known = build_environment(
                    repo=task.repo,
                    commit=commit,
                    spec=spec,
                    cache_dir=self.cache_dir,
                    interpreters=self.options.interpreters,
                    tree=lambda into: self.snapshots.base(task).extract(into),
                )
            except EnvironmentUnavailable as exc:
                self._environments[key] = str(exc)
                raise
            self._environments[key] = known
        return known

    def _precheck(self, sample: Sample) -> Grade | None:
        # the response (a SWE-bench prediction's model_patch, by the swebench preset) and its
        # size are checked as every grader checks them; then the task and its environment
        problem = super()._precheck(sample)
        if problem is not None:
            return problem
        try:
            self.environment(read_task(_task_row(sample)))
        except EnvironmentUnavailable as exc:
            return Grade.failure(str(exc), "environment_unavailable")
        except DataError as exc:
            return Grade.failure(str(exc), Flag.BAD_ROW)
        return None

    # -- running ---------------------------------------------------------------------------------

    def kernel(self) -> Kernel:
        return RepoKernel(
            self.roots, self.settings, self.options.harness, self.options.differential
        )

    def payload(self, sample: Sample) -> Any:
        task = read_task(_task_row(sample))  # cheap; its environment is memoised by _precheck
        return (extract_patch(sample.response_text), task, self.environment(task))
