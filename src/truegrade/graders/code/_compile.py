"""What a build of a stdin/stdout program costs, made smaller: a precompiled ``bits/stdc++.h``
for C++, and one build cache per process for every language.

Most competitive C++ programs start with ``#include <bits/stdc++.h>``, the whole standard
library, and parsing it is most of their compile time (``benchmarks/`` has the numbers). So the
header is precompiled once per machine and compiler, with exactly the flags of the builds
(taken from the C++ toolchain's own command, so the two cannot drift apart), and every C++
build gets ``-I <its directory>``: gcc then finds ``bits/stdc++.h.gch`` there before the
system header, and uses it when it is valid for that build (same compiler, same flags, nothing
defined before the include), else reads the header as always. A program that does not include
it compiles as before.

Where it lives: ``$TRUEGRADE_PCH_DIR``, else ``$XDG_CACHE_HOME/truegrade/pch``, else
``~/.cache/truegrade/pch`` (an empty ``TRUEGRADE_PCH_DIR`` turns it off), one directory per
compiler, version, flags and header set (a hash of the compiler's path and version, the flags,
and every header the standard library pulls in, with its size and time), so an upgraded
compiler or library gets a new one and an old one is never used by a compiler it does not fit.

How it is made. By the same sandboxed build path as any program (a sandbox of its own, with room
for the 100 MB it writes), though it compiles only a system header: nothing of a program is
involved. The result is written on the host into a temporary directory and renamed into place,
so a reader sees a complete directory or none; a lock file makes concurrent workers wait for
the one making it instead of making it too (any that still race lose the rename and drop their
copy). Only ``ensure_pch`` makes it, before a response's time budget starts (a worker's first
C++ response waits for it, once per machine).

How the sandbox sees it. The cache's root directory is one of the sandbox's read-only
directories (bubblewrap binds it read-only, Landlock allows reading it), created before the
sandbox starts, so a header made later appears inside too. Nothing else of the home directory
is visible, and nothing inside the sandbox can write there: the compiler of untrusted source
runs exactly as sandboxed as before and only reads it. When the header cannot be made (no g++,
no writable cache directory, the root under ``/tmp``, which the sandbox's scratch directory
covers), builds go on without it and ``truegrade doctor`` says why.

Java, Rust and Go get no precompiled header (their compilers have no such thing that fits a
single-file program); the build cache (``BUILD_CACHE``) serves every language alike.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace

from truegrade.graders.code._languages import LANGUAGES, Language, toolchain
from truegrade.sandbox import BuildCache, ExecLimits, Sandbox, SandboxConfig, SandboxError

__all__ = [
    "BUILD_CACHE",
    "PCH_HEADER",
    "ensure_pch",
    "pch_dirs",
    "pch_root",
    "pch_status",
    "with_pch",
]

BUILD_CACHE = BuildCache()
"""This process's builds by their whole input (every sandbox of an engine worker shares it)."""

PCH_HEADER = "bits/stdc++.h"
_GCH = PCH_HEADER + ".gch"
_ENV_DIR = "TRUEGRADE_PCH_DIR"
_HOST_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
_MAKE_TIMEOUT_S = 180.0
_LOCK_WAIT_S = 300.0
_RETRY_S = 600.0
_PCH_SCRATCH_MB = 512  # the header is about 100 MB; the sandbox's scratch holds it while kept
_PCH_MEMORY_MB = 2048


def pch_root() -> str | None:
    """The directory holding the precompiled headers (see the module docstring), or None when
    they are turned off (``TRUEGRADE_PCH_DIR`` set empty)."""
    chosen = os.environ.get(_ENV_DIR)
    if chosen is not None:
        return os.path.abspath(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "truegrade", "pch")


def _cpp() -> Language:
    return LANGUAGES["cpp"]


def _unusable(root: str | None) -> str:
    """Why ``root`` cannot hold the headers, or ""."""
    if root is None:
        return f"turned off ({_ENV_DIR} is empty)"
    if isinstance(toolchain(_cpp(), "", 256), str):
        return "no g++ on /usr/bin:/bin"
    real = os.path.realpath(root)
    if real == "/tmp" or real.startswith("/tmp/"):  # noqa: S108 - the sandbox's own /tmp
        return f"{root} is under /tmp, which the sandbox's scratch directory covers"
    return ""


def pch_dirs() -> tuple[str, ...]:
    """The read-only directories the sandbox needs for the headers: the cache's root, created
    now (a sandbox binds only what exists when it starts; a header made later shows up in it).
    Empty when there is no C++ compiler or no such directory can be made."""
    root = pch_root()
    if _unusable(root) or root is None:
        return ()
    try:
        os.makedirs(root, mode=0o755, exist_ok=True)
    except OSError:
        return ()
    return (root,) if os.access(root, os.W_OK | os.X_OK) else ()


@dataclass(frozen=True)
class _Plan:
    """One precompiled header: the compiler, its flags, and the directory it goes in."""

    compiler: str
    flags: tuple[str, ...]
    root: str
    name: str

    @property
    def directory(self) -> str:
        return os.path.join(self.root, self.name)

    @property
    def ready(self) -> bool:
        return os.path.isfile(os.path.join(self.directory, _GCH))


def _flags(build: list[str]) -> tuple[str, ...]:
    """The compile flags of a build command: its options, less the output and the libraries."""
    flags: list[str] = []
    args = iter(build[1:])
    for arg in args:
        if arg == "-o":
            next(args, None)
        elif arg.startswith("-") and not arg.startswith("-l"):
            flags.append(arg)
    return tuple(flags)


def _host(argv: list[str], stdin: str = "") -> str:
    """A trusted command's output (the system compiler on our own one-line input)."""
    done = subprocess.run(  # the resolved system compiler, our own arguments
        argv, input=stdin, capture_output=True, text=True, timeout=60, env=_HOST_ENV, cwd="/"
    )
    if done.returncode != 0:
        raise OSError(f"{' '.join(argv[:2])} failed: {done.stderr.strip()[:300]}")
    return done.stdout


@functools.lru_cache(maxsize=8)
def _plan(compiler: str, flags: tuple[str, ...], root: str) -> _Plan:
    """The header's directory for this compiler, these flags and the headers installed now.

    Raises:
        OSError: the compiler cannot say its version or the header's dependencies.
    """
    version = _host([compiler, "-dumpfullversion"]).strip()
    machine = _host([compiler, "-dumpmachine"]).strip()
    deps = _host([compiler, *flags, "-M", "-x", "c++", "-"], f"#include <{PCH_HEADER}>\n")
    headers = sorted({w for w in deps.split() if w.startswith("/")})
    stats = []
    for path in headers:
        info = os.stat(path)
        stats.append([path, info.st_size, info.st_mtime_ns])
    tool = os.stat(compiler)
    whole = [compiler, tool.st_size, tool.st_mtime_ns, version, machine, flags, stats]
    digest = hashlib.sha256(json.dumps(whole).encode()).hexdigest()[:16]
    return _Plan(compiler, flags, root, f"gcc-{version}-{machine}-{digest}")


def _current_plan() -> _Plan | str:
    """The plan for the C++ toolchain as it builds today, or why there is none."""
    root = pch_root()
    why = _unusable(root)
    if why or root is None:
        return why
    chain = toolchain(_cpp(), "", 256)
    if isinstance(chain, str) or not chain.build:
        return "no g++ on /usr/bin:/bin"
    try:
        return _plan(chain.build[0], _flags(chain.build), root)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot read the compiler's version or headers: {exc}"


_lock = threading.Lock()
_failed: dict[str, tuple[float, str]] = {}


def ensure_pch(config: SandboxConfig) -> str | None:
    """The directory holding a ready ``bits/stdc++.h.gch`` for C++ builds in sandboxes of
    ``config``, made now if needed (once per machine); None when there is none (``pch_status``
    says why). A failure is remembered for ten minutes, so a batch does not retry per program.
    """
    plan = _current_plan()
    if isinstance(plan, str) or plan.root not in config.read_only_dirs:
        return None
    if plan.ready:
        return plan.directory
    with _lock:
        failed = _failed.get(plan.name)
        if failed is not None and time.monotonic() - failed[0] < _RETRY_S:
            return None
        try:
            _make_locked(plan, config)
        except (OSError, SandboxError) as exc:
            _failed[plan.name] = (time.monotonic(), str(exc))
            return None
    return plan.directory if plan.ready else None


def _make_locked(plan: _Plan, config: SandboxConfig) -> None:
    """Make the header unless another process has, holding the root's lock file meanwhile."""
    lock_path = os.path.join(plan.root, f".{plan.name}.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError("another process has been making it for too long") from None
                time.sleep(0.1)
        if plan.ready:
            return
        for stale in os.listdir(plan.root):  # copies of makers that died: only we write now
            if stale.startswith(f".{plan.name}.tmp"):
                shutil.rmtree(os.path.join(plan.root, stale), ignore_errors=True)
        _make(plan, config)
    finally:
        os.close(fd)  # releases the lock


def _make(plan: _Plan, config: SandboxConfig) -> None:
    """Compile the header in a sandbox of its own and put it in place atomically.

    Raises:
        OSError / SandboxError: it could not be made or written.
    """
    chain = toolchain(_cpp(), "", 256)
    assert not isinstance(chain, str)
    roomy = replace(
        config,
        scratch_mb=max(config.scratch_mb, _PCH_SCRATCH_MB),
        file_size_mb=max(config.file_size_mb, _PCH_SCRATCH_MB),
        memory_mb=max(config.memory_mb, 1024),
        address_space_mb=max(config.address_space_mb or 0, config.memory_mb, 4 * _PCH_MEMORY_MB),
    )
    argv = [plan.compiler, *plan.flags, "-x", "c++-header", "stdc++.h", "-o", "stdc++.h.gch"]
    with Sandbox(roomy) as box:
        built = box.build(
            {"stdc++.h": f"#include <{PCH_HEADER}>\n".encode()},
            argv,
            keep=["stdc++.h.gch"],
            timeout_s=_MAKE_TIMEOUT_S,
            env=chain.env,
            limits=ExecLimits(data_mb=_PCH_MEMORY_MB),
        )
        if not built.ok:
            said = (built.build.stderr or built.build.error).strip()[-300:]
            raise SandboxError(f"the compiler could not make it: {said}")
        ((_, _, data),) = built.files()
    work = tempfile.mkdtemp(prefix=f".{plan.name}.tmp", dir=plan.root)
    try:
        os.chmod(work, 0o755)  # noqa: S103 - the sandbox's uid reads it; nothing secret
        os.mkdir(os.path.join(work, "bits"), 0o755)
        path = os.path.join(work, _GCH)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.rename(work, plan.directory)
        except OSError as exc:  # someone else's is in place: theirs is as good
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def with_pch(language: Language, argv: list[str] | None, config: SandboxConfig) -> list[str]:
    """A build command with the precompiled header's directory first on the include path,
    when ``language`` is C++ and a ready header is visible in sandboxes of ``config``; the
    command as it is otherwise. Never makes the header (``ensure_pch`` does)."""
    if language.name != "cpp" or not argv:
        return list(argv or [])
    plan = _current_plan()
    if isinstance(plan, str) or plan.root not in config.read_only_dirs or not plan.ready:
        return list(argv)
    return [argv[0], "-I", plan.directory, *argv[1:]]


def pch_status() -> tuple[bool, str]:
    """(whether C++ builds use a precompiled header here, what was found), for ``doctor``;
    never makes it."""
    plan = _current_plan()
    if isinstance(plan, str):
        return False, f"none: {plan}"
    if plan.ready:
        return True, f"ready: {os.path.join(plan.directory, _GCH)}"
    failed = _failed.get(plan.name)
    if failed is not None:
        return False, f"could not be made: {failed[1]}"
    if not _writable(plan.root):
        return False, f"none: {plan.root} cannot be created or written"
    return False, f"not made yet: made in {plan.root} before the first C++ program's build"


def _writable(path: str) -> bool:
    """Whether ``path`` is, or could be made, a directory this process writes in."""
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)
