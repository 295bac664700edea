"""The response's patch: found in the response, read by git, and held to the trust boundary.

A repository task's reward is only as good as the tests that decide it, and the patch is written
by the model being graded. Every public harness runs the tests in the tree the patch changed, so
a patch that edits a test, adds a ``conftest.py`` hook, a ``.pth`` file or a ``sitecustomize``,
or changes how pytest or the package is configured, changes the judge rather than the code.
Such a change is refused before anything runs (a flagged fail, never an error): the rules are
``refusal``'s, the files are what ``git apply`` itself reads from the patch (never a hand parse
that a crafted header could fool), and a file the task's own test patch touches is the task's,
not the response's.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import PurePosixPath

from truegrade.core import SpecError
from truegrade.graders.match import fenced_blocks

__all__ = [
    "PatchFile",
    "PatchReading",
    "extract_patch",
    "git_executable",
    "read_patch",
    "refusal",
]

_DIFF_START = re.compile(r"^(diff --git |--- )", re.M)

#: File names that configure how tests are collected and run, or how the package is built and
#: installed: a change to one changes the judge.
_CONFIG_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "setup.py",
        "pyproject.toml",
        "noxfile.py",
        ".coveragerc",
        "MANIFEST.in",
        "Makefile",
    }
)
#: Files Python runs at start-up, before any test: a hook there sees every test's outcome.
_STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
_TEST_DIRS = frozenset({"test", "tests", "testing"})
_TEST_FILE = re.compile(r"test_.*\.py|.*_tests?\.py")  # pytest's default python_files


@dataclass(frozen=True)
class PatchFile:
    """A path a patch changes, as ``git apply`` reads it: a renamed file is two, the path it
    leaves and the path it takes, so neither side escapes the rules."""

    path: str
    symlink: bool = False
    """The patch makes it a symbolic link (mode 120000)."""


@dataclass(frozen=True)
class PatchReading:
    """What ``git apply`` read from a patch: its files, or why it could not read it."""

    files: tuple[PatchFile, ...]
    problem: str | None = None


def extract_patch(response: str) -> str | None:
    """The unified diff a response gives: the response itself when it is one, else the last
    fenced block holding a diff, else the response from its first diff header on; ``None``
    when it holds no diff.

    Examples:
        >>> extract_patch("Fixed.\\n```diff\\ndiff --git a/x.py b/x.py\\n```\\n")
        'diff --git a/x.py b/x.py\\n'
        >>> extract_patch("no diff here") is None
        True
    """
    if _DIFF_START.match(response):
        return response
    # the shared scanner: linear in the response, however many fences a hostile one opens
    blocks = [body for body in fenced_blocks(response) if _DIFF_START.search(body)]
    if blocks:
        return blocks[-1]
    start = _DIFF_START.search(response)
    return response[start.start() :] if start else None


def git_executable() -> str:
    """git's path; a ``SpecError`` saying how to install it when there is none."""
    git = shutil.which("git")
    if git is None:
        raise SpecError("repository tasks need git (Debian package git): apt-get install git")
    return git


def _git_apply(patch: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    # ``git apply`` with only reading options touches no tree, so it runs outside any repository
    return subprocess.run(
        [git_executable(), "apply", *args, "-"],
        input=patch.encode("utf-8", "surrogateescape"),
        capture_output=True,
        timeout=30,
        check=False,
        cwd="/",
    )


def _paths(listing: bytes) -> list[str]:
    # ``added<TAB>deleted<TAB>path<NUL>`` per file; a path is never unquoted by hand
    entries = listing.decode("utf-8", "surrogateescape").split("\0")
    return [entry.split("\t", 2)[2] for entry in entries if entry]


@functools.lru_cache(maxsize=256)  # a task's test patch is read at every grade of it
def read_patch(patch: str) -> PatchReading:
    """The paths ``patch`` changes, read by ``git apply --numstat -z``; a patch git cannot read
    has ``problem`` set instead.

    git names a renamed or copied file by its new path only, so the patch is read reversed too
    (where the old path is the new one): the paths of both readings are the paths it touches.
    """
    if not patch.strip():
        return PatchReading((), "the patch is empty")
    forward = _git_apply(patch, "--numstat", "-z")
    if forward.returncode != 0:
        reason = forward.stderr.decode("utf-8", "replace").strip().splitlines()
        return PatchReading((), f"git cannot read the patch: {reason[0] if reason else 'error'}")
    backward = _git_apply(patch, "-R", "--numstat", "-z")
    paths = list(dict.fromkeys(_paths(forward.stdout) + _paths(backward.stdout)))
    summary = _git_apply(patch, "--summary").stdout.decode("utf-8", "replace")
    link_lines = [line for line in summary.splitlines() if re.search(r"\b120000\b", line)]
    # a link whose name git quoted on that line matches no path: then every path counts as one
    links = {p for p in paths if any(p in line for line in link_lines)} or (
        set(paths) if link_lines else set()
    )
    return PatchReading(tuple(PatchFile(p, symlink=p in links) for p in paths))


def refusal(file: PatchFile, task_files: frozenset[str] = frozenset()) -> str | None:
    """Why a response's patch may not change ``file``, or ``None`` when it may.

    ``task_files`` are the files the task's own test patch changes: the response may not plant or
    edit them (the test patch would then apply on top of the response's version, or not at all).

    Examples:
        >>> refusal(PatchFile("src/pkg/core.py")) is None
        True
        >>> refusal(PatchFile("conftest.py"))
        'conftest.py configures how tests are collected or run'
    """
    path = file.path
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    if file.symlink:
        return f"{path} is made a symbolic link"
    if path.startswith("/") or ".." in parts or ".git" in parts:
        return f"{path} lies outside the working tree"
    if path in task_files:
        return f"{path} belongs to the task's test patch"
    if name in _STARTUP_NAMES or name.endswith(".pth"):
        return f"{path} runs when Python starts, before any test"
    if name in _CONFIG_NAMES or (name.startswith("requirements") and name.endswith(".txt")):
        return f"{name} configures how tests are collected or run"
    if _TEST_DIRS & {p.lower() for p in parts[:-1]} or _TEST_FILE.fullmatch(name):
        return f"{path} is a test file"
    return None
