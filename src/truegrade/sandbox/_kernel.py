"""The kernel interfaces the sandbox's processes use, through ``ctypes``: namespaces, mounts,
capabilities, Landlock, seccomp filters, PIDs, and moving bytes without holding them.

Run inside the sandbox with the codec and the zygote (one namespace, standard library only), and
imported by the harness for the probes it shares (``landlock_abi``, ``namespaces``).

What it must never do: run anything of a program, or hold a program's bytes in the memory of a
process that outlives the task (``splice_exact`` moves them in the kernel).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import time
from typing import Any

__all__ = [
    "Filter",
    "PidChooser",
    "Reaper",
    "children_cpu",
    "drop_capabilities",
    "landlock_abi",
    "landlock_ruleset",
    "mount_tmpfs",
    "namespaces",
    "process_cpu",
    "splice_exact",
    "unmount",
]

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_SECCOMP_MODE_FILTER = 2
_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MNT_DETACH = 2
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 1
_MOUNT_ATTR_NOSUID = 2
CAP_SYS_ADMIN = 21
_CAPS_VERSION_3 = 0x20080522
_P_ALL, _P_PID = 0, 1
_WEXITED, _WNOHANG = 4, 1
CLD_EXITED, CLD_KILLED, CLD_DUMPED = 1, 2, 3

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def check(result: int, what: str) -> int:
    """``result`` of a C call, or the ``OSError`` its ``errno`` names."""
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def prctl(option: int, arg: Any = 0) -> None:
    check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def dumpable() -> int:
    return int(_libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))


# -- seccomp --------------------------------------------------------------------------------------


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A compiled BPF filter (built outside by libseccomp), ready to load with one ``prctl``.

    Built once in the zygote, so a forked child loads it without allocating anything: every page
    a child touches after the fork is a copy, and the per-task cost is mostly those copies.
    """

    def __init__(self, program: bytes) -> None:
        self.buffer = ctypes.create_string_buffer(program, len(program))
        self.prog = _SockFprog(len(program) // 8, ctypes.cast(self.buffer, ctypes.c_void_p))
        self.ref = ctypes.byref(self.prog)

    def install(self) -> None:
        """Load the filter into this process, for good (no-new-privileges is already set)."""
        if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.ref, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"installing the seccomp filter: {os.strerror(code)}")


# -- Landlock -------------------------------------------------------------------------------------


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or it is disabled)."""
    version = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), 1)
    return max(0, int(version))


_LL_EXECUTE, _LL_WRITE_FILE, _LL_READ_FILE, _LL_READ_DIR = 1, 2, 4, 8
_LL_REFER, _LL_TRUNCATE, _LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_LL_READ = _LL_EXECUTE | _LL_READ_FILE | _LL_READ_DIR


def _landlock_fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: the thirteen original rights
    if abi >= 2:
        rights |= _LL_REFER
    if abi >= 3:
        rights |= _LL_TRUNCATE
    if abi >= 5:
        rights |= _LL_IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_ruleset(read: list[str], write: list[str], files: dict[str, str]) -> tuple[int, int]:
    """A Landlock ruleset, not yet enforced: read and execute only under ``read``, write only
    under ``write`` (and the single ``files``), no TCP bind or connect. Returns ``(descriptor,
    ABI)``, or ``(-1, 0)`` where the kernel has no Landlock.

    The zygote builds it once and never restricts itself with it (it must mount and unmount
    the scratch directory, which Landlock forbids to a process it confines); every child that
    runs a program enforces it on itself (``landlock_enforce``) before any of the program runs.
    A rule on a directory holds for what is mounted over it later: Landlock walks up from a
    file through the mount point, so the fresh scratch of each task is covered by the rule on
    the directory it is mounted on.
    """
    abi = landlock_abi()
    if abi < 1:
        return -1, 0
    fs_rights = _landlock_fs_rights(abi)
    net_rights = 3 if abi >= 4 else 0  # bind and connect TCP, with no port allowed
    attr = _RulesetAttr(fs_rights, net_rights, 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = check(
        _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0),
        "landlock_create_ruleset",
    )
    file_rights = _LL_EXECUTE | _LL_WRITE_FILE | _LL_READ_FILE
    file_rights |= fs_rights & (_LL_TRUNCATE | _LL_IOCTL_DEV)
    try:
        rules = [(p, _LL_READ) for p in read] + [(p, fs_rights) for p in write]
        for path, mode in files.items():
            rules.append((path, (file_rights if "w" in mode else _LL_READ_FILE) & fs_rights))
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent on this system: nothing to allow
            try:
                if not os.path.isdir(path):
                    rights &= file_rights
                rule = _PathBeneath(rights, fd)
                check(
                    _libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset, abi


def landlock_enforce(ruleset: int) -> None:
    """Confine this process and its descendants by ``ruleset`` (no-new-privileges is set)."""
    check(_libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")


# -- capabilities ---------------------------------------------------------------------------------

_CAP_HEADER = (ctypes.c_uint32 * 2)(_CAPS_VERSION_3, 0)
_NO_CAPS = (ctypes.c_uint32 * 6)()


def drop_capabilities(keep: int | None = None) -> None:
    """Empty every capability set but ``keep`` (one capability, effective and permitted), for
    good: the bounding set entirely, so no exec can gain any, and a child that empties its
    effective and permitted sets has none left to regain."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    data = (ctypes.c_uint32 * 6)()
    if keep is not None:
        word, bit = divmod(keep, 32)
        data[word * 3] = data[word * 3 + 1] = 1 << bit  # effective, permitted
    check(_libc.capset(_CAP_HEADER, data), "capset")


def drop_all_capabilities() -> None:
    """A child of the zygote gives up the one capability it inherited, before anything else:
    one system call on buffers built before the fork."""
    check(_libc.capset(_CAP_HEADER, _NO_CAPS), "capset")


# -- namespaces and mounts ------------------------------------------------------------------------


def unshare(flags: int) -> None:
    check(_libc.unshare(flags), "unshare")


def write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def map_ids(inner_uid: int, outer_uid: int, inner_gid: int, outer_gid: int) -> None:
    """After ``unshare(CLONE_NEWUSER)``: one uid and one gid, mapped."""
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"{inner_uid} {outer_uid} 1")
    write_file("/proc/self/gid_map", f"{inner_gid} {outer_gid} 1")


def become_init_of_new_namespaces(flags: int) -> None:
    """Unshare ``flags`` (a PID namespace among them) and continue as the first process of the
    new PID namespace: the calling process stays outside, waits for it, and leaves with its
    status (never returning). The new process is killed when its parent dies."""
    unshare(flags)
    child = os.fork()
    if child:
        while True:
            try:
                _, status = os.waitpid(child, 0)
            except InterruptedError:
                continue
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def make_mounts_private() -> None:
    """Mounts made from here on stay in this mount namespace."""
    check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "making / private")


def mount_tmpfs(path: str, size_mb: int, *, read_only: bool = False) -> None:
    """A fresh tmpfs on ``path``: empty, its own inode numbers, nothing of any earlier one."""
    flags = _MS_NOSUID | _MS_NODEV | ((_MS_RDONLY | _MS_NOEXEC) if read_only else 0)
    options = f"size={size_mb}m,mode={'555' if read_only else '1777'}".encode()
    check(
        _libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, options),
        f"mounting a tmpfs on {path}",
    )


def mount_proc() -> None:
    check(
        _libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None),
        "mounting /proc",
    )


def unmount(path: str) -> None:
    """Take the mount on ``path`` away (detached when something still holds it)."""
    if _libc.umount2(path.encode(), 0) != 0:
        check(_libc.umount2(path.encode(), _MNT_DETACH), f"unmounting {path}")


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def read_only_everywhere() -> None:
    """Make every mount this namespace inherited from the host read-only and ``nosuid``, at
    once (``mount_setattr`` with ``AT_RECURSIVE``, Linux 5.12, older than any Landlock).

    Landlock refuses reads and writes but not a change of a file's mode, owner or times, and
    the sandbox's uid is the harness's user on the host: without this a task could ``chmod``
    whatever that user owns (all of ``/usr`` when it is root; the precompiled headers every
    later build reads). Bubblewrap's binds are read-only for the same reason. Only mounts made
    after this one (the scratch tmpfs, ``/proc``, the masks) are not: the masks are read-only
    mounts of their own."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, 0, 0, 0)
    check(
        _libc.syscall(
            _SYS_MOUNT_SETATTR,
            ctypes.c_int(_AT_FDCWD),
            ctypes.c_char_p(b"/"),
            ctypes.c_uint(_AT_RECURSIVE),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
        ),
        "making the host's mounts read-only",
    )


def sethostname(name: bytes) -> None:
    _libc.sethostname(name, len(name))


def namespaces() -> dict[str, str]:
    """This process's namespace identities (``user:[4026531837]``...), to compare with another's."""
    out = {}
    for name in ("user", "pid", "net", "mnt", "ipc", "uts"):
        try:
            out[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            out[name] = ""
    return out


# -- PIDs, waiting, CPU time ----------------------------------------------------------------------


class PidChooser:
    """Gives the next process this one forks a PID drawn at random, so a task's PID says nothing
    about what ran before it (how many processes or threads an earlier task started, whether a
    pass was replayed). Writing ``ns_last_pid`` needs ``CAP_SYS_ADMIN`` in the user namespace
    that owns the PID namespace; without it (``ready`` false) PIDs follow the kernel's order.

    The file is opened once, before anything is confined; a write applies to the PID namespace
    of the process that writes, so one descriptor serves the zygote and every supervisor's own
    namespace alike.
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self.fd = -1
        self.top = 32768
        self.ready = False
        if not enabled:
            return
        try:
            with open("/proc/sys/kernel/pid_max") as handle:
                self.top = int(handle.read())
            self.fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            self.fd = -1
        self.ready = self.fd >= 0 and self.choose()

    def choose(self) -> bool:
        """Make the next fork's PID a fresh random one; False when the kernel refused."""
        if self.fd < 0:
            return False
        # the PID after the drawn one is the next fork's; a few thousand are left above it
        # for the threads and children of the task. The operating system's random source, not
        # the random module: that one reseeds itself in every child it is imported in
        span = max(1, self.top - 8192 - 300)
        pick = 300 + int.from_bytes(os.urandom(4), "little") % span
        try:
            os.pwrite(self.fd, b"%d" % pick, 0)
        except OSError:
            return False
        return True


class _Siginfo(ctypes.Structure):
    # the fields of siginfo_t a child's end fills (x86-64 and aarch64 layouts agree)
    _fields_ = [
        ("signo", ctypes.c_int),
        ("errno", ctypes.c_int),
        ("code", ctypes.c_int),
        ("pad", ctypes.c_int),
        ("pid", ctypes.c_int),
        ("uid", ctypes.c_uint),
        ("status", ctypes.c_int),
        ("rest", ctypes.c_char * 100),
    ]


class Reaper:
    """Collects dead children into one buffer allocated at start-up (``waitid``), so how a
    child died never becomes an object of this process: the zygote's memory, which every later
    task inherits, holds no trace of what earlier tasks did. ``report`` is the buffer's bytes
    the harness reads (``code`` and ``status``), written straight from it."""

    def __init__(self) -> None:
        self.info = _Siginfo()
        self.ref = ctypes.byref(self.info)
        raw = (ctypes.c_char * ctypes.sizeof(_Siginfo)).from_address(ctypes.addressof(self.info))
        self.view = memoryview(raw).cast("B")
        self.report = self.view[8:28]  # code, pad, pid, uid, status

    def wait(self, pid: int) -> bool:
        """Wait for ``pid`` to end; True when it did (the buffer then says how)."""
        ctypes.memset(self.ref, 0, ctypes.sizeof(_Siginfo))
        while _libc.waitid(_P_PID, pid, self.ref, _WEXITED) != 0:
            if ctypes.get_errno() != errno.EINTR:
                return False
        return True

    def wait_any(self) -> bool:
        """Wait for any child to end; False when there is none left."""
        ctypes.memset(self.ref, 0, ctypes.sizeof(_Siginfo))
        while _libc.waitid(_P_ALL, 0, self.ref, _WEXITED) != 0:
            if ctypes.get_errno() != errno.EINTR:
                return False
        return True

    def reap(self) -> None:
        """Collect every child that has ended, without waiting."""
        while True:
            ctypes.memset(self.ref, 0, ctypes.sizeof(_Siginfo))
            if _libc.waitid(_P_ALL, 0, self.ref, _WEXITED | _WNOHANG) != 0:
                break
            if self.info.pid == 0:
                break
        self.clear()

    def clear(self) -> None:
        ctypes.memset(self.ref, 0, ctypes.sizeof(_Siginfo))


def process_cpu(pid: int) -> float | None:
    """A live process's CPU time (all its threads'), by its CPU-time clock, which needs no
    ``/proc``; None when ``pid`` is no process (or a thread that does not lead one)."""
    try:
        return time.clock_gettime((~pid << 3) | 2)  # CPUCLOCK_SCHED of a process's clock
    except OSError:
        return None


def children_cpu() -> float:
    """CPU time of every process this one has reaped, and of what they reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# -- moving bytes ---------------------------------------------------------------------------------


def splice_exact(src: int, dst: int, count: int, offset: int | None = None) -> None:
    """Move ``count`` bytes from ``src`` to ``dst`` inside the kernel (one of them a pipe):
    they never enter this process's memory. ``offset`` reads ``src`` (a file) from there.
    ``EOFError`` when ``src`` ends first."""
    while count > 0:
        if offset is None:
            moved = os.splice(src, dst, min(count, 1 << 20))
        else:
            moved = os.splice(src, dst, min(count, 1 << 20), offset_src=offset)
            offset += moved
        if moved == 0:
            raise EOFError
        count -= moved


def copy_file(src: int, dst: int, count: int) -> None:
    """Copy ``count`` bytes of the file ``src`` (from its start) into ``dst``, in the kernel."""
    offset = 0
    while offset < count:
        moved = os.copy_file_range(src, dst, count - offset, offset_src=offset)
        if moved == 0:
            raise EOFError
        offset += moved
