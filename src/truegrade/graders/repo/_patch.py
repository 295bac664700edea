"""The response's patch: found in the response, read by git, and held to the trust boundary.

A repository task's reward is only as good as the tests that decide it, and the patch is written
by the model being graded. Every public harness runs the tests in the tree the patch changed, so
a patch that edits a test, adds a ``conftest.py`` hook, a ``.pth`` file or a ``sitecustomize``,
or changes how pytest or the package is configured, changes the judge rather than the code.
Such a change is refused before anything runs (a flagged fail, never an error). The rule is an
allow-list, ``refusal``'s: a patch may change Python sources and documentation, as text, outside
the tests, and add no new top-level module; everything else is refused whatever it is called,
so a configuration file, a ``.pyc``, a native module or a start-up hook under a name nobody
listed is refused all the same. The files are what ``git apply`` itself reads from the patch
(never a hand parse that a crafted header could fool), and a file the task's own test patch
touches is the task's, not the response's.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from truegrade.core import SpecError
from truegrade.graders.match import fenced_blocks

__all__ = [
    "PatchFile",
    "PatchReading",
    "TreeShape",
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
#: What a patch may change: Python sources, and documentation no tool of the run reads.
_SOURCES = frozenset({".py", ".pyi"})
_DOCS = frozenset({".rst", ".md", ".txt"})


@dataclass(frozen=True)
class PatchFile:
    """A path a patch changes, as ``git apply`` reads it: a renamed file is two, the path it
    leaves and the path it takes, so neither side escapes the rules."""

    path: str
    symlink: bool = False
    """The patch makes it a symbolic link (mode 120000)."""
    binary: bool = False
    """The patch changes it with a binary hunk (git reads no lines of it)."""
    created: bool = False
    """The patch creates it (a new file, or a rename's or copy's new path)."""


@dataclass(frozen=True)
class TreeShape:
    """What the refusals need to know of the base tree: the paths it holds (files and the
    directories above them) and its import roots (the directories put on ``sys.path``, ``""``
    for the root)."""

    paths: frozenset[str]
    roots: tuple[str, ...] = ("",)

    @classmethod
    def of(cls, files: Iterable[str], roots: Iterable[str] = ("",)) -> TreeShape:
        """The shape of a tree holding ``files`` (directories are implied by them)."""
        paths: set[str] = set()
        for name in files:
            pure = PurePosixPath(name)
            paths.add(str(pure))
            paths.update(str(p) for p in pure.parents if str(p) != ".")
        return cls(frozenset(paths), tuple("" if r in ("", ".") else r.strip("/") for r in roots))

    def new_top_level(self, path: str) -> str | None:
        """The import root under which ``path`` (a new file) would be a new top-level module
        or package, or None."""
        for root in sorted(self.roots, key=len, reverse=True):
            base = PurePosixPath(root) if root else None
            pure = PurePosixPath(path)
            if base is not None and base not in pure.parents:
                continue
            rel = pure.relative_to(base) if base is not None else pure
            first = str(base / rel.parts[0]) if base is not None else rel.parts[0]
            if len(rel.parts) == 1 or first not in self.paths:
                return root or "the tree's root"
            return None
        return None


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


def _entries(listing: bytes) -> list[tuple[str, bool]]:
    # ``added<TAB>deleted<TAB>path<NUL>`` per file (``-`` for both counts: a binary hunk);
    # a path is never unquoted by hand
    entries = listing.decode("utf-8", "surrogateescape").split("\0")
    out = []
    for entry in entries:
        if entry:
            added, deleted, path = entry.split("\t", 2)
            out.append((path, added == "-" and deleted == "-"))
    return out


def _named(paths: list[str], lines: list[str]) -> set[str]:
    """The paths that ``--summary`` lines name; every path when a line names none of them (a
    name git quoted on that line matches no path: then each counts)."""
    named = {p for p in paths if any(p in line for line in lines)}
    return named or (set(paths) if lines else set())


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
    entries = _entries(forward.stdout) + _entries(backward.stdout)
    paths = list(dict.fromkeys(p for p, _ in entries))
    binary = {p for p, b in entries if b}
    summary = _git_apply(patch, "--summary").stdout.decode("utf-8", "replace").splitlines()
    links = _named(paths, [line for line in summary if re.search(r"\b120000\b", line)])
    made = [line for line in summary if re.match(r"\s*(create mode|rename|copy)\b", line)]
    created = _named(paths, made)
    for line in made:  # a rename's old path is on the same line: only its new path is created
        match = re.match(r"\s*(?:rename|copy) (.*) \(\d+%\)$", line)
        if match and "=>" in match.group(1):
            created.discard(_old_side(match.group(1)))
    return PatchReading(
        tuple(
            PatchFile(p, symlink=p in links, binary=p in binary, created=p in created)
            for p in paths
        )
    )


def _old_side(spec: str) -> str:
    """The old path of a ``--summary`` rename, written ``a/{x => y}/b`` or ``x => y``."""
    match = re.match(r"(.*)\{(.*) => (.*)\}(.*)", spec)
    if match:
        head, old, _, tail = match.groups()
        return re.sub("//+", "/", f"{head}{old}{tail}")
    return spec.split(" => ", 1)[0]


def refusal(
    file: PatchFile, task_files: frozenset[str] = frozenset(), shape: TreeShape | None = None
) -> str | None:
    """Why a response's patch may not change ``file``, or ``None`` when it may.

    An allow-list: a patch may change Python sources (``.py``, ``.pyi``) and documentation
    (``.rst``, ``.md``, ``.txt``) as text, outside the tests, and nothing else. Whatever else
    a file could be (configuration read by a tool, bytecode, a native module, a start-up hook,
    data a test reads) is refused without being named; the names below only give a clearer
    reason. A new source file may not become a new top-level module or package of an import
    root (``shape``): it could shadow a name something else imports.

    ``task_files`` are the files the task's own test patch changes: the response may not plant or
    edit them (the test patch would then apply on top of the response's version, or not at all).

    Examples:
        >>> refusal(PatchFile("src/pkg/core.py")) is None
        True
        >>> refusal(PatchFile("conftest.py"))
        'conftest.py configures how tests are collected or run'
        >>> refusal(PatchFile("pkg/_speedups.so"))
        'pkg/_speedups.so is not a Python source or documentation (all a patch may change)'
    """
    path = file.path
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    suffix = PurePosixPath(name).suffix.lower()
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
    if (suffix not in _SOURCES and suffix not in _DOCS) or "__pycache__" in parts:
        return f"{path} is not a Python source or documentation (all a patch may change)"
    if file.binary:
        return f"{path} is changed by a binary hunk (a patch may change text only)"
    if file.created and suffix in _SOURCES and shape is not None:
        root = shape.new_top_level(path)
        if root is not None:
            return f"{path} would be a new top-level module of {root}, where it could shadow one"
    return None
