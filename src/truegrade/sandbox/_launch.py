"""How a sandbox is started: the bubblewrap command line, the native fallback, the pids cgroup.

Three isolation modes, strongest first:

* ``bwrap``: bubblewrap with every namespace unshared (user, PID, network, mount, IPC, UTS,
  cgroup), a non-root uid inside, every capability dropped (bwrap started by root otherwise keeps
  them all), a read-only system, a private tmpfs scratch directory, a fresh ``/proc`` and ``/dev``,
  ``--die-with-parent``, ``--new-session`` and the zygote as PID 1;
* ``native``: the zygote builds the same namespaces itself (``unshare``) and confines its
  filesystem and TCP access with Landlock;
* ``none``: no isolation at all; only with an explicit unsafe opt-in.

A process-count limit must bind root too (``RLIMIT_NPROC`` does nothing for uid 0, and a user
namespace started by root still runs as host uid 0), so when the harness runs as root and a pids
cgroup is writable, each sandbox gets its own cgroup with ``pids.max``; the launch goes through a
one-line shell that joins it before exec'ing the sandbox, so no process of the sandbox starts
outside it.

What it must never do: put anything from the project or the host's home into the sandbox beyond
the interpreter and the system libraries, or start a sandbox whose mode it has not reported.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import re
import shutil
import site
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MemoryCgroup",
    "PidsCgroup",
    "bwrap_command",
    "bwrap_path",
    "interpreter",
    "package_dirs",
    "system_dirs",
]

SCRATCH = "/tmp"  # noqa: S108 - a fresh private tmpfs inside the sandbox, not the host's /tmp
"""Where the sandbox's private scratch directory is mounted, inside the sandbox."""

_DEVICES = {
    "/dev/null": "rw",
    "/dev/zero": "r",
    "/dev/full": "rw",
    "/dev/random": "r",
    "/dev/urandom": "r",
}
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/ssl/openssl.cnf")
"""Host files a sandboxed process may read: public configuration, no secrets. Node reads
OpenSSL's configuration at start and stops when it is there but unreadable (the native fallback
shows the host's ``/etc`` and Landlock refuses it)."""


def interpreter() -> tuple[str, str]:
    """``(executable, prefix)`` of the base interpreter (not a virtualenv's wrapper).

    The sandbox runs it with ``-I -S``: the standard library only, no site-packages, no
    environment variables, nothing from the current directory.
    """
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base), os.path.realpath(sys.base_prefix)


def system_dirs() -> list[tuple[str, str | None]]:
    """The top-level system directories as ``(path, symlink target or None)``."""
    out: list[tuple[str, str | None]] = [("/usr", None)]
    for path in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(path):
            out.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            out.append((path, None))
    return out


def bwrap_path() -> str | None:
    """The bubblewrap executable, or None."""
    return shutil.which("bwrap")


def _outside_usr(path: str) -> bool:
    return not (path == "/usr" or path.startswith("/usr/"))


def read_paths(executable: str, prefix: str, extra_dirs: tuple[str, ...] = ()) -> list[str]:
    """What a sandboxed process may read (and execute): the system, the interpreter and the
    extra read-only directories (a toolchain's).

    Not ``/proc``: nothing needs it, and another process's entry there (its name, its memory
    use) would be a channel between tasks that must not talk.
    """
    paths = ["/usr"]
    paths += [p for p, target in system_dirs() if target is None and p != "/usr"]
    for extra in (prefix, os.path.dirname(executable), *extra_dirs):
        if _outside_usr(extra) and extra not in paths:
            paths.append(extra)
    return paths


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def package_dirs(visible: list[str], shown: tuple[str, ...] = ()) -> list[str]:
    """The directories of installed third-party Python packages that lie among the
    ``visible`` ones: the sandbox hides each (an empty read-only tmpfs over it), so a program
    that puts one on ``sys.path`` finds nothing to import, and the standard library is all
    there is, as ``python -I -S`` promises.

    They are the site directories of the base interpreter (``site.getsitepackages`` for its
    prefixes, computed here, outside) and of this environment, every ``site-packages`` and
    ``dist-packages`` of a Python under ``/usr`` or ``/usr/local`` (Debian's
    ``/usr/lib/python3/dist-packages`` among them), and the wheels the standard library and
    the system keep for installing pip (``ensurepip/_bundled``, ``/usr/share/python-wheels``),
    which import from ``sys.path`` as they are. Real paths only, a directory inside another
    one listed is left out (the outer mask hides it), and so is one holding a directory the
    caller asked to show (``shown``).
    """
    prefixes = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix}
    found = set(site.getsitepackages(sorted(prefixes)))
    for root in sorted({*prefixes, "/usr", "/usr/local"}):
        for kind in ("site-packages", "dist-packages"):
            found.update(glob.glob(os.path.join(root, "lib*", "python*", kind)))
        found.update(glob.glob(os.path.join(root, "lib*", "python*", "ensurepip", "_bundled")))
    found.add("/usr/share/python-wheels")
    real = {os.path.realpath(p) for p in found if os.path.isdir(p)}
    real = {p for p in real if any(_under(p, v) for v in visible)}
    real = {p for p in real if not any(_under(os.path.realpath(d), p) for d in shown)}
    return sorted(p for p in real if not any(q != p and _under(p, q) for q in real))


def file_rules() -> dict[str, str]:
    """Single files a sandboxed process may use, with ``r`` or ``rw``."""
    return {**_DEVICES, **dict.fromkeys(_ETC_FILES, "r")}


def bwrap_command(
    bwrap: str,
    *,
    uid: int,
    gid: int,
    scratch_mb: int,
    executable: str,
    prefix: str,
    read_only_dirs: tuple[str, ...] = (),
    hidden_dirs: tuple[str, ...] = (),
) -> list[str]:
    """The bubblewrap command line that runs ``executable`` in a fresh, empty-handed sandbox.

    ``hidden_dirs`` (``package_dirs``) each get an empty read-only tmpfs over them, and
    ``/dev`` is read-only (its devices still work): without Landlock its ``shm`` directory
    would be a place a task could leave a file for the next one.
    """
    cmd = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(uid),
        "--gid",
        str(gid),
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--hostname",
        "sandbox",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "HOME",
        SCRATCH,
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for path, target in system_dirs():
        if path == "/usr":
            continue
        cmd += ["--symlink", target, path] if target is not None else ["--ro-bind", path, path]
    for path in _ETC_FILES:
        cmd += ["--ro-bind-try", path, path]
    for extra in (prefix, os.path.dirname(executable), *read_only_dirs):
        if _outside_usr(extra) and not any(
            extra == p or extra.startswith(p + "/") for p, _ in system_dirs()
        ):
            bind = (
                "--ro-bind" if extra in (prefix, os.path.dirname(executable)) else "--ro-bind-try"
            )
            cmd += [bind, extra, extra]
    for path in hidden_dirs:
        cmd += ["--tmpfs", path, "--remount-ro", path]
    cmd += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--size",
        str(scratch_mb * 1024 * 1024),
        "--tmpfs",
        SCRATCH,
        "--remount-ro",
        "/",
        "--chdir",
        SCRATCH,
        "--",
    ]
    return cmd


# -- the pids cgroup -----------------------------------------------------------------------------

_counter = itertools.count()
_STALE = re.compile(r"sb-(\d+)-\d+")
_STALE_SCRATCH = re.compile(r"truegrade-unsandboxed-(\d+)-\w+")


def _hierarchy(controller: str) -> tuple[Path, int] | None:
    """``(mount point, cgroup version)`` of a hierarchy with ``controller``, or None."""
    try:
        with open("/proc/self/mounts") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return None
    for fields in mounts:
        if len(fields) < 4:
            continue
        point, fstype, options = fields[1], fields[2], fields[3].split(",")
        if fstype == "cgroup" and controller in options:
            return Path(point), 1
    for fields in mounts:
        if len(fields) >= 3 and fields[2] == "cgroup2":
            with contextlib.suppress(OSError):
                if controller in (Path(fields[1]) / "cgroup.controllers").read_text().split():
                    return Path(fields[1]), 2
    return None


def _new_cgroup(controller: str) -> tuple[Path, int] | None:
    """A new, empty cgroup of ``controller`` under ``<hierarchy>/truegrade`` (the cgroups of
    harnesses that died without cleaning up removed first), or None where that is not
    possible (not root, no such controller, a read-only cgroupfs)."""
    if os.geteuid() != 0:
        return None
    found = _hierarchy(controller)
    if found is None:
        return None
    root, version = found
    parent = root / "truegrade"
    try:
        parent.mkdir(exist_ok=True)
        if version == 2:
            for level in (root, parent):
                with contextlib.suppress(OSError):
                    (level / "cgroup.subtree_control").write_text(f"+{controller}")
        _sweep(parent)
        path = parent / f"sb-{os.getpid()}-{next(_counter)}"
        path.mkdir()
    except OSError:
        return None
    return path, version


def _sweep(parent: Path) -> None:
    """Remove the empty cgroups of harnesses that died without cleaning up."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _STALE.fullmatch(entry.name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class PidsCgroup:
    """A cgroup of its own for one sandbox, capping how many processes it may have at once."""

    path: Path
    max_pids: int

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """A new cgroup under ``<pids hierarchy>/truegrade``, or None where that is not possible
        (not root, no pids controller, a read-only cgroupfs)."""
        made = _new_cgroup("pids")
        if made is None:
            return None
        path, _ = made
        try:
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path, max_pids)

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started from inside this cgroup (the shell joins it, then becomes ``cmd``)."""
        join = 'echo $$ > "$1" || exit 125; shift; exec "$@"'
        return ["/bin/sh", "-c", join, "sh", str(self.path / "cgroup.procs"), *cmd]

    def holds(self, pid: int) -> bool:
        """Whether ``pid`` really is in this cgroup (checked after start, not assumed)."""
        try:
            text = Path(f"/proc/{pid}/cgroup").read_text()
        except OSError:
            return False
        name = "/" + self.path.name
        return any(line.endswith(name) or name + "/" in line for line in text.splitlines())

    def remove(self) -> None:
        """Delete the cgroup once its processes are gone (best effort)."""
        with contextlib.suppress(OSError):
            self.path.rmdir()


class MemoryCgroup:
    """The memory cgroup of one sandbox's tasks: every process of a whole-program task (a run, a
    build, an execution) joins it before any of the program runs, by writing to ``procs_fd``
    (opened here, on the host, and handed to the sandbox), so the task's memory is counted for
    its whole process tree, shared and anonymous mappings and the files it writes included.
    The zygote and the supervisors stay outside it: when the task runs out, the kernel's
    out-of-memory killer can only pick one of the task's processes.

    The harness sets the limit before each task (``set_limit``) and reads the out-of-memory
    kills after it (``oom_kills``). Call sessions do not join it: they cannot fork, and their
    address-space limit already counts every mapping they make.
    """

    def __init__(self, path: Path, version: int) -> None:
        self.path = path
        self.version = version
        self.limit_mb: int | None = None
        self.procs_fd = os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        if version == 2:
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                with contextlib.suppress(OSError):
                    (path / name).write_text(value)
        else:
            with contextlib.suppress(OSError):
                (path / "memory.swappiness").write_text("0")

    @classmethod
    def create(cls) -> MemoryCgroup | None:
        """A new memory cgroup, or None where that is not possible (not root, no memory
        controller, a read-only cgroupfs)."""
        made = _new_cgroup("memory")
        if made is None:
            return None
        try:
            return cls(*made)
        except OSError:
            with contextlib.suppress(OSError):
                made[0].rmdir()
            return None

    def set_limit(self, mb: int) -> None:
        """The memory the next task may use, all its processes together."""
        if mb == self.limit_mb:
            return
        value = str(mb << 20)
        names = ["memory.max"] if self.version == 2 else ["memory.limit_in_bytes"]
        if self.version == 1 and (self.path / "memory.memsw.limit_in_bytes").exists():
            # memory and swap together may not be less than memory alone: raise that first,
            # lower it last
            both = "memory.memsw.limit_in_bytes"
            raising = self.limit_mb is not None and mb > self.limit_mb
            names = [both, *names] if raising else [*names, both]
        for name in names:
            (self.path / name).write_text(value)
        self.limit_mb = mb

    def oom_kills(self) -> int:
        """How many processes the out-of-memory killer has killed in the cgroup so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self.path / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def remove(self) -> None:
        """Close the handle and delete the cgroup once its processes are gone (best effort)."""
        with contextlib.suppress(OSError):
            os.close(self.procs_fd)
        self.procs_fd = -1
        with contextlib.suppress(OSError):
            self.path.rmdir()


def host_scratch() -> str:
    """A fresh scratch directory on the host, for a run with no isolation (named after this
    process, so that those of processes that died without cleaning up can be removed)."""
    base = Path(tempfile.gettempdir())
    for entry in base.glob("truegrade-unsandboxed-*"):
        match = _STALE_SCRATCH.fullmatch(entry.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"truegrade-unsandboxed-{os.getpid()}-", dir=base)
