"""Repository-level tasks (SWE-bench style): a patch to a repository, judged by the task's tests.

What is here so far is the part every later step rests on: the task read from its published row
(``read_task``), and the response's patch found, read by git and held to the trust boundary
(``extract_patch``, ``read_patch``, ``refusal``): a patch that changes a test, a ``conftest.py``,
the test or packaging configuration, a start-up hook (``*.pth``, ``sitecustomize``), a file of
the task's own test patch, or makes a symlink, is refused before anything runs. The grader that
builds the task's environment and runs its tests in the sandbox is not registered yet; see
``docs/repo.md``.
"""

from truegrade.graders.repo._patch import (
    PatchFile,
    PatchReading,
    extract_patch,
    read_patch,
    refusal,
)
from truegrade.graders.repo._task import RepoTask, read_task

__all__ = [
    "PatchFile",
    "PatchReading",
    "RepoTask",
    "extract_patch",
    "read_patch",
    "read_task",
    "refusal",
]
