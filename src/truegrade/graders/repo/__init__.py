"""Repository-level tasks (SWE-bench style): a patch to a repository, judged by the task's tests.

``RepoGrader`` (``load_grader("repo")``) reads the task from its published row (``read_task``),
finds the response's patch and holds it to the trust boundary (``extract_patch``,
``read_patch``, ``refusal``: an allow-list, Python sources and documentation as text, outside the
tests, no new top-level module; a patch whose code names the test runner is refused too), applies
it with ``git apply`` to a fresh export of the base commit, plants canaries drawn from the task's
own tests, and runs the tests in the sandbox in a cached read-only environment
(``build_environment``), with a runner that imports pytest before the tree is importable, reads
only the configuration the grader writes, and accounts for each test on a channel no tested
process holds (``judge_patch``). See ``docs/repo.md``.
"""

from truegrade.graders.repo._audit import TaskAudit, TaskFinding, audit_task, impossible_task
from truegrade.graders.repo._canaries import Canaries
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
    TreeShape,
    extract_patch,
    read_patch,
    refusal,
)
from truegrade.graders.repo._prepare import Prepared, prepare_environments
from truegrade.graders.repo._task import RepoTask, read_task
from truegrade.graders.repo._tree import Snapshots, apply_patch, known_snapshots, run_files
from truegrade.graders.repo._weak import GoldMutant, gold_mutants

__all__ = [
    "Canaries",
    "EnvSpec",
    "Environment",
    "EnvironmentUnavailable",
    "GoldMutant",
    "Judgement",
    "PatchFile",
    "PatchReading",
    "Prepared",
    "RepoFlag",
    "RepoGrader",
    "RepoOptions",
    "RepoTask",
    "RunSettings",
    "Snapshots",
    "TaskAudit",
    "TaskFinding",
    "TaskProblem",
    "TreeShape",
    "apply_patch",
    "audit_task",
    "build_environment",
    "default_cache_dir",
    "extract_patch",
    "find_python",
    "gold_mutants",
    "import_dirs",
    "impossible_task",
    "judge_patch",
    "known_snapshots",
    "prepare_environments",
    "read_patch",
    "read_requirements",
    "read_task",
    "refusal",
    "run_files",
]
