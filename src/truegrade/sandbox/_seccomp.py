"""The seccomp filters the sandbox's processes run under, compiled outside the sandbox.

libseccomp (through ``pyseccomp``) compiles the rules to BPF programs here, in the harness; the
processes inside the sandbox only load the bytes with ``prctl``, so they need neither library.

* ``root``, loaded once by the zygote's root (so every process of the sandbox inherits it):
  kills the process on the calls only an escape needs (``ptrace``, reading another process's
  memory, new namespaces but for the ones a supervisor makes, kernel modules, ``bpf``,
  ``io_uring``...), and refuses System V and POSIX IPC, which would outlive a task and carry
  state to the next one.
* ``program``, added by each whole-program Python run: the root's rules and ``mount`` and
  ``unshare`` besides, and kills on a socket of any family but Unix.
* ``exec``, added by each executed program (a compiler, a binary, a JVM, node): the same, but a
  socket of any family but Unix is refused with an error instead of killing, because runtimes
  probe for one as they start (a JVM's NIO opens an IPv6 socket to learn whether IPv6 exists)
  and a correct program must survive that; with no network in the sandbox, the socket is
  refused all the same.
* ``function``, added by each call session: an allow-list. A function computes: it reads files
  (imports), maps memory, starts threads, reads clocks, and writes its answers; every other
  system call fails with ``ENOSYS`` (as on a kernel without it), and those an escape or a
  second process needs kill it. So a session cannot create a process, a file, a pipe or a
  socket, signal anyone, or peek at the calls queued for it (``tee``, ``splice``, ``FIONREAD``
  are not on the list): nothing it does outlives it or reaches the next session.

Both ``program`` and ``exec`` refuse ``pidfd_open``: a pidfd's inode number counts every
process the machine has started, which a task could otherwise read and move.
"""

from __future__ import annotations

import contextlib
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
_SUPERVISOR_NEEDS = frozenset({"mount", "umount2", "unshare"})
"""What the root lets through for the supervisors it forks (a fresh PID and mount namespace per
program, a fresh tmpfs per task); every child that runs a program kills on them again."""
_FUNCTION_ALLOWED = (
    # reading files (imports) and descriptors it holds
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "close", "lseek",
    "fstat", "newfstatat", "stat", "lstat", "statx", "fstatfs", "statfs", "getdents64",
    "getdents", "readlink", "readlinkat", "getcwd", "access", "faccessat", "faccessat2",
    "dup", "dup2", "dup3", "poll", "ppoll", "select", "pselect6",
    # memory
    "mmap", "munmap", "mremap", "mprotect", "madvise", "brk",
    # threads
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address",
    "sched_yield", "sched_getaffinity", "getcpu", "arch_prctl",
    # identity, clocks, limits, randomness
    "gettid", "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid",
    "getresgid", "getgroups", "getpgrp", "getpgid", "getsid", "getpriority", "uname",
    "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "getrandom", "prlimit64", "getrlimit", "getrusage", "times",
    # signals of its own, and the end
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
    "exit", "exit_group",
)  # fmt: skip
_IOCTL_ALLOWED = (0x5401, 0x5413)  # TCGETS (isatty), TIOCGWINSZ: both only describe a terminal
_FCNTL_ALLOWED = (0, 1, 2, 3, 1030)  # F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_DUPFD_CLOEXEC
_OPEN_WRITES = os.O_ACCMODE | os.O_CREAT | os.O_TRUNC | 0o20000000  # __O_TMPFILE
_CLONE_THREAD = 0x00010000


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


def _as_tree(sc: Any, flt: Any) -> None:
    """Lay the filter out as a binary tree of system call numbers (libseccomp's optimisation
    level 2): the same rules, fewer instructions run per call. It matters most when a filter is
    loaded: the kernel then runs the filter once per system call number to cache the calls it
    always allows, with interrupts off, and on the default linear layout that was a third of
    what starting a call session cost. An older libseccomp without the attribute keeps the
    linear layout."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)


def _compile(kind: str) -> bytes:
    sc = _seccomp()
    kill = sc.KILL_PROCESS
    if kind == "function":
        flt = _function_filter(sc)
    else:
        flt = sc.SyscallFilter(sc.ALLOW)
        for name in _KILL_ALWAYS:
            if kind != "root" or name not in _SUPERVISOR_NEEDS:
                _add(flt, kill, name)
        for name in _REFUSE_IPC:
            _add(flt, sc.ERRNO(errno.EPERM), name)
        if kind in ("program", "exec"):
            action = kill if kind == "program" else sc.ERRNO(errno.EACCES)
            for name in ("socket", "socketpair"):
                _add(flt, action, name, sc.Arg(0, sc.NE, socket.AF_UNIX))
            _add(flt, sc.ERRNO(errno.EPERM), "pidfd_open")
    _as_tree(sc, flt)
    with tempfile.TemporaryFile() as handle:
        flt.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def _function_filter(sc: Any) -> Any:
    """The call sessions' allow-list: ``ENOSYS`` by default, kills on escapes and on new
    processes, programs and sockets, and the few calls with arguments that matter checked."""
    flt = sc.SyscallFilter(sc.ERRNO(errno.ENOSYS))
    allow, kill = sc.ALLOW, sc.KILL_PROCESS
    for name in (*_KILL_ALWAYS, "socket", "socketpair", *_NEW_PROGRAMS):
        _add(flt, kill, name)
    for name in _FUNCTION_ALLOWED:
        _add(flt, allow, name)
    # a new thread is fine, a new process is not; clone3 hides its flags in memory, so it is
    # refused and the C library falls back to clone, whose flags the filter can read
    _add(flt, allow, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, _CLONE_THREAD))
    _add(flt, kill, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    # opened for reading only: no file is created, written or truncated
    _add(flt, allow, "openat", sc.Arg(2, sc.MASKED_EQ, _OPEN_WRITES, 0))
    _add(flt, allow, "open", sc.Arg(1, sc.MASKED_EQ, _OPEN_WRITES, 0))
    for request in _IOCTL_ALLOWED:
        _add(flt, allow, "ioctl", sc.Arg(1, sc.EQ, request))
    for command in _FCNTL_ALLOWED:
        _add(flt, allow, "fcntl", sc.Arg(1, sc.EQ, command))
    return flt


_cache: dict[str, bytes] = {}


def build_filters() -> dict[str, bytes]:
    """The compiled filters, ``{"root": bpf, "program": bpf, "exec": bpf, "function": bpf}``
    (built once per process).

    Raises:
        SeccompUnavailable: libseccomp cannot be loaded here.
    """
    if not _cache:
        _cache.update({kind: _compile(kind) for kind in ("root", "program", "exec", "function")})
    return dict(_cache)
