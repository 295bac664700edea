"""Repository-level tasks (SWE-bench style): a patch to a repository, judged by the task's tests.

``RepoGrader`` (``load_grader("repo")``) reads the task from its published row (``read_task``),
finds the response's patch and holds it to the trust boundary (``extract_patch``,
``read_patch``, ``refusal``: a patch that changes a test, a ``conftest.py``, the test or
packaging configuration, a start-up hook, a file of the task's own test patch, or makes a
symbolic link, is refused before anything runs), applies it with ``git apply`` to a fresh export
of the base commit, and runs the task's tests in the sandbox in a cached read-only environment
(``build_environment``), reading outcomes from a JUnit report and canary tests
(``judge_patch``). See ``docs/repo.md``.
"""

from truegrade.graders.repo._audit import TaskAudit, TaskFinding, audit_task, impossible_task
from truegrade.graders.repo._env import (
    Environment,
    EnvironmentUnavailable,
    EnvSpec,
    build_environment,
    find_python,
    read_requirements,
)
from truegrade.graders.repo._grader import RepoGrader, RepoOptions, default_cache_dir
from truegrade.graders.repo._judge import (
    Judgement,
    RepoFlag,
    RunSettings,
    TaskProblem,
    import_dirs,
    judge_patch,
)
from truegrade.graders.repo._patch import (
    PatchFile,
    PatchReading,
    extract_patch,
    read_patch,
    refusal,
)
from truegrade.graders.repo._task import RepoTask, read_task
from truegrade.graders.repo._tree import Snapshots, apply_patch, known_snapshots, run_files

__all__ = [
    "EnvSpec",
    "Environment",
    "EnvironmentUnavailable",
    "Judgement",
    "PatchFile",
    "PatchReading",
    "RepoFlag",
    "RepoGrader",
    "RepoOptions",
    "RepoTask",
    "RunSettings",
    "Snapshots",
    "TaskAudit",
    "TaskFinding",
    "TaskProblem",
    "apply_patch",
    "audit_task",
    "build_environment",
    "default_cache_dir",
    "extract_patch",
    "find_python",
    "import_dirs",
    "impossible_task",
    "judge_patch",
    "known_snapshots",
    "read_patch",
    "read_requirements",
    "read_task",
    "refusal",
    "run_files",
]
