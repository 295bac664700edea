"""The seccomp filters every sandboxed task runs under, compiled outside the sandbox.

libseccomp (through ``pyseccomp``) compiles the rules to BPF programs here, in the harness; the
zygote inside the sandbox only loads the bytes with ``prctl``, so it needs neither library.

* ``base``, loaded once by the zygote (so every process of the sandbox inherits it): kills the
  process on the calls only an escape needs (``ptrace``, reading another process's memory,
  mounting, new namespaces, kernel modules, ``bpf``, ``io_uring``...), and refuses System V and
  POSIX IPC, which would outlive a task and carry state to the next one.
* ``program``, added by each whole-program Python run: kills the process on a socket of any
  family but Unix.
* ``exec``, added by each executed program (a compiler, a binary, a JVM, node): refuses a
  socket of any family but Unix with an error instead of killing, because runtimes probe for
  one as they start (a JVM's NIO opens an IPv6 socket to learn whether IPv6 exists) and a
  correct program must survive that; with no network in the sandbox, the socket is refused all
  the same.
* ``function``, added by each function-call session: no new processes, no program execution,
  no sockets at all, and no creating or writing files (so nothing a session does outlives it,
  and the next session can start without waiting for the last one to be torn down).

Everything not listed is allowed: the namespaces, Landlock and resource limits do the confining;
these filters take away the kernel surface an escape would start from.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from typing import Any

__all__ = ["SeccompUnavailable", "build_filters"]

_KILL_ALWAYS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "syslog",
    "fanotify_init",
    "personality",
)
_REFUSE_IPC = (
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)
_NEW_PROGRAMS = ("fork", "vfork", "execve", "execveat")
_CLONE_THREAD = 0x00010000
_NEW_FILES = (
    "creat",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "rename",
    "renameat",
    "renameat2",
    "truncate",
)


class SeccompUnavailable(RuntimeError):
    """``pyseccomp`` or the libseccomp shared library it loads is missing."""


def _seccomp() -> Any:
    try:
        import pyseccomp
    except Exception as exc:  # ImportError, or AttributeError when libseccomp.so is absent
        raise SeccompUnavailable(
            f"pyseccomp cannot load libseccomp ({type(exc).__name__}: {exc}); "
            "install it with 'pip install pyseccomp' and 'apt-get install libseccomp2'"
        ) from None
    return pyseccomp


def _add(flt: Any, action: int, name: str, *args: Any) -> None:
    try:
        flt.add_rule(action, name, *args)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EDOM, errno.EFAULT):
            raise  # a call this architecture does not have is simply not filtered


def _compile(kind: str) -> bytes:
    sc = _seccomp()
    flt = sc.SyscallFilter(sc.ALLOW)
    kill = sc.KILL_PROCESS
    refuse = sc.ERRNO(errno.EACCES)
    if kind == "base":
        for name in _KILL_ALWAYS:
            _add(flt, kill, name)
        for name in _REFUSE_IPC:
            _add(flt, sc.ERRNO(errno.EPERM), name)
    elif kind in ("program", "exec"):
        action = kill if kind == "program" else sc.ERRNO(errno.EACCES)
        for name in ("socket", "socketpair"):
            _add(flt, action, name, sc.Arg(0, sc.NE, socket.AF_UNIX))
    else:
        for name in ("socket", "socketpair", *_NEW_PROGRAMS):
            _add(flt, kill, name)
        # a new thread is fine, a new process is not; clone3 hides its flags in memory, so it is
        # refused and the C library falls back to clone, whose flags the filter can read
        _add(flt, kill, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
        _add(flt, sc.ERRNO(errno.ENOSYS), "clone3")
        _add(flt, sc.ERRNO(errno.ENOSYS), "openat2")  # flags in memory again: falls back to openat
        for name, flags_arg in (("open", 1), ("openat", 2)):
            for mask, value in (
                (os.O_ACCMODE, os.O_WRONLY),
                (os.O_ACCMODE, os.O_RDWR),
                (os.O_CREAT, os.O_CREAT),
                (os.O_TRUNC, os.O_TRUNC),
            ):
                _add(flt, refuse, name, sc.Arg(flags_arg, sc.MASKED_EQ, mask, value))
        for name in _NEW_FILES:
            _add(flt, refuse, name)
    with tempfile.TemporaryFile() as handle:
        flt.export_bpf(handle)
        handle.seek(0)
        return handle.read()


_cache: dict[str, bytes] = {}


def build_filters() -> dict[str, bytes]:
    """The compiled filters, ``{"base": bpf, "program": bpf, "exec": bpf, "function": bpf}``
    (built once per process).

    Raises:
        SeccompUnavailable: libseccomp cannot be loaded here.
    """
    if not _cache:
        _cache.update({kind: _compile(kind) for kind in ("base", "program", "exec", "function")})
    return dict(_cache)
