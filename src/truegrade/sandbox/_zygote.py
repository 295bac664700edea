"""The process that lives inside the sandbox: a pre-warmed interpreter that forks one fresh child
per task.

This file is run as ``python -I -S -B -c <this source> <config JSON>`` inside bubblewrap (or, as the
native fallback, it builds its own namespaces first). It imports the standard library only, so it
starts in milliseconds and needs nothing from the project inside the sandbox; the harness also
imports it as a module, for the plain-data codec the two sides share.

How a task runs. The harness sends frames over a pipe. ``load`` compiles a program (without
running it) and forks a *call session*: a child that, before any line of the program runs, moves
to its own process group, closes every descriptor but two fresh pipes, sets its CPU limit and
installs the function seccomp filter, then runs the program's module code and answers calls of its
function (arguments in, plain data out) until it is killed. The pipes are handed to the harness
over a Unix socket, so calls do not pass through the zygote; ``session`` ends the current session
and forks the next, ``end`` kills it and reports how it died. ``run`` forks a child that runs the
whole program on some stdin; the zygote feeds it, collects its output (capped) and kills it, and,
as PID 1 of its own PID namespace, every other process in the sandbox, at the end or at the
deadline, then wipes the scratch directory, so nothing a task leaves behind reaches the next one.

What it must never do: run one line of the program in its own process (it only compiles), import
anything outside the standard library, parse what a child sends (it forwards bytes, capped, and the
harness validates them), or trust a child to exit.
"""

from __future__ import annotations

import base64
import builtins
import collections
import contextlib
import ctypes
import errno
import fcntl
import gc
import json
import marshal
import math
import os
import resource
import select
import signal
import stat
import struct
import sys
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = [
    "MAX_COLLISIONS",
    "PLAIN_TYPES",
    "STREAM_BYTES_MAX",
    "PlainDataError",
    "crowded",
    "crowded_within",
    "decode_value",
    "encode_value",
    "frame",
    "landlock_abi",
    "main",
    "namespaces",
    "request_frame",
]

# -- the plain-data codec (shared with the harness) -----------------------------------------------

PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)
"""The only types a value may have to cross the sandbox boundary, matched exactly (``type(x) is
T``): a subclass of ``int`` with an ``__eq__`` that always says yes is not an ``int``. A call
session's answers are the exception (``encode_value(..., held=True)``): a subclass instance is
sent as the plain value it holds."""

#: The deepest nesting a value may have to cross the sandbox boundary (deeper is a
#: ``PlainDataError``).
MAX_DEPTH = 100
_SMALL_INT = 1 << 63
_TAGS = frozenset({"t", "s", "f", "d", "b", "c", "i"})


if TYPE_CHECKING or __name__ != "__main__":
    # imported by the harness: the codec's error is one of truegrade's (from a module that
    # imports nothing); inside the sandbox, where only this file runs, a ValueError alone
    from truegrade._errors import TruegradeError as _Root
else:

    class _Root(Exception):
        """Inside the sandbox, where only this file runs: no tree to join."""


class PlainDataError(_Root, ValueError):
    """A value is not plain builtin data (or an encoding of it is malformed)."""


def _type_name(value: Any) -> str:
    kind = type(value)
    for base in PLAIN_TYPES:
        if issubclass(kind, base):
            return f"a {kind.__qualname__} (a subclass of {base.__name__})"
    return f"a {kind.__module__}.{kind.__qualname__} object"


def _held(value: Any) -> Any:
    """The plain value an instance of a plain type's subclass holds, read by the base type's own
    C methods (never the object's: its ``__iter__``, ``__eq__`` or ``keys`` play no part), or
    ``_NOT_HELD`` for anything else. ``type()`` decides, not ``isinstance``, which a forged
    ``__class__`` can fool."""
    kind = type(value)
    for base, read in _HOLDERS:
        if issubclass(kind, base):
            return read(value)
    return _NOT_HELD


_NOT_HELD = object()
_HOLDERS: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda value: complex(complex.real.__get__(value), complex.imag.__get__(value))),
    (str, str.__str__),
    (bytes, lambda value: bytes.__getitem__(value, slice(None))),
    (list, list.copy),
    (tuple, lambda value: tuple.__getitem__(value, slice(None))),
    (dict, lambda value: dict(dict.items(value))),
    (set, set.copy),
    (frozenset, frozenset.copy),
)


def encode_value(value: Any, depth: int = 0, *, held: bool = False) -> Any:
    """Plain builtin data -> a JSON-able structure; anything else raises ``PlainDataError``.

    JSON keeps ``None``, ``bool``, ``int``, ``float``, ``str`` and ``list``; the rest are one-key
    objects: ``{"t": [...]}`` tuple, ``{"s": [...]}`` set, ``{"f": [...]}`` frozenset,
    ``{"d": [[k, v], ...]}`` dict (keys of any plain type), ``{"b": base64}`` bytes,
    ``{"c": [re, im]}`` complex, ``{"i": hex}`` an int too large for a JSON number reader.

    With ``held`` (what a call session answers), an instance of a subclass of one of these types
    (a ``Counter``, a named tuple, an ``IntEnum``) is sent as the plain value it holds: only that
    data crosses, none of the object's behaviour, so an ``int`` whose ``__eq__`` always says yes
    arrives as the number it stores. The session is the program's own process, so this adds
    nothing a program could not already send; it only stops refusing honest answers.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if -_SMALL_INT < value < _SMALL_INT else {"i": format(value, "x")}
    if kind is float:
        return value
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels")
    if kind is list:
        return [encode_value(item, depth + 1, held=held) for item in value]
    if kind is tuple:
        return {"t": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is dict:
        return {
            "d": [
                [encode_value(k, depth + 1, held=held), encode_value(v, depth + 1, held=held)]
                for k, v in value.items()
            ]
        }
    if kind is set:
        return {"s": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is frozenset:
        return {"f": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if held:
        plain = _held(value)
        if plain is not _NOT_HELD:
            return encode_value(plain, depth + 1, held=True)
    raise PlainDataError(f"{_type_name(value)} is not plain builtin data")


MAX_COLLISIONS = 64
"""Distinct values of one set, frozenset or dict, or of one answer taken whole
(``crowded_within``), that may share a hash. Ints (and floats) hash to their value modulo a
fixed prime, so a program can send thousands of distinct ones with one hash; building a set of
them takes time quadratic in their number (40,000 cost the grader 30 s of CPU). Honest answers
come nowhere near: ints with one hash differ by multiples of 2**61 - 1."""


_CROWD = f"more than {MAX_COLLISIONS} distinct items share one hash"


def crowded(items: Any, limit: int = MAX_COLLISIONS) -> bool:
    """Whether more than ``limit`` distinct items share a hash: the check costs a hash per item
    and at most ``limit`` comparisons per item, where building the set would cost the square of
    a crowd. Equal items (a list's repeats) are not a crowd. Unhashable items raise TypeError,
    as ``set()`` would."""
    buckets: dict[int, list[Any]] = {}
    return any(_joins_crowd(buckets, hash(item), item, limit) for item in items)


def _joins_crowd(buckets: dict[int, list[Any]], key: int, item: Any, limit: int) -> bool:
    """Put ``item`` in its hash's bucket, unless an equal item is there; whether the bucket now
    holds more than ``limit``."""
    bucket = buckets.setdefault(key, [])
    if any(type(known) is type(item) and known == item for known in bucket):
        return False
    bucket.append(item)
    return len(bucket) > limit


def crowded_within(value: Any, limit: int = MAX_COLLISIONS) -> bool:
    """Whether more than ``limit`` distinct values of one hash are anywhere in a plain ``value``:
    its items, and the items of every collection it holds, all taken together, since a check
    may put any of them in one set (``set(answer)``, ``set(sum(rows, []))``), and each list
    also as the tuple a check may make of it (``set(map(tuple, rows))``). The codec refuses a
    crowded set or dict before building it; this also finds a crowd in lists and tuples, which
    cost nothing to build but a check's ``set()`` of them time quadratic in the crowd's size.

    Linear: the hashes are counted first (in C, where every item of a collection hashes), and
    only the values of a hash seen more than ``limit`` times are compared, at most ``limit``
    comparisons each. A tuple's hash reads what it holds, so nesting multiplies the hashing by
    at most ``MAX_DEPTH``. Unhashable values (a list holding a list, a dict) are passed over,
    as no set can hold them."""
    counts: collections.Counter[int] = collections.Counter()
    for parts in _parts(value):
        counts.update(_hashes(parts))
    if not counts or max(counts.values()) <= limit:
        return False
    suspects = {digest for digest, seen in counts.items() if seen > limit}
    buckets: dict[int, list[Any]] = {}
    for parts in _parts(value):
        for item in parts:
            digest = _hash_or_none(item)
            if digest in suspects and _joins_crowd(buckets, digest, item, limit):
                return True
    return False


_NESTED = frozenset({list, tuple, set, frozenset, dict})


def _parts(value: Any) -> Any:
    """The values of each collection in ``value`` (a dict's keys and values), a collection at a
    time, and each list once more as a tuple of its items."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            parts: Any = [*item, *item.values()]
        elif kind in _NESTED:
            parts = item
        else:
            continue
        stack += [part for part in parts if type(part) in _NESTED]
        yield parts
        if kind is list:
            yield (tuple(item),)


def _hashes(parts: Any) -> list[int]:
    try:
        return list(map(hash, parts))
    except TypeError:  # some are unhashable: hash the others one by one
        return [digest for digest in map(_hash_or_none, parts) if digest is not None]


def _hash_or_none(item: Any) -> int | None:
    try:
        return hash(item)
    except TypeError:
        return None


def decode_value(data: Any, depth: int = 0) -> Any:
    """The inverse of ``encode_value``, strict: every value it returns is built here, from JSON,
    so it is of an exact builtin type whatever the sender intended."""
    kind = type(data)
    if data is None or kind is bool or kind is int or kind is float or kind is str:
        return data
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels")
    if kind is list:
        return [decode_value(item, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise PlainDataError("malformed value encoding")
    ((tag, body),) = data.items()
    if tag not in _TAGS:
        raise PlainDataError(f"unknown value tag {tag!r}")
    try:
        if tag == "i":
            if type(body) is not str:
                raise PlainDataError("malformed big integer")
            # hexadecimal reads in linear time; the answer's size is the output cap's to bound
            return int(body, 16)
        if tag == "b":
            if type(body) is not str:
                raise PlainDataError("malformed bytes")
            return base64.b64decode(body.encode("ascii"), validate=True)
        if type(body) is not list:
            raise PlainDataError(f"malformed {tag!r} value")
        if tag == "c":
            if len(body) != 2 or not all(type(x) in (int, float) for x in body):
                raise PlainDataError("malformed complex")
            # an int past any float (``[10**400, 0]``) raises OverflowError: caught below
            return complex(body[0], body[1])
        items = [decode_value(item, depth + 1) for item in body]
        if tag == "t":
            return tuple(items)
        if tag == "d":
            for pair in items:
                if type(pair) is not list or len(pair) != 2:
                    raise PlainDataError("malformed dict item")
        keys = items if tag != "d" else [pair[0] for pair in items]
        if crowded(keys):
            raise PlainDataError(_CROWD)
        if tag == "s":
            return set(items)
        if tag == "f":
            return frozenset(items)
        return dict((pair[0], pair[1]) for pair in items)
    except (TypeError, ValueError, OverflowError) as exc:  # unhashable items, bad base64 or hex,
        # a complex part past any float: whatever a forged record holds, the caller gets
        # PlainDataError (a fail of the program), never another exception (an error)
        if isinstance(exc, PlainDataError):
            raise
        raise PlainDataError(f"malformed {tag!r} value: {exc}") from None


# -- framing --------------------------------------------------------------------------------------

# Each first touch of a page after a fork costs a copy (about 2 us here), in the child and in the
# zygote alike, and a fresh session is mostly those copies. Python's json module touches about 50
# pages per call; so replies are encoded by one prebuilt C encoder (about 20), requests come in
# marshal (about 10), and the replies every session sends are encoded once, here.

_HEAD = struct.Struct(">II")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"))``, as one C encoder built once when this
    interpreter's ``json`` has one that gives the same text (else ``JSONEncoder.encode``)."""
    encoder = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    try:
        chunks = make(
            None, encoder.default, json.encoder.encode_basestring_ascii, None, ":", ",",
            False, False, True,
        )  # fmt: skip

        def encode(value: Any) -> str:
            return "".join(chunks(value, 0))

        sample = {"a": [1, -2.5, "\u00e9\n", None, True, float("nan")], "b": {"c": {}}, "d": []}
        if encode(sample) != "".join(encoder.iterencode(sample)):  # the pure-Python encoder
            return encoder.encode
    except Exception:  # another interpreter's internals: use the public path
        return encoder.encode
    return encode


_encode = _compact_encoder()


def frame(header: dict[str, Any], blob: bytes = b"") -> bytes:
    """One message from the sandbox: two big-endian lengths, a JSON header, raw bytes (the
    harness reads what comes out of the sandbox as JSON, and nothing else)."""
    return _framed(_encode(header).encode("utf-8"), blob)


def request_frame(header: dict[str, Any], blob: bytes = b"") -> bytes:
    """One message into the sandbox, from the harness: as ``frame``, the header in ``marshal``
    (the same interpreter reads it; only the trusted harness ever writes one)."""
    return _framed(marshal.dumps(header), blob)


def _framed(head: bytes, blob: bytes) -> bytes:
    return _HEAD.pack(len(head), len(blob)) + head + blob


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_request(fd: int) -> tuple[dict[str, Any], bytes]:
    """A ``request_frame`` from the harness (the only writer of the pipes this reads)."""
    head_len, blob_len = _HEAD.unpack(_read_exact(fd, _HEAD.size))
    header = marshal.loads(_read_exact(fd, head_len))  # noqa: S302 - written by the harness only
    return header, _read_exact(fd, blob_len) if blob_len else b""


# -- kernel interfaces (ctypes; nothing here runs the program) ------------------------------------

_PR_SET_PDEATHSIG = 1
_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_SECCOMP_MODE_FILTER = 2
_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_CLONE_NEWNS = 0x00020000
_CLONE_NEWCGROUP = 0x02000000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 1
_MOUNT_ATTR_NOSUID = 2
_MS_REC = 16384
_MS_PRIVATE = 1 << 18

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def _prctl(option: int, arg: Any = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _Filter:
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


def _landlock(read: list[str], write: list[str], files: dict[str, str]) -> int:
    """Confine this process and its descendants: read and execute only under ``read``, write only
    under ``write`` (and the single ``files``), no TCP bind or connect. Returns the ABI used."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs_rights = _landlock_fs_rights(abi)
    net_rights = 3 if abi >= 4 else 0  # bind and connect TCP, with no port allowed
    attr = _RulesetAttr(fs_rights, net_rights, 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _check(
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
                _check(
                    _libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _check(_libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _drop_capabilities() -> None:
    """Empty every capability set, for good (the bounding set too, so no exec can regain any)."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


def _isolate_natively(config: dict[str, Any]) -> None:
    """The fallback when bubblewrap is absent: new user, PID, network, mount, IPC and UTS
    namespaces, every mount of the host read-only, a fresh ``/proc``, a private tmpfs scratch
    directory, an empty read-only tmpfs over each third-party package directory
    (``hidden_dirs``), then no capabilities.

    The masks are mounts of this mount namespace, made before Landlock opens its read rules,
    so a rule on the interpreter's prefix allows reading the empty masks and nothing beneath
    them; with no capabilities left (and ``umount`` killed by seccomp) no task can lift them.

    The calling process stays outside as a waiting parent; the process that returns from here is
    PID 1 of the new PID namespace, so no process of the sandbox can signal it, and when it dies
    the kernel kills every process left in the namespace.
    """
    uid, gid = os.getuid(), os.getgid()
    flags = (
        _CLONE_NEWUSER
        | _CLONE_NEWNS
        | _CLONE_NEWPID
        | _CLONE_NEWNET
        | _CLONE_NEWIPC
        | _CLONE_NEWUTS
        | _CLONE_NEWCGROUP
    )
    _check(_libc.unshare(flags), "unshare")
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", f"{config['inner_uid']} {uid} 1")
    _write_file("/proc/self/gid_map", f"{config['inner_gid']} {gid} 1")
    child = os.fork()
    if child:  # the outer parent: wait, then leave with the sandbox's status
        while True:
            try:
                _, status = os.waitpid(child, 0)
            except InterruptedError:
                continue
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    scratch = config["scratch"]
    _check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "making / private")
    _read_only_everywhere()
    size = f"size={config['scratch_mb']}m,mode=1777".encode()
    _check(
        _libc.mount(b"tmpfs", scratch.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, size),
        f"mounting a tmpfs on {scratch}",
    )
    _check(
        _libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None),
        "mounting /proc",
    )
    empty = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    for path in config.get("hidden_dirs") or []:
        _check(
            _libc.mount(b"tmpfs", path.encode(), b"tmpfs", empty, b"size=4k,mode=555"),
            f"hiding {path}",
        )
    _libc.sethostname(b"sandbox", 7)
    _drop_capabilities()


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _read_only_everywhere() -> None:
    """Make every mount this namespace inherited from the host read-only and ``nosuid``, at
    once (``mount_setattr`` with ``AT_RECURSIVE``, Linux 5.12, older than any Landlock).

    Landlock refuses reads and writes but not a change of a file's mode, owner or times, and
    the sandbox's uid is the harness's user on the host: without this a task could ``chmod``
    whatever that user owns (all of ``/usr`` when it is root; the precompiled headers every
    later build reads). Bubblewrap's binds are read-only for the same reason. Only mounts made
    after this one (the scratch tmpfs, ``/proc``, the masks) are not: the masks are read-only
    mounts of their own."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, 0, 0, 0)
    _check(
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


# -- the child's side of a task (runs after fork, before and around the program) ------------------

_REQUEST_FD = 3
_RESPONSE_FD = 4
_READY_FD = 3
_LENGTH = struct.Struct(">I")
_TWO_FDS = struct.Struct("2i")


def _limit_all(limits: dict[str, int]) -> None:
    """The limits every process of the sandbox shares (set once in the zygote, inherited)."""
    mib = 1024 * 1024
    address_space_mb = limits.get("address_space_mb") or limits["memory_mb"]
    for name, value in (
        (resource.RLIMIT_AS, address_space_mb * mib),
        (resource.RLIMIT_FSIZE, limits["file_size_mb"] * mib),
        (resource.RLIMIT_NOFILE, limits["open_files"]),
        (resource.RLIMIT_NPROC, limits["max_processes"]),
        (resource.RLIMIT_CORE, 0),
    ):
        hard = resource.getrlimit(name)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)  # a limit only goes down (the caller's may be lower)
        resource.setrlimit(name, (value, value))


def _limit_memory(limits: dict[str, Any]) -> None:
    """A task's own memory limits (lower than the sandbox's, never higher: a hard limit only
    goes down): ``as_mb`` caps the address space, ``data_mb`` the private writable memory
    (heap, anonymous mappings; not the address space a JIT or a garbage collector reserves
    without touching), ``stack_mb`` the main thread's stack."""
    mib = 1024 * 1024
    for key, name in (
        ("as_mb", resource.RLIMIT_AS),
        ("data_mb", resource.RLIMIT_DATA),
        ("stack_mb", resource.RLIMIT_STACK),
    ):
        value = limits.get(key)
        if value:
            hard = resource.getrlimit(name)[1]
            want = int(value) * mib
            if hard != resource.RLIM_INFINITY:
                want = min(want, hard)
            resource.setrlimit(name, (want, want))


def _limit_cpu(seconds: float) -> None:
    """CPU time is counted per process, so each task gets its own limit: SIGXCPU, then SIGKILL.
    Whole seconds only: the backstop of the process tree's limit, which the zygote watches."""
    cpu_s = max(1, math.ceil(seconds) + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))


def _cpu_limit(header: dict[str, Any]) -> float | None:
    value: Any = header.get("cpu_s")
    return float(value) if type(value) in (int, float) and value > 0 else None


#: The most bytes a task's output stream may be given as its cap: a larger ``output_bytes``
#: is held to this.
STREAM_BYTES_MAX = 64 << 20


def _output_bytes(header: dict[str, Any]) -> int | None:
    """A task's own stream cap (a judge's 8 MiB), never above what the zygote will hold."""
    value = header.get("output_bytes")
    return min(int(value), STREAM_BYTES_MAX) if type(value) is int and value > 0 else None


_CPU_WATCH_S = 0.02
"""How often the zygote reads a task's CPU time while it runs (the most a task overruns its
CPU-time limit by)."""
_PID_PROBE = 64
"""PIDs past the highest live one of a task that are probed for new processes."""
_PID_WINDOW = 4096
"""The most PIDs probed at one look (a process that churns through PIDs faster is still held by
the per-process CPU limit, the process limit and the wall-clock backstop)."""


def _process_cpu(pid: int) -> float | None:
    """A live process's CPU time (all its threads'), by its CPU-time clock, which needs no
    ``/proc`` (Landlock hides it from the zygote too); None when ``pid`` is no process (or a
    thread that does not lead one)."""
    try:
        return time.clock_gettime((~pid << 3) | 2)  # CPUCLOCK_SCHED of a process's clock
    except OSError:
        return None


def _children_cpu() -> float:
    """CPU time of every process this one has reaped, and of what they reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _place(placed: dict[int, int], *, orphan_guard: bool) -> None:
    """Own process group; ``placed`` maps each descriptor the child keeps to its source; every
    other descriptor (the protocol pipes above all) is closed.

    Without a PID namespace of our own the zygote's death would not take its children with it,
    so then each child also asks to be killed when its parent dies.
    """
    os.setpgid(0, 0)
    top = max(placed)
    moved = placed
    if min(placed.values()) <= top:
        # first move every source above the targets, so no dup2 overwrites a source still needed
        moved = {t: fcntl.fcntl(src, fcntl.F_DUPFD, top + 1) for t, src in placed.items()}
    for target, source in moved.items():
        os.dup2(source, target)
    os.closerange(top + 1, 1 << 16)
    if orphan_guard:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _reopen_streams() -> None:
    """Fresh text streams on the new descriptors (the zygote's own were never used)."""
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if len(text) > 500:
        text = text[:500] + "..."
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        if last.filename == "<solution>":
            where = f" (line {last.lineno})"
    return f"{text}{where}"


def _record(data: bytes) -> bytes:
    return _LENGTH.pack(len(data)) + data


_LOADED = _record(b'{"status":"loaded"}')  # what the harness expects, byte for byte
_SESSION_STARTED = frame({"op": "session", "session": True})


def _respond(record: dict[str, Any]) -> None:
    """One length-prefixed result record on the response pipe."""
    try:
        data = _encode(record).encode("utf-8")
    except (ValueError, TypeError, RecursionError) as exc:
        data = _encode({"status": "bad_value", "reason": f"cannot encode: {exc}"}).encode()
    _write_all(_RESPONSE_FD, _record(data))


def _raised(exc: BaseException, phase: str) -> dict[str, Any]:
    return {
        "status": "raised",
        "phase": phase,
        "type": type(exc).__name__,
        "builtin": type(exc).__module__ == "builtins",
        "message": _describe(exc),
    }


def _setup_failed(fd: int, exc: BaseException) -> None:
    """Report a failed confinement (without the ready byte) and leave; never returns."""
    try:
        os.write(fd, f"sandbox setup failed: {type(exc).__name__}: {exc}".encode())
    finally:
        os._exit(70)


def _serve_calls(code: Any, entry: str) -> None:
    """A call session: run the program once, then answer calls of its function until the zygote
    closes the request pipe; never returns.

    The program's globals persist from call to call within a session (as in any harness that
    imports a solution once); the harness replays the calls in another session, in another
    order, and requires the same answers, so a function whose answers depend on that state
    (a call counter) fails.
    """
    namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
    try:  # from here on the program runs; nothing it does is trusted
        exec(code, namespace)  # noqa: S102 - inside the sandbox, in this forked child only
    except BaseException as exc:
        _respond(_raised(exc, "load"))
        os._exit(0)
    function = namespace.get(entry)
    if not callable(function):
        _respond({"status": "missing_entry", "reason": f"no function named {entry!r}"})
        os._exit(0)
    _write_all(_RESPONSE_FD, _LOADED)
    answered = 0
    while True:
        try:
            header, _ = _read_request(_REQUEST_FD)
        except (EOFError, OSError):
            os._exit(0)
        for args, kwargs in header["calls"]:
            record = _answer(function, decode_value(args), decode_value(kwargs))
            record["call"] = answered  # a record the program forges shows up as a repeat
            answered += 1
            _respond(record)


def _answer(function: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        value = function(*args, **kwargs)
    except BaseException as exc:
        return _raised(exc, "call")
    try:
        return {"status": "ok", "value": encode_value(value, held=True)}
    except (PlainDataError, RecursionError) as exc:
        return _opaque(value, str(exc))


def _opaque(value: Any, reason: str) -> dict[str, Any]:
    """An answer that is not plain data, as far as it may leave: its truth and its type's name.

    ``bool()`` may run the program's own ``__bool__`` or ``__len__``: that happens here, inside
    the call and under its deadline, and what it raises is the program's exception. Only a
    ``bool`` and a name cross, so the harness can hand a check an object whose one meaning is
    that truth (``assert text_match("aab")`` of a function returning a ``re.Match``) without
    ever running anything of the program's.
    """
    try:
        truth = bool(value)
        kind = type(value)
        name = f"{kind.__module__}.{kind.__qualname__}"
    except BaseException as exc:
        return _raised(exc, "call")
    return {"status": "bad_value", "reason": reason, "truth": truth, "type": name[:200]}


def _run_program(code: Any) -> None:
    """Run the program as ``__main__`` on the stdin pipe, like ``python program.py``."""
    code_out = 0
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})  # noqa: S102 - sandboxed child
    except SystemExit as exc:
        if exc.code is None:
            code_out = 0
        elif type(exc.code) is int:
            code_out = exc.code & 0xFF
        else:
            print(exc.code, file=sys.stderr)
            code_out = 1
    except BaseException:
        traceback.print_exc(limit=5)
        code_out = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: S110 - a broken stream at exit changes nothing for the caller
        pass
    os._exit(code_out)


# -- the server -----------------------------------------------------------------------------------

_PREIMPORT_ALLOWED = frozenset(
    {
        "abc", "array", "bisect", "calendar", "cmath", "collections", "copy", "dataclasses",
        "datetime", "decimal", "enum", "fractions", "functools", "hashlib", "heapq", "itertools",
        "json", "math", "numbers", "operator", "random", "re", "statistics", "string", "textwrap",
        "typing", "unicodedata",
    }
)  # fmt: skip
"""Standard-library modules the zygote may import ahead of a program that names them, so the
per-task child does not import them again each time. Chosen by name only from this list: the
program picks which, but only trusted library code runs."""


def _code_names(code: Any, seen: set[str]) -> None:
    seen.update(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            _code_names(const, seen)


class Zygote:
    """The server loop; one instance per sandbox."""

    def __init__(self, config: dict[str, Any], proto_in: int, proto_out: int) -> None:
        import socket

        self.config = config
        self.proto_in = proto_in
        self.proto_out = proto_out
        self.fd_socket = socket.socket(fileno=config["fd_socket"])
        self.fd_socket.set_inheritable(False)
        self.rights = (socket.SOL_SOCKET, socket.SCM_RIGHTS)  # what socket.send_fds sends
        self.limits: dict[str, int] = config["limits"]
        self.output_bytes: int = self.limits["output_bytes"]
        self.filters = {
            kind: _Filter(base64.b64decode(blob))
            for kind, blob in (config.get("seccomp") or {}).items()
        }
        self.call_filter = self.filters.get("function")
        self.program_filter = self.filters.get("program")
        self.exec_filter = self.filters.get("exec")
        self.own_pid_namespace = os.getpid() == 1
        self.scratch: str = config["scratch"]
        # held from the start: listing the scratch directory through it needs no permission a
        # task could take away
        self.scratch_fd = os.open(self.scratch, _DIR_FLAGS)
        self.scratch_mode = stat.S_IMODE(os.fstat(self.scratch_fd).st_mode)
        self.scratch_xattrs = _xattrs(self.scratch_fd)
        self.wipe_s = float(config.get("wipe_s", 2.0))
        self.wipe_wall_s = float(config.get("wipe_wall_s", self.wipe_s))
        self.unclean = ""
        self.code: Any = None
        self.entry: str | None = None
        self.session_cpu_s = 60.0
        self.session: int | None = None
        self.session_wanted = False  # fork a session once the current request is answered
        self.dying: list[int] = []
        self.image: list[tuple[str, int, bytes]] | None = None
        self.proc_hidden = bool(config.get("landlock_applied"))

    # -- the protocol --

    def send(self, header: dict[str, Any], blob: bytes = b"") -> None:
        _write_all(self.proto_out, frame(header, blob))

    def serve(self) -> None:
        """Answer requests until told to exit. Every call session is forked from this frame,
        after the request that asked for it is done with: a session started by ``load`` and one
        started by ``session`` see the same stack, the same locals and the same state, so the
        program cannot tell a first pass from the replay that checks it (``start_session``)."""
        while self.handle():
            if self.unclean:
                return  # the sandbox ends with its zygote, and its scratch tmpfs with it
            if self.session_wanted:
                self.start_session()
            self.reap_dying()

    def handle(self) -> bool:
        """One request; False when the zygote should exit."""
        try:
            header, blob = _read_request(self.proto_in)
        except EOFError:
            return False
        op = header.get("op")
        if op == "load":
            self.load(header)
        elif op == "session":
            self.session_wanted = True
        elif op == "end":
            self.send({"op": op, "status": self.end_session(wait=True)})
        elif op == "run":
            self.run(header, blob)
        elif op == "build":
            self.build(header, blob)
        elif op == "exec":
            self.exec(header, blob)
        elif op == "image":
            self.send_image()
        elif op == "install":
            self.install(header, blob)
        elif op == "unload":
            self.end_session()
            self.code = self.entry = self.image = None
            self.send({"op": op})
        elif op == "ping":
            self.send({"op": "pong"})
        elif op == "exit":
            self.end_session()
            return False
        else:
            self.send({"op": "error", "reason": f"unknown op {op!r}"})
        return True

    def load(self, header: dict[str, Any]) -> None:
        self.end_session()
        self.code = self.entry = None
        self.image = None
        try:
            code = compile(header["source"], "<solution>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
            self.send({"op": "load", "ok": False, "error": f"{type(exc).__name__}: {exc}"})
            return
        names: set[str] = set()
        _code_names(code, names)
        for name in sorted(names & _PREIMPORT_ALLOWED):
            if name not in sys.modules:
                try:
                    __import__(name)
                except Exception:  # noqa: S112 - the child will report the failing import
                    continue
        gc.freeze()  # children's collections then leave the zygote's pages shared
        self.code, self.entry = code, header.get("entry")
        self.session_cpu_s = float(header.get("session_cpu_s") or 60.0)
        self.send({"op": "load", "ok": True})
        self.session_wanted = bool(self.entry)  # its reply follows this one, unasked

    # -- call sessions --

    def start_session(self) -> None:
        """End the current session and fork the next; say whether it started."""
        self.session_wanted = False
        self.end_session()
        started = self.open_session()
        if started is True:
            _write_all(self.proto_out, _SESSION_STARTED)
        else:
            self.send({"op": "session", "session": started})

    def open_session(self) -> bool | str:
        """Fork a session for the loaded program and hand its pipes to the harness.

        The harness then talks to the session directly (each call costs one round trip, with no
        stop here) and asks this zygote to end it (``end``: kill it, report how it died). The
        session forks at once and runs the program's module code before the first call even
        arrives. Returns True when done, else why it could not start.
        """
        if self.code is None or not self.entry:
            return "no program is loaded"
        if self.call_filter is None:
            # without the filter a session may leave files and processes behind
            if not self.settle():
                return f"the scratch directory could not be emptied: {self.unclean}"
        else:
            # a killed session runs no more code, but until reaped its /proc entry shows what
            # it wrote there (its name, say): only when Landlock hides /proc is that harmless
            self.reap_dying(block=not self.proc_hidden)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in (req_r, req_w, resp_r, resp_w):
                os.close(fd)
            return f"fork failed: {exc}"
        if pid == 0:  # the session's process: confine, say so, then the program
            self.dying.clear()  # which sessions came before is none of the program's business
            try:
                placed = {_REQUEST_FD: req_r, _RESPONSE_FD: resp_w}
                _place(placed, orphan_guard=not self.own_pid_namespace)
                _limit_memory({"as_mb": self.limits["memory_mb"]})
                _limit_cpu(self.session_cpu_s)
                if self.call_filter is not None:
                    self.call_filter.install()
                os.write(_RESPONSE_FD, b"R")
            except BaseException as exc:
                _setup_failed(_RESPONSE_FD, exc)
            _serve_calls(self.code, str(self.entry))
        os.close(req_r)
        os.close(resp_w)
        try:
            self.fd_socket.sendmsg([b"S"], [(*self.rights, _TWO_FDS.pack(req_w, resp_r))])
        finally:
            os.close(req_w)  # from now on only the harness and the session hold them
            os.close(resp_r)
        self.session = pid
        return True

    def end_session(self, *, wait: bool = False) -> int | None:
        """Kill the current session; with ``wait``, reap it and return its wait status (how it
        died, when it died by itself before the kill)."""
        pid, self.session = self.session, None
        if pid is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if wait:
            return os.waitpid(pid, 0)[1]
        self.dying.append(pid)
        return None

    def reap_dying(self, *, block: bool = False) -> None:
        """Collect killed sessions. Before another session may run any of the program, the last
        one must be gone entirely: a zombie still shows what it wrote into its own ``/proc``
        entry (its name, say) to anyone who can look."""
        for pid in list(self.dying):
            if os.waitpid(pid, 0 if block else os.WNOHANG)[0]:
                self.dying.remove(pid)

    def settle(self) -> bool:
        """Before anything that could see what earlier processes left: wait until they are all
        gone, kill their leftovers, empty the scratch directory. False when it could not be
        emptied (``unclean`` says why): nothing may run in it then."""
        for pid in self.dying:
            os.waitpid(pid, 0)
        for pid in self.dying:
            self.kill_strays(pid)
        self.dying.clear()
        self.reap()
        self.unclean = self.unclean or self.wipe_scratch()
        return not self.unclean

    def refused(self) -> bool:
        """Settle before a task; when that fails, report the task as not run and say so."""
        if self.settle():
            return False
        self.send({"op": "done", "how": "unclean", "unclean": self.unclean, "lens": [0, 0, 0]})
        return True

    def clean_up(self, header: dict[str, Any]) -> None:
        """Empty the scratch directory after a task. When that fails the task's report says so
        (what could not be removed is the task's own doing, every earlier wipe having
        succeeded) and this zygote serves nothing more: the harness starts a fresh sandbox."""
        left = self.wipe_scratch()
        if left:
            header["unclean"] = self.unclean = left

    # -- whole programs --

    def run(self, header: dict[str, Any], stdin: bytes) -> None:
        """Run the program once as ``__main__`` in a fresh child: stdin in, stdout and stderr out.

        The child gets pipes for its standard streams and, on descriptor 3, a pipe that only
        says its setup is done (closed before the program starts).
        """
        started = time.monotonic()
        if self.code is None:
            self.send({"op": "done", "how": "not_loaded", "lens": [0, 0, 0]})
            return
        self.end_session()
        if self.refused():
            return
        timeout_s = float(header["timeout_s"])

        def setup() -> None:
            _limit_memory({"as_mb": self.limits["memory_mb"]})
            _limit_cpu(_cpu_limit(header) or timeout_s)
            if self.program_filter is not None:
                self.program_filter.install()
            _reopen_streams()

        child = self.fork_child(setup)
        if child is None:
            return
        pid, in_w, readers = child
        if pid == 0:
            _run_program(self.code)
        self.supervise(pid, started, header, stdin, in_w, readers)

    def fork_child(self, setup: Callable[[], None]) -> tuple[int, int, list[int]] | None:
        """Fork a child with pipes for its standard streams and, on descriptor 3, a pipe that
        only says its setup is done; the child places them, runs ``setup`` (its limits and
        filter), says so, and returns ``(0, -1, [])`` to run what it was forked for.

        Returns (pid, the stdin writer, the stdout / stderr / ready readers) in the parent, or
        None when the fork failed (reported as ``spawn_failed``).
        """
        pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, ready
        (in_r, in_w), (out_r, out_w), (err_r, err_w), (ready_r, ready_w) = pipes
        try:
            pid = os.fork()
        except OSError as exc:
            for pair in pipes:
                for fd in pair:
                    os.close(fd)
            said = str(exc).encode()
            self.send({"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}, said)
            return None
        if pid == 0:
            try:
                placed = {0: in_r, 1: out_w, 2: err_w, _READY_FD: ready_w}
                _place(placed, orphan_guard=not self.own_pid_namespace)
                setup()
                os.write(_READY_FD, b"R")
                os.close(_READY_FD)
            except BaseException as exc:
                _setup_failed(2, exc)
            return 0, -1, []
        for fd in (in_r, out_w, err_w, ready_w):
            os.close(fd)
        return pid, in_w, [out_r, err_r, ready_r]

    def supervise(
        self,
        pid: int,
        started: float,
        header: dict[str, Any],
        stdin: bytes,
        in_w: int,
        readers: list[int],
        before_wipe: Any = None,
    ) -> None:
        """Feed stdin, collect the streams (capped), wait for the exit or the deadline, clean up.

        ``before_wipe(how, status)``, when given, runs once every process of the task is gone
        and before the scratch directory is emptied (a build keeps its output there); what it
        returns is added to the report.

        From the task's ``header``: ``timeout_s``, the wall-clock deadline; ``output_bytes``,
        the cap of each stream (the sandbox's own when absent); ``cpu_s``, the CPU-time limit:
        the task's CPU time (its whole process tree's, as judges count it) is read every
        ``_CPU_WATCH_S`` and the task killed (``cpu_limit``) once it reaches it, so the deadline
        is only the backstop of a task that waits.
        """
        deadline = started + float(header["timeout_s"])
        cpu_limit = _cpu_limit(header)
        output_bytes = _output_bytes(header) or self.output_bytes
        reaped_before = _children_cpu()
        tree_cpu = 0.0
        probe = [pid]
        probe_end: tuple[int, Any] | None = None  # the main process's end, when a look reaped it
        next_watch = time.monotonic() + _CPU_WATCH_S
        data: list[list[bytes]] = [[] for _ in readers]
        sizes = [0] * len(readers)
        slot = {fd: i for i, fd in enumerate(readers)}
        pidfd = os.pidfd_open(pid)
        poller = select.poll()
        for fd in readers:
            poller.register(fd, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        pending = memoryview(stdin)
        if pending:
            os.set_blocking(in_w, False)
            poller.register(in_w, select.POLLOUT)
        else:
            os.close(in_w)
            in_w = -1
        open_readers = len(readers)
        how, status = "exited", -1
        while open_readers or status < 0:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                how = "timeout"
                break
            if cpu_limit is not None:
                if now >= next_watch:
                    next_watch = now + _CPU_WATCH_S
                    used, main_end = self.tree_cpu(pid, reaped_before, probe)
                    tree_cpu = max(tree_cpu, used)
                    probe_end = probe_end or main_end
                    if tree_cpu >= cpu_limit:
                        how = "cpu_limit"
                        break
                left = min(left, next_watch - now)
            for fd, _ in poller.poll(max(left, 0.0) * 1000):
                if fd == pidfd:
                    poller.unregister(pidfd)
                    status, usage = probe_end or os.wait4(pid, 0)[1:]
                    self.kill_strays(pid)  # its leftovers would hold the pipes open
                elif fd == in_w:
                    pending = self.feed(in_w, pending)
                    if not pending:
                        poller.unregister(in_w)
                        os.close(in_w)
                        in_w = -1
                else:
                    chunk = os.read(fd, 1 << 16)
                    i = slot[fd]
                    if not chunk:
                        poller.unregister(fd)
                        open_readers -= 1
                        continue
                    sizes[i] += len(chunk)
                    if sizes[i] > output_bytes:
                        how = "output_limit"
                        break
                    data[i].append(chunk)
            if how != "exited":
                break
        if status < 0:
            self.kill_strays(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            status, usage = probe_end or os.wait4(pid, 0)[1:]
        elapsed = time.monotonic() - started
        self.reap()
        for fd in [*readers, pidfd, in_w]:
            if fd >= 0:
                os.close(fd)
        cpu = usage.ru_utime + usage.ru_stime
        if self.own_pid_namespace:  # every process of the task was ours to reap
            cpu = max(cpu, _children_cpu() - reaped_before)
        report: dict[str, Any] = {
            "op": "done",
            "how": how,
            "elapsed_s": elapsed,
            "cpu_s": max(cpu, tree_cpu),
            "maxrss_kb": usage.ru_maxrss,
        }
        if before_wipe is not None:
            report.update(before_wipe(how, status))
        self.clean_up(report)
        blobs = [b"".join(chunks) for chunks in data]
        if os.WIFSIGNALED(status):
            report["signal"] = signal.Signals(os.WTERMSIG(status)).name
            if how == "exited":
                report["how"] = "signaled"
        else:
            report["code"] = os.WEXITSTATUS(status)
        report["lens"] = [len(b) for b in blobs]
        self.send(report, b"".join(blobs))

    # -- programs of any language: a build, then executions of what it made --

    def build(self, header: dict[str, Any], blob: bytes) -> None:
        """Write the source files into the empty scratch directory, run the build command there
        (a compiler; none for a script), and keep in memory what it made that matches ``keep``.

        The kept files are the *image*: every ``exec`` starts from an empty scratch directory
        with the image written back, so a run sees the build's output and never a file an
        earlier run wrote (or changed, the binary included).
        """
        started = time.monotonic()
        self.end_session()
        self.code = self.entry = None
        self.image = None
        if self.refused():
            return
        if not self.placed(lambda: self.write_files(header.get("files") or [], blob)):
            return
        keep = [str(k) for k in header.get("keep") or []]
        cap = int(header.get("image_bytes") or 64 << 20)

        def snapshot(how: str, status: int) -> dict[str, Any]:
            if how != "exited" or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                return {}
            image, problem = self.collect(keep, cap)
            if problem:
                return {"image_error": problem}
            self.image = image
            return {"image_files": sorted(name for name, _, _ in image)}

        argv = header.get("argv")
        if not argv:  # nothing to build: the sources are the image
            self.send_done(snapshot("exited", 0), started)
            return
        self.spawn(header, b"", started, before_wipe=snapshot)

    def exec(self, header: dict[str, Any], stdin: bytes) -> None:  # sandbox: runs a built program
        """Execute a command (the built binary, or an interpreter on the kept script) in a fresh
        scratch directory holding the image and ``files``, on ``stdin``."""
        started = time.monotonic()
        if self.image is None:
            self.send({"op": "done", "how": "not_loaded", "lens": [0, 0, 0]})
            return
        self.end_session()
        if self.refused():
            return
        image = self.image
        split = int(header.get("stdin_len", len(stdin)))

        def place() -> None:
            for name, mode, data in image:
                self.write_file(name, data, mode)
            self.write_files(header.get("files") or [], stdin[split:])

        if self.placed(place):
            self.spawn(header, stdin[:split], started)

    def send_image(self) -> None:
        """The image of the last build, to the harness, which may keep it for an identical build
        (``install``). Only bytes the build left cross; nothing here reads or runs them."""
        image = self.image or []
        files = [[name, mode, len(data)] for name, mode, data in image]
        self.send({"op": "image", "files": files}, b"".join(data for _, _, data in image))

    def install(self, header: dict[str, Any], blob: bytes) -> None:
        """Take an image the harness kept from an earlier build of the very same inputs, in
        place of building again: ``files`` is ``[[name, mode, length], ...]``, the bytes one
        after the other in ``blob``. Nothing runs and nothing is written until an ``exec``,
        which writes it into an emptied scratch directory as it would a fresh build's."""
        started = time.monotonic()
        self.end_session()
        self.code = self.entry = None
        self.image = None
        image: list[tuple[str, int, bytes]] = []
        start = 0
        try:
            for name, mode, length in header.get("files") or []:
                name, length = str(name), int(length)
                if not name or "/" in name or name in (".", "..") or length < 0:
                    raise ValueError(f"not a plain file name: {name!r}")
                image.append((name, int(mode) & 0o755, blob[start : start + length]))
                start += length
        except (TypeError, ValueError) as exc:
            said = f"cannot take the image: {exc}".encode()
            self.send({"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}, said)
            return
        self.image = image
        self.send_done({"image_files": sorted(name for name, _, _ in image)}, started)

    def placed(self, write: Any) -> bool:
        """Run ``write`` (files into the scratch directory); on failure report it and say so."""
        try:
            write()
        except (OSError, ValueError) as exc:
            said = f"cannot write the task's files: {exc}".encode()
            header = {"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}
            self.clean_up(header)
            self.send(header, said)
            return False
        return True

    def spawn(
        self, header: dict[str, Any], stdin: bytes, started: float, before_wipe: Any = None
    ) -> None:
        """Fork a child that execs ``argv`` in the scratch directory with its own limits."""
        timeout_s = float(header["timeout_s"])
        argv = [str(a) for a in header["argv"]]
        env = {str(k): str(v) for k, v in (header.get("env") or {}).items()}
        memory = dict(header.get("memory") or {})

        def setup() -> None:
            _limit_memory(memory)
            _limit_cpu(float(header.get("cpu_s") or timeout_s))
            if self.exec_filter is not None:
                self.exec_filter.install()

        child = self.fork_child(setup)
        if child is None:
            return
        pid, in_w, readers = child
        if pid == 0:
            try:
                os.execve(argv[0], argv, env)  # noqa: S606 - inside the sandbox, confined
            except OSError as exc:
                os.write(2, f"cannot execute {argv[0]}: {exc.strerror}\n".encode())
            os._exit(127)
        self.supervise(pid, started, header, stdin, in_w, readers, before_wipe)

    def send_done(self, extra: dict[str, Any], started: float) -> None:
        """The report of a task that ran nothing (a build with no build command)."""
        header = {"op": "done", "how": "exited", "code": 0, "lens": [0, 0, 1]}
        header["elapsed_s"] = time.monotonic() - started
        self.clean_up(header)
        self.send({**header, **extra}, b"R")

    def write_files(self, files: list[Any], blob: bytes) -> None:
        """``files`` is ``[[name, length], ...]``, their bytes one after the other in ``blob``."""
        start = 0
        for name, length in files:
            self.write_file(str(name), blob[start : start + int(length)], 0o644)
            start += int(length)

    def write_file(self, name: str, data: bytes, mode: int) -> None:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        fd = os.open(os.path.join(self.scratch, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)

    def collect(self, keep: list[str], cap: int) -> tuple[list[tuple[str, int, bytes]], str]:
        """The regular files at the top of the scratch directory whose names match ``keep``."""
        import fnmatch

        image: list[tuple[str, int, bytes]] = []
        total = 0
        with os.scandir(self.scratch) as entries:
            for entry in entries:
                if not any(fnmatch.fnmatchcase(entry.name, k) for k in keep):
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                total += entry.stat(follow_symlinks=False).st_size
                if total > cap:
                    return [], f"the build's output is larger than {cap} bytes"
                with open(entry.path, "rb") as handle:
                    data = handle.read(cap + 1)
                image.append((entry.name, entry.stat().st_mode & 0o755, data))
        if not image:
            return [], "the build made none of the files it should have: " + ", ".join(keep)
        return image, ""

    @staticmethod
    def feed(fd: int, pending: memoryview) -> memoryview:
        try:
            return pending[os.write(fd, pending[: 1 << 16]) :]
        except BlockingIOError:
            return pending
        except OSError:  # the program closed its stdin: the rest is not wanted
            return pending[:0]

    # -- cleaning up --

    def tree_cpu(
        self, pid: int, reaped_before: float, probe: list[int]
    ) -> tuple[float, tuple[int, Any] | None]:
        """The CPU time a running task has used so far, and the main process's (status, usage)
        when this look reaped it.

        As PID 1 of a private PID namespace, the task's processes are the only others, each
        given a higher PID than the one before: the zygote first reaps the orphans that ended
        (their time then counts among its children's), then adds the main process's clock,
        the clocks of live processes up to a little past the highest PID seen (``probe`` keeps
        it), and what it reaped since the task started. Otherwise, the main process's own
        clock (the per-process ``RLIMIT_CPU`` bounds the others). Either way, what a process's
        children used once they are reaped shows in the exact count taken at the end."""
        if not self.own_pid_namespace:
            return _process_cpu(pid) or 0.0, None
        main_end = None
        while True:
            try:
                done, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done == 0:
                break
            if done == pid:
                main_end = (status, usage)
        total = (_process_cpu(pid) or 0.0) + _children_cpu() - reaped_before
        top = probe[0] + _PID_PROBE
        for other in range(max(pid + 1, top - _PID_WINDOW), top + 1):
            used = _process_cpu(other)
            if used is not None:
                total += used
                probe[0] = max(probe[0], other)
        return total, main_end

    def kill_strays(self, pid: int) -> None:
        """Kill what a task left behind: as PID 1 of a private PID namespace, every other process
        in the sandbox (those that left the task's process group included); otherwise the
        task's process group."""
        try:
            if self.own_pid_namespace:
                os.kill(-1, signal.SIGKILL)  # never reaches PID 1 itself
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self) -> None:
        """Collect every dead child (orphans are re-parented to PID 1, i.e. to us)."""
        while True:
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if done == 0:
                if not self.own_pid_namespace:
                    return
                time.sleep(0.0005)  # killed, not yet dead

    def wipe_scratch(self) -> str:
        """Empty the scratch directory and put its own attributes back as they were at start (a
        file, a mode, a time or an extended attribute left by one task could be a counter the
        next one reads). Returns "" when that is done, else why not: a task must then not run
        in it (the harness restarts the sandbox, a fresh tmpfs)."""
        try:
            _empty_tree(self.scratch_fd, _Budget(self.wipe_s, self.wipe_wall_s))
            _restore_root(self.scratch_fd, self.scratch_mode, self.scratch_xattrs)
        except (OSError, TimeoutError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return ""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_WIPE_CHECK_EVERY = 256  # entries removed between two looks at the clock


class _Budget:
    """``cpu_s`` of this process's CPU time from now, and ``wall_s`` of the clock on the wall.

    The wipe's cost is the zygote's own work (system calls, counted in its CPU time), so a
    loaded machine does not make a task's leftovers a ``violation``; the wall-clock bound only
    stops a wipe that gets no CPU at all."""

    def __init__(self, cpu_s: float, wall_s: float) -> None:
        self.cpu_end = time.process_time() + cpu_s
        self.wall_end = time.monotonic() + max(wall_s, cpu_s)

    def spent(self) -> bool:
        return time.process_time() > self.cpu_end or time.monotonic() > self.wall_end


def _empty_tree(root: int, budget: _Budget) -> None:
    """Remove everything below the directory ``root`` (an open descriptor), whatever its
    permissions, depth, names or symlinks; ``TimeoutError`` once ``budget`` is spent.

    Nothing else runs in the sandbox meanwhile (every process of the task is dead), so the
    tree cannot change under it. Every step is relative to an open directory (``dir_fd``),
    never a path: a name is only ever looked up in the directory that holds it, no symlink is
    followed (a symlink is unlinked, ``O_NOFOLLOW`` refuses to enter one), and a path's length
    does not matter. It walks down one directory at a time and back up through ``..``, holding
    two descriptors at any depth and no list of the tree, so neither a deep tree nor a wide
    one runs it out of descriptors, stack or memory. Each directory is made readable,
    writable and searchable before it is emptied, as its owner may: a ``chmod 000`` cannot
    refuse the cleanup.
    """
    mode = stat.S_IMODE(os.fstat(root).st_mode)
    if mode & 0o700 != 0o700:
        os.fchmod(root, mode | 0o700)
    fd, depth, removed = os.dup(root), 0, 0
    try:
        while True:
            os.lseek(fd, 0, os.SEEK_SET)  # a fresh listing: what was removed is gone from it
            below, seen = None, 0
            with os.scandir(fd) as entries:
                for entry in entries:
                    seen += 1
                    removed += 1
                    if removed % _WIPE_CHECK_EVERY == 0 and budget.spent():
                        raise TimeoutError("the scratch directory took too long to empty")
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=fd)
                        continue
                    try:
                        os.rmdir(entry.name, dir_fd=fd)
                    except OSError as exc:
                        if exc.errno != errno.ENOTEMPTY:
                            raise
                        below = entry.name
                        break
            if below is not None:  # empty it first
                child = _enter(fd, below)
                os.close(fd)
                fd, depth = child, depth + 1
            elif seen:  # removed something: list again until a listing comes back empty
                continue
            elif depth:  # empty: back up, where the next listing removes it
                parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd, depth = parent, depth - 1
            else:
                return
    finally:
        os.close(fd)


def _enter(parent: int, name: str) -> int:
    """The subdirectory ``name`` of ``parent``, opened (never through a symlink) and made
    readable, writable and searchable by its owner: us, as every file of the sandbox."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:  # not readable: a plain directory (it was listed as one) to chmod
        if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise
        os.chmod(name, 0o700, dir_fd=parent)
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o700 != 0o700:
        os.fchmod(fd, mode | 0o700)
    return fd


def _restore_root(root: int, mode: int, xattrs: dict[str, bytes]) -> None:
    """Give the emptied directory ``root`` back its mode and extended attributes as they were
    at start, and the current time as its times (the ones a task set could carry a number)."""
    if stat.S_IMODE(os.fstat(root).st_mode) != mode:
        os.fchmod(root, mode)
    now = _xattrs(root)
    for name in now:
        if name not in xattrs:
            os.removexattr(root, name)
    for name, value in xattrs.items():
        if now.get(name) != value:
            os.setxattr(root, name, value)
    os.utime(root)


def _xattrs(fd: int) -> dict[str, bytes]:
    """The extended attributes of ``fd`` (none where the file system has none)."""
    try:
        names = os.listxattr(fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return {}
        raise
    return {name: os.getxattr(fd, name) for name in names}


# -- start-up -------------------------------------------------------------------------------------


def _status_fields() -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "Uid", "Gid"):
                    fields[key] = value.strip()
    except OSError:
        pass
    return fields


def namespaces() -> dict[str, str]:
    """This process's namespace identities (``user:[4026531837]``...), to compare with another's."""
    out = {}
    for name in ("user", "pid", "net", "mnt", "ipc", "uts"):
        try:
            out[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            out[name] = ""
    return out


def _in_child(attempt: Any) -> int:
    """Run ``attempt`` in a throw-away child; its wait status."""
    pid = os.fork()
    if pid == 0:
        try:
            code = attempt()
        except BaseException:
            code = 99
        os._exit(code)
    return os.waitpid(pid, 0)[1]


def _packages_hidden(paths: list[str]) -> bool:
    """Whether every third-party package directory is empty as seen from here."""
    for path in paths:
        try:
            if os.listdir(path):
                return False
        except OSError:  # absent or unreadable: nothing to import from
            continue
    return True


def _killed_by_seccomp(status: int) -> bool:
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS


def _try_connect() -> int:
    """10 when a TCP connect fails at once for want of a network (or permission)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1: never answers; fails fast only offline
    except OSError as exc:
        return 10 if exc.errno in (errno.ENETUNREACH, errno.EACCES, errno.EPERM) else 11
    return 12


def _try_personality() -> int:
    """A harmless query the base filter kills for (5 if it did not)."""
    _libc.personality(0xFFFFFFFF)
    return 5


def _try_socket(extra: _Filter | None) -> Any:
    """Under ``extra``, open a TCP socket: 5 if it opened, 6 if it was refused."""

    def attempt() -> int:
        import socket

        if extra is not None:
            extra.install()
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        except PermissionError:
            return 6
        return 5

    return attempt


def _try_fork(function_filter: _Filter) -> Any:
    def attempt() -> int:
        function_filter.install()
        if os.fork() == 0:
            os._exit(0)
        return 5

    return attempt


def main(argv: list[str]) -> int:
    config = json.loads(argv[0])
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != config["parent_pid"] and config["mode"] != "bwrap":
        return 1  # the harness is already gone
    # the protocol moves off 0 and 1, which every child gets as its own streams
    proto_in, proto_out = os.dup(0), os.dup(1)
    for fd in (proto_in, proto_out):
        os.set_inheritable(fd, False)
    errors: list[str] = []
    if config["mode"] == "native":
        _isolate_natively(config)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)  # inherited: no task can gain privileges through exec
    _prctl(_PR_SET_DUMPABLE, 0)  # no /proc/<pid>/mem, no ptrace of the zygote
    status = _status_fields()  # before Landlock, which hides /proc
    ns = namespaces()
    landlock = 0
    if config.get("landlock"):
        try:
            landlock = _landlock(config["read_paths"], [config["scratch"]], config["file_rules"])
        except OSError as exc:
            errors.append(f"landlock: {exc}")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PID 1, a handler would let children signal us
    _limit_all(config["limits"])
    sys.argv = [""]
    os.chdir(config["scratch"])
    for name in config.get("preimport", []):
        try:
            __import__(name)
        except Exception as exc:
            errors.append(f"preimport {name}: {exc}")
    config["landlock_applied"] = landlock > 0
    zygote = Zygote(config, proto_in, proto_out)
    # what really holds, checked from inside: the network before the filter (so only the
    # namespace or Landlock can be what stops it), then the filters themselves
    probe: dict[str, Any] = {
        "network_blocked": _in_child(_try_connect) == 10 << 8,
        "packages_hidden": _packages_hidden(config.get("hidden_dirs") or []),
    }
    base = zygote.filters.get("base")
    if base is not None:
        try:
            base.install()  # every process of the sandbox inherits it
        except OSError as exc:
            errors.append(f"seccomp: {exc}")
        program = zygote.program_filter
        probe["seccomp_enforced"] = (
            program is not None
            and _killed_by_seccomp(_in_child(_try_personality))
            and _killed_by_seccomp(_in_child(_try_socket(program)))
            and _in_child(_try_socket(zygote.exec_filter)) == 6 << 8
        )
    if zygote.call_filter is not None:
        probe["function_filter_enforced"] = _killed_by_seccomp(
            _in_child(_try_fork(zygote.call_filter))
        )
    hello = {
        "op": "hello",
        "pid": os.getpid(),
        "uid": os.getuid(),
        "status": status,
        "namespaces": ns,
        "landlock_abi": landlock,
        "dumpable": _libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0),
        "python": sys.version.split()[0],
        "errors": errors,
        **probe,
    }
    gc.collect()
    gc.freeze()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # nothing of ours goes to stderr after start-up
    zygote.send(hello)
    zygote.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
