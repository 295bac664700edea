"""The environment a repository task's tests run in: one venv per (repository, environment
commit, Python, requirements), built once and then only read.

Why a cache of built venvs and not an install per grade: installing runs code the patch could
have planted (a ``setup.py``, a ``pytest11`` entry point, a ``.pth`` file), so the environment is
built from the task's pinned requirements *before* any response is seen, and each grade only reads
it (the sandbox mounts it read-only). The patched tree is put on ``sys.path`` at run time, so
nothing the patch changes is ever installed. Where a task's tests need the repository installed
(its entry points, its own dependencies: ``EnvSpec.install``), the *base* tree is installed at
build time, editable, from a copy deleted once the build is done: the metadata and the
dependencies stay, the link points nowhere, and the code imported is the patched tree's.

Interpreters are looked up, never downloaded: ``interpreters`` given by the user, then pyenv's
versions (``$PYENV_ROOT``, default ``~/.pyenv``), then ``pythonX.Y`` on ``PATH``. A task that
needs a Python this machine lacks gets one error saying which and how to add it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from truegrade.core import DataError

__all__ = [
    "EnvSpec",
    "Environment",
    "EnvironmentUnavailable",
    "build_environment",
    "environment_ready",
    "find_python",
    "read_requirements",
]

_PYTHON = re.compile(r"^(?:CPython\s+|python\s*)?(\d+)\.(\d+)(?:\.(\d+))?$", re.IGNORECASE)
_BUILD_TIMEOUT_S = 1800.0


class EnvironmentUnavailable(DataError):
    """A task's environment cannot be had here: its Python is missing, or its requirements do
    not install (the message says which, and what pip said)."""


@dataclass(frozen=True)
class EnvSpec:
    """What a task's tests need: a CPython version and pinned requirements.

    Attributes:
        python: ``3.9`` or ``3.9.18`` (a version without its patch level takes the newest found).
        requirements: pip requirement lines (a ``pip freeze`` of a working environment is best:
            unpinned packages take whatever the index has on the day the venv is built).
        source_dirs: The tree's directories put on ``sys.path``, relative to its root (None:
            ``src`` when the tree has one, else the root), since the repository is not installed.
        plugins: pytest plugins the tests need, loaded by name (``-p``): entry points are not
            read, so a plugin installed in the venv is off unless named here.
    """

    python: str
    requirements: tuple[str, ...] = ()
    source_dirs: tuple[str, ...] | None = None
    plugins: tuple[str, ...] = ()
    install: str | None = None
    """What of the base tree to install (``.`` or ``.[extras]``): editable, from a copy of the
    base tree deleted after the build (entry points and dependencies, never code)."""
    tree_requirements: tuple[str, ...] = ()
    """Requirements files of the base tree to install first (the first that exists)."""
    pre_install: tuple[str, ...] = ()
    """Commands run in the copy of the base tree before it is installed (SWE-bench's own)."""
    origin: str = ""
    """Where the spec came from, for messages (``SWE-bench's specs for pallets/flask 2.3``)."""

    def __post_init__(self) -> None:
        if not _PYTHON.match(self.python.strip()):
            raise DataError(f"environment: python must be a version like 3.9, not {self.python!r}")


def read_requirements(path: Path) -> EnvSpec:
    """An ``EnvSpec`` from a requirements file whose first comment names its CPython
    (``# CPython 3.9.18``, as ``tests/data/repo`` writes them)."""
    text = path.read_text(encoding="utf-8")
    python = None
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        found = re.match(r"#\s*(CPython\s+\d+\.\d+(?:\.\d+)?)\b", line, re.IGNORECASE)
        if found and python is None:
            python = found.group(1)
        elif line and not line.startswith("#"):
            lines.append(line)
    if python is None:
        raise DataError(f"{path}: the first comment must name the Python (# CPython 3.9.18)")
    return EnvSpec(python=python, requirements=tuple(lines))


def _version(text: str) -> tuple[int, ...]:
    found = _PYTHON.match(text.strip())
    assert found is not None  # EnvSpec checked it
    return tuple(int(g) for g in found.groups() if g is not None)


def _pyenv_pythons() -> Iterator[tuple[tuple[int, ...], Path]]:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", entry.name)
            exe = entry / "bin" / "python"
            if found and exe.exists():
                yield tuple(int(g) for g in found.groups()), exe


def find_python(version: str, interpreters: Mapping[str, str] | None = None) -> Path:
    """The interpreter for ``version``: ``interpreters[version]``, else the newest pyenv
    CPython of that version, else ``pythonX.Y`` on ``PATH``.

    Raises:
        EnvironmentUnavailable: none is there; the message says where it looked.
    """
    wanted = _version(version)
    for key, path in (interpreters or {}).items():
        given = _version(key)
        if given[: len(wanted)] == wanted or wanted[: len(given)] == given:
            return Path(path)
    found = sorted((v, p) for v, p in _pyenv_pythons() if v[: len(wanted)] == wanted)
    if found:
        return found[-1][1]
    on_path = shutil.which(f"python{wanted[0]}.{wanted[1]}")
    if on_path and _reported(on_path)[: len(wanted)] == wanted:
        return Path(on_path)
    raise EnvironmentUnavailable(
        f"this task needs CPython {version}, and this machine has none: looked in the "
        "interpreters option, in pyenv's versions ($PYENV_ROOT, default ~/.pyenv) and for "
        f"python{wanted[0]}.{wanted[1]} on PATH; install it (pyenv install "
        f"{version}) or name it in the interpreters option"
    )


def _reported(executable: str) -> tuple[int, ...]:
    out = subprocess.run(
        [executable, "-c", "import sys; print(*sys.version_info[:3])"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return tuple(int(p) for p in out.stdout.split()) if out.returncode == 0 else ()


@dataclass(frozen=True)
class Environment:
    """A built venv: where it is, and the interpreter behind it (both mounted read-only)."""

    path: Path
    base_prefix: Path
    """The base interpreter's installation (the standard library the venv runs on)."""
    spec: EnvSpec

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def _key(repo: str, commit: str, python: Path, spec: EnvSpec) -> str:
    text = "\n".join([repo, commit, str(python.resolve()), *spec.requirements])
    if spec.install is not None or spec.tree_requirements or spec.pre_install:
        text += "\n" + repr((spec.install, spec.tree_requirements, spec.pre_install))
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", repo)[:60]
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # one builder per environment, across processes
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _clean_env() -> dict[str, str]:
    """pip's own settings (an index, a mirror) pass; nothing that changes what Python loads."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONUSERBASE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def build_environment(
    *,
    repo: str,
    commit: str,
    spec: EnvSpec,
    cache_dir: Path,
    interpreters: Mapping[str, str] | None = None,
    tree: Callable[[Path], None] | None = None,
) -> Environment:
    """The venv for ``spec``, built into ``cache_dir`` the first time it is asked for.

    ``tree(into)`` writes the base tree into a directory: needed when ``spec`` installs from it
    (``install``, ``tree_requirements``, ``pre_install``).

    The venv is built under a temporary name and renamed when complete, so a build that was
    killed half-way is never taken for a built one; concurrent builders of the same environment
    wait for the first.

    Raises:
        EnvironmentUnavailable: the Python is missing, or pip could not install the
            requirements (pip's last lines are in the message).
    """
    python = find_python(spec.python, interpreters)
    target = cache_dir / _key(repo, commit, python, spec)
    base_prefix = python.resolve().parent.parent
    if not (target / ".complete").exists():
        with _locked(cache_dir / f"{target.name}.lock"):
            if not (target / ".complete").exists():
                _build(python, spec, target, tree)
    return Environment(path=target, base_prefix=base_prefix, spec=spec)


def environment_ready(
    *,
    repo: str,
    commit: str,
    spec: EnvSpec,
    cache_dir: Path,
    interpreters: Mapping[str, str] | None = None,
) -> bool:
    """Whether ``build_environment`` would find this environment built (no build to wait for)."""
    try:
        python = find_python(spec.python, interpreters)
    except EnvironmentUnavailable:
        return False
    return (cache_dir / _key(repo, commit, python, spec) / ".complete").exists()


def _build(
    python: Path, spec: EnvSpec, target: Path, tree: Callable[[Path], None] | None = None
) -> None:
    work = target.with_name(f".{target.name}.{os.getpid()}.building")
    copy = target.with_name(f".{target.name}.{os.getpid()}.tree")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    steps: list[tuple[list[str], Path | None]] = [([str(python), "-m", "venv", str(work)], None)]
    pip = [str(work / "bin" / "python"), "-m", "pip", "install", "--no-input", "--quiet"]
    pip.append("--disable-pip-version-check")
    if spec.requirements:
        requirements = work.with_name(work.name + ".txt")
        requirements.write_text("\n".join(spec.requirements) + "\n", encoding="utf-8")
        steps.append(([*pip, "-r", str(requirements)], None))
    needs_tree = spec.install is not None or spec.tree_requirements or spec.pre_install
    if needs_tree:
        if tree is None:
            raise EnvironmentUnavailable(
                f"{spec.origin or 'the environment'} installs from the repository's tree, and "
                "no tree was given to build it from"
            )
        shutil.rmtree(copy, ignore_errors=True)
        copy.mkdir(parents=True)
        tree(copy)
        for command in spec.pre_install:
            steps.append((["bash", "-c", command], copy))
        found = next((r for r in spec.tree_requirements if (copy / r).is_file()), None)
        if spec.tree_requirements and found is None:
            raise EnvironmentUnavailable(
                f"{spec.origin}: none of {', '.join(spec.tree_requirements)} is in the "
                "repository's tree, so its requirements cannot be read"
            )
        if found is not None:
            steps.append(([*pip, "-r", str(copy / found)], (copy / found).parent))
        if spec.install is not None:
            # editable, from a copy deleted after the build: the metadata and the dependencies
            # are installed, the code is not (the patched tree is what the tests import)
            steps.append(([*pip, "-e", str(copy) + spec.install.removeprefix(".")], copy))
    try:
        for argv, where in steps:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=_BUILD_TIMEOUT_S,
                env=_clean_env(),
                cwd=where,
                check=False,
            )
            if done.returncode != 0:
                said = (done.stderr or done.stdout).strip().splitlines()[-8:]
                raise EnvironmentUnavailable(
                    f"building the environment (CPython {spec.python}) failed at "
                    f"{' '.join(argv[1:4])}: " + " / ".join(said)
                )
        (work / ".complete").write_text(sys.version, encoding="utf-8")
        work.rename(target)
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentUnavailable(
            f"building the environment took over {exc.timeout:.0f} s"
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(copy, ignore_errors=True)
        with contextlib.suppress(OSError):
            work.with_name(work.name + ".txt").unlink()
