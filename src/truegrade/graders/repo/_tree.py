"""The tree a repository task's tests run in: the base commit exported fresh, the response's patch
and then the task's test patch applied with ``git apply`` (no fuzz), canary tests added.

Why a fresh export and not a checkout: a checkout carries the repository's history, and a patch's
code could read the fix from a later commit (reported against SWE-bench). An export is the base
commit's files and nothing else. Snapshots are found in local roots, never fetched:

* ``<root>/<instance_id>/base.tar.gz`` (or ``<root>/<instance_id>.tar.gz``): a ``git archive`` of
  the base commit (its embedded commit id must be the task's);
* ``<root>/<owner>__<name>.git`` or ``<root>/<owner>/<name>`` (``.git`` or not): a git
  directory, exported with ``git archive <base_commit>``.

The patches are applied on the host with git, not in the sandbox: ``git apply`` neither runs nor
follows anything the patch holds, and refuses paths outside the tree; the trust boundary
(``truegrade.graders.repo._patch``) has already refused links and protected files.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath

from truegrade.core import DataError
from truegrade.graders.repo._patch import TreeShape, git_executable
from truegrade.graders.repo._task import RepoTask

__all__ = [
    "BaseTree",
    "Snapshots",
    "apply_patch",
    "known_snapshots",
    "pack_tree",
    "remember_roots",
    "run_files",
    "workspace",
]

_GIT_TIMEOUT_S = 120.0


class Snapshots:
    """Where repositories' base trees are found: local roots, searched in order."""

    def __init__(self, roots: Sequence[str | Path]) -> None:
        self.roots = tuple(Path(r) for r in roots)

    def _candidates(self, task: RepoTask) -> Iterator[tuple[str, Path]]:
        """``("archive" | "git", path)`` of each snapshot the roots hold for the task, in order:
        in each root, archives named by the instance, then git directories of the repository."""
        owner, _, name = task.repo.partition("/")
        for root in self.roots:
            for archive in (
                root / task.instance_id / "base.tar.gz",
                root / task.instance_id / "base.tar",
                root / f"{task.instance_id}.tar.gz",
                root / f"{task.instance_id}.tar",
            ):
                if archive.is_file():
                    yield "archive", archive
            for git_dir in (
                root / f"{owner}__{name}.git",
                root / f"{owner}__{name}",
                root / owner / f"{name}.git",
                root / owner / name,
            ):
                if (git_dir / "HEAD").is_file() or (git_dir / ".git").exists():
                    yield "git", git_dir

    def requirements(self, task: RepoTask) -> Path | None:
        """``<root>/<instance_id>/requirements.txt``, when a root has one."""
        for root in self.roots:
            path = root / task.instance_id / "requirements.txt"
            if path.is_file():
                return path
        return None

    def base(self, task: RepoTask) -> BaseTree:
        """The base commit's tree, read once per process (kept in memory, a few of them).

        Raises:
            DataError: no root holds the repository, or the snapshot is of another commit.
        """
        problem: DataError | None = None
        for kind, path in self._candidates(task):
            try:
                if kind == "git":
                    return _git_tree(str(path), task.base_commit)
                stat = path.stat()
                return _archive_tree(str(path), stat.st_mtime_ns, stat.st_size, task.base_commit)
            except DataError as exc:  # another commit's snapshot: a later root may hold it
                problem = problem or exc
        if problem is not None:
            raise DataError(f"task {task.instance_id!r}: {problem}")
        where = ", ".join(str(r) for r in self.roots) or "(no root given)"
        raise DataError(
            f"task {task.instance_id!r}: no snapshot of {task.repo} in {where}: give a "
            f"directory holding {task.instance_id}/base.tar.gz or a git directory "
            f"{task.repo.replace('/', '__')}.git (option repos)"
        )

    def read(self, task: RepoTask, path: str) -> str | None:
        """The text of one file of the base tree (None: no snapshot, no such file, or not
        text). What the attack library writes its patches against, as an agent reads the
        repository before it edits it."""
        try:
            data = self.base(task).file(path)
        except DataError:
            return None
        try:
            return data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            return None

    def export(self, task: RepoTask, into: Path) -> None:
        """Write the base commit's files into the empty directory ``into``.

        Raises:
            DataError: as ``base``.
        """
        self.base(task).extract(into)


class BaseTree:
    """A base commit's files as an uncompressed tar held in memory: a grade writes to disk only
    the files its patches touch, and the sandbox gets the rest straight from here."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            self.members = {m.name.rstrip("/"): m for m in tar.getmembers() if m.name != "."}
        self._shapes: dict[tuple[str, ...], TreeShape] = {}

    def shape(self, roots: Sequence[str]) -> TreeShape:
        """What the refusals need of this tree, with ``roots`` as its import roots."""
        key = tuple(roots)
        if key not in self._shapes:
            self._shapes[key] = TreeShape.of(self.members, key)
        return self._shapes[key]

    def file(self, path: str) -> bytes | None:
        """A regular file's bytes, None when the tree has no such file."""
        member = self.members.get(path)
        if member is None or not member.isfile():
            return None
        return self.data[member.offset_data : member.offset_data + member.size]

    def extract(self, into: Path, paths: Iterable[str] | None = None) -> None:
        """Write the tree (or only ``paths`` of it that exist) into ``into``."""
        with tarfile.open(fileobj=io.BytesIO(self.data)) as tar:
            wanted = (
                None if paths is None else [self.members[p] for p in paths if p in self.members]
            )
            tar.extractall(into, members=wanted, filter="data")

    def overlay(self, work: Path, touched: Iterable[str]) -> bytes:
        """The tree with each ``touched`` path as ``work`` holds it (absent there: removed), as
        an uncompressed tar for the sandbox; without bytecode (``.pyc``, ``.pyo``, anything
        under ``__pycache__``), which Python would run instead of, or without, a source."""
        replaced = set(touched)
        # the base's own members are copied as the bytes they are in its tar (headers and
        # data, extended headers included), the touched paths written after them
        kept = [self.data[start:end] for name, start, end in self._spans if name not in replaced]
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as out:
            for path in sorted(replaced):
                local = work / path
                if _bytecode(path):
                    continue
                if local.is_symlink() or local.is_file():
                    out.add(local, arcname=path, recursive=False)
            added = buffer.getvalue()[: out.offset]  # without the end-of-archive blocks
        return b"".join(kept) + added + bytes(2 * tarfile.BLOCKSIZE)

    @functools.cached_property
    def _spans(self) -> list[tuple[str, int, int]]:
        """``(name, start, end)`` of each member's bytes in the base tar, bytecode left out."""
        spans = []
        for member in self.members.values():
            if _bytecode(member.name):
                continue
            size = member.size if member.isfile() else 0
            blocks = -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
            spans.append((member.name.rstrip("/"), member.offset, member.offset_data + blocks))
        return sorted(spans, key=lambda span: span[1])


def _bytecode(path: str) -> bool:
    return path.endswith((".pyc", ".pyo")) or "__pycache__" in PurePosixPath(path).parts


def _checked(data: bytes, commit: str, where: str) -> BaseTree:
    tree = BaseTree(data)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        said = tar.pax_headers.get("comment")
    if said and not said.startswith(commit[:40]):
        raise DataError(f"{where} is an export of {said}, not of the base commit {commit}")
    return tree


@functools.lru_cache(maxsize=8)
def _archive_tree(path: str, mtime_ns: int, size: int, commit: str) -> BaseTree:
    del mtime_ns, size  # in the key: a snapshot replaced on disk is read again
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        return _checked(handle.read(), commit, path)


@functools.lru_cache(maxsize=8)
def _git_tree(git_dir: str, commit: str) -> BaseTree:
    done = subprocess.run(
        [git_executable(), "-C", git_dir, "archive", "--format=tar", commit],
        capture_output=True,
        timeout=_GIT_TIMEOUT_S,
        env=_git_env(Path(git_dir)),
        check=False,
    )
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise DataError(f"{git_dir} has no commit {commit}: {said}")
    return _checked(done.stdout, commit, git_dir)


_REMEMBERED: list[Path] = []


def remember_roots(roots: Sequence[str | Path]) -> None:
    """Note snapshot roots a ``repo`` grader of this process uses, for ``known_snapshots``."""
    for root in roots:
        path = Path(root)
        if path not in _REMEMBERED:
            _REMEMBERED.append(path)


def known_snapshots() -> Snapshots:
    """The snapshot roots this process knows: ``$TRUEGRADE_REPOS`` (``:``-separated), then
    those of every ``repo`` grader built here (the attack library reads base files there)."""
    given = [Path(p) for p in os.environ.get("TRUEGRADE_REPOS", "").split(":") if p]
    return Snapshots([*given, *(r for r in _REMEMBERED if r not in given)])


def _git_env(where: Path) -> dict[str, str]:
    """git with no user or system configuration, and no repository found above ``where``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(where),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CEILING_DIRECTORIES": str(where.parent),
        "LC_ALL": "C",
    }


@contextlib.contextmanager
def workspace() -> Iterator[Path]:
    """An empty private directory for one grade's tree, removed afterwards."""
    base = tempfile.mkdtemp(prefix="truegrade-repo-")
    try:
        tree = Path(base) / "tree"
        tree.mkdir()
        yield tree
    finally:
        shutil.rmtree(base, ignore_errors=True)


def apply_patch(tree: Path, patch: str, *, fuzzy: bool = False) -> str | None:
    """Apply ``patch`` to ``tree`` with ``git apply`` as it is (no fuzz, no reduced context, no
    rejects); None when it applied, else git's reason.

    ``fuzzy`` falls back, as SWE-bench's harness does, to ``patch --fuzz=5``, which applies a
    hunk whose context does not match where it finds something close enough: only for the
    SWE-bench-style harness that the attacks are measured against.
    """
    if not patch.strip():
        return None
    done = _feed(tree, patch, git_executable(), "apply", "--whitespace=nowarn", "-")
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    problem = "; ".join(said[:4]) or f"git apply exited {done.returncode}"
    patch_tool = shutil.which("patch")
    if not fuzzy or patch_tool is None:
        return problem
    fuzzed = _feed(tree, patch, patch_tool, "--batch", "--fuzz=5", "-p1", "--no-backup-if-mismatch")
    return None if fuzzed.returncode == 0 else problem


def _feed(tree: Path, patch: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """Run a patch tool in ``tree`` on ``patch`` (its stdin); nothing of the patch runs."""
    return subprocess.run(
        list(argv),
        input=patch.encode("utf-8", "surrogateescape"),
        cwd=tree,
        capture_output=True,
        timeout=_GIT_TIMEOUT_S,
        env=_git_env(tree),
        check=False,
    )


def run_files(task: RepoTask, test_patch_files: Sequence[str], tree: Path) -> list[str]:
    """The test files to run: those the test patch touches and those the expected tests name,
    that exist in the tree (SWE-bench runs the test patch's files)."""
    named = [t.split("::", 1)[0] for t in (*task.fail_to_pass, *task.pass_to_pass)]
    out: list[str] = []
    for path in (*test_patch_files, *named):
        if path.endswith(".py") and path not in out and (tree / path).is_file():
            out.append(path)
    return out


def pack_tree(tree: Path) -> bytes:
    """The tree as an uncompressed tar, for the sandbox (which takes flat files only)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder, dirs, names in os.walk(tree):  # links are not followed, only packed
            dirs.sort()
            for name in sorted(dirs) + sorted(names):
                path = Path(folder) / name
                tar.add(path, arcname=str(path.relative_to(tree)), recursive=False)
    return buffer.getvalue()
