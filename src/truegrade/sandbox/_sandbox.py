"""``Sandbox``: a running, isolated zygote, and the only way the rest of truegrade reaches it.

The harness side of the sandbox: it starts the zygote under the strongest isolation available,
checks from the zygote's own report which layers really hold, and then speaks to three kinds of
process there (``truegrade.sandbox._zygote``): the root, over a control pipe (one-byte commands:
a call session, a supervisor, kill the current one); each call session, directly, over the pipes
the root hands over (its limits, its program, its calls); and the supervisor of a whole program,
over the data pipe (runs, builds, executions). Everything that crosses back is validated here: a
value is rebuilt from JSON into exact builtin types, a record that is malformed or missing is a
failure, a call that runs past its CPU time is ended (this process reads the session's CPU-time
clock, by the PID the root gives as credentials), and a zygote that stops answering or breaks
the protocol is killed with its whole process group and started afresh on the next use.

What it must never do: run the program in this process, accept a value that is not plain data,
or start without isolation unless the caller opted in (``allow_unsandboxed``).
"""

from __future__ import annotations

import array
import atexit
import base64
import contextlib
import json
import marshal
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from truegrade._budgets import wall_backstop_s
from truegrade._errors import TruegradeError
from truegrade.sandbox import _launch
from truegrade.sandbox._buildcache import BuildCache, CachedBuild, build_key
from truegrade.sandbox._codec import (
    _CROWD,
    PlainDataError,
    crowded_within,
    decode_value,
    encode_value,
    request_frame,
)
from truegrade.sandbox._kernel import landlock_abi, process_cpu
from truegrade.sandbox._seccomp import SeccompUnavailable, build_filters
from truegrade.sandbox._zygote import RECORD, STREAM_BYTES_MAX

__all__ = [
    "CallResult",
    "CallStream",
    "ExecLimits",
    "Executable",
    "Isolation",
    "Program",
    "RunResult",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxUnavailable",
]

#: How programs are isolated (``SandboxConfig.isolation``).
Isolation = Literal["auto", "bwrap", "native", "none"]

_SOURCES = ("_codec.py", "_kernel.py", "_zygote.py")
_BOOTSTRAP = (  # runs inside the sandbox: it executes our own code objects, compiled here
    "import marshal,os\n"
    "n=int.from_bytes(os.read(0,4),'big');b=b''\n"
    "while len(b)<n:b+=os.read(0,n-len(b))\n"
    "for c in marshal.loads(b):exec(c)"  # inside the sandbox; ours, never model text
)
"""What the interpreter in the sandbox is started with: it reads the zygote's code objects (the
codec's, the kernel interfaces', the zygote's) from stdin and runs them in one namespace.
Compiling the sources there would leave the parser's memory behind in the root, and every fork
pays for every page the root has."""
_zygote_code: bytes | None = None


def _zygote_blob() -> bytes:
    """The zygote, compiled here (the sandbox runs the same interpreter) and marshalled."""
    global _zygote_code
    if _zygote_code is None:
        here = Path(__file__).parent
        codes = tuple(
            compile((here / name).read_text(encoding="utf-8"), f"<truegrade {name}>", "exec")
            for name in _SOURCES
        )
        _zygote_code = marshal.dumps(codes)
    return len(_zygote_code).to_bytes(4, "big") + _zygote_code


_HEAD_BYTES = 8
_MAX_HEADER = 1 << 20
_START_TIMEOUT_S = 20.0
_GRACE_S = 5.0
"""How long past a task's own deadline the harness waits for the zygote before declaring it
hung; the zygote enforces the deadline itself, this only catches a zygote that stopped working."""
_CPU_WATCH_S = 0.025
"""How often a call that is still running has its session's CPU time read (the most a call
overruns its CPU-time limit by)."""
_REPORT = struct.Struct("=iiiIi")  # code, pad, pid, uid, status: the root's report of an end
_CLD_EXITED, _CLD_KILLED, _CLD_DUMPED = 1, 2, 3


class SandboxError(TruegradeError, RuntimeError):
    """The sandbox could not start or stopped working (not the program's doing)."""


class SandboxUnavailable(SandboxError):
    """No isolation mode can run here (and running unsandboxed was not allowed)."""


@dataclass(frozen=True)
class SandboxConfig:
    """How to isolate and limit untrusted programs.

    Attributes:
        isolation: ``auto`` (bubblewrap, else the native fallback), ``bwrap``, ``native``, or
            ``none`` (no isolation; needs ``allow_unsandboxed``).
        allow_unsandboxed: Permit running with no isolation (``isolation="none"``, or ``auto``
            when nothing else works). Every result then says ``sandboxed=False``.
        memory_mb: Address-space limit of each task process.
        file_size_mb: Largest file a task may write (in the scratch directory).
        open_files: Descriptors a task may hold.
        max_processes: Processes a whole-program task may have at once (function calls may
            create none).
        output_bytes: Cap on each of a task's streams (stdout, stderr, returned value).
        scratch_mb: Size of the private scratch tmpfs.
        uid / gid: Identity inside the sandbox (non-root).
        seccomp / landlock / pids_cgroup: Use these layers when available.
        preimport: Modules the zygote imports once, so tasks do not import them each time.
        address_space_mb: Address-space cap of every process of the sandbox (default:
            ``memory_mb``). Function calls and Python runs still get ``memory_mb``; a larger cap
            is for ``exec`` tasks whose runtime reserves address space it never uses (a JVM,
            Go, V8), which then set their own limits (see ``ExecLimits``).
        read_only_dirs: Host directories, besides the system ones, that tasks may read and
            execute (read-only): a toolchain living outside ``/usr``, ``/etc/java-*``.
        memory_cgroup: Count a whole-program task's memory for its whole process tree, in a
            memory cgroup of the sandbox's own (when the harness may make one: root, a memory
            controller); without it each process has its own limits.
    """

    isolation: Isolation = "auto"
    allow_unsandboxed: bool = False
    memory_mb: int = 1024
    file_size_mb: int = 16
    open_files: int = 64
    max_processes: int = 32
    output_bytes: int = 1 << 20
    scratch_mb: int = 64
    uid: int = 65534
    gid: int = 65534
    seccomp: bool = True
    landlock: bool = True
    pids_cgroup: bool = True
    preimport: tuple[str, ...] = (
        "typing",
        "math",
        "re",
        "collections",
        "itertools",
        "functools",
        "heapq",
        "string",
    )
    address_space_mb: int | None = None
    read_only_dirs: tuple[str, ...] = ()
    memory_cgroup: bool = True

    def __post_init__(self) -> None:
        if self.isolation not in ("auto", "bwrap", "native", "none"):
            raise ValueError(
                f"isolation must be auto, bwrap, native or none, not {self.isolation!r}"
            )
        if self.isolation == "none" and not self.allow_unsandboxed:
            raise ValueError(
                "isolation 'none' runs untrusted code on this machine with no isolation; "
                "pass allow_unsandboxed=True (on the command line: --unsafe-no-sandbox)"
            )
        for name in ("memory_mb", "file_size_mb", "open_files", "max_processes", "output_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.address_space_mb is not None and self.address_space_mb < self.memory_mb:
            raise ValueError("address_space_mb must be >= memory_mb")
        for path in self.read_only_dirs:
            if not os.path.isabs(path) or os.path.normpath(path) in ("/", "/tmp"):  # noqa: S108
                raise ValueError(f"read_only_dirs: {path!r} must be an absolute directory")


class Opaque:
    """An answer that is not plain data, as the harness holds it: the truth the program's value
    had in the sandbox (``bool(value)``, computed there) and its type's name, nothing else.

    ``bool()`` is its one meaningful operation. Equality is identity, so it equals nothing a
    check can write (``== "Found a match!"`` and ``is None`` are false, as for the ``re.Match``
    it stands for); ordering, arithmetic, iteration and ``len`` raise ``TypeError`` as on a bare
    ``object``, and hashing is by identity. Nothing of the program's is kept or ever called.
    """

    __slots__ = ("_truth", "type_name")

    def __init__(self, truth: bool, type_name: str) -> None:
        self._truth = truth
        self.type_name = type_name

    def __bool__(self) -> bool:
        return self._truth

    def __repr__(self) -> str:
        return f"<opaque {self.type_name} answer, {'true' if self._truth else 'false'}>"


@dataclass
class CallResult:
    """What one function call in the sandbox came to.

    Attributes:
        status: ``ok`` (``value`` is the return value), ``raised`` (the function or the program
            raised; ``exception`` names it), ``exited`` (the process ended without a result),
            ``timeout``, ``output_limit``, ``violation`` (a forbidden system call), ``crashed``,
            ``memory``, ``bad_value`` (the return value is not plain data), ``bad_record`` (the
            result record is malformed or duplicated), ``missing_entry``, ``sandbox_error``
            (the sandbox failed, not the program).
        value: The returned value, rebuilt from plain data (only when ``status == "ok"``).
        exception: The raised exception's class name.
        builtin_exception: Whether that class is a builtin one (and derives from ``Exception``).
        error: A human-readable account when ``status != "ok"``.
        elapsed_s: Time the call ran (for the first call of a session, with loading the program).
        cpu_s: CPU time the session used for the call, as the kernel counts it (for the first
            call, with running the program's module code; 0.0 where it cannot be read).
        fingerprint: The exact encoding of the answer (value or exception), to tell whether two
            calls answered identically.
        during_load: The exception came from running the program, before any call.
        opaque: For ``bad_value``, the answer's truth and type name (``Opaque``), when the
            program gave them; a check may receive it where call cases fail the answer.

    What a function prints is not collected: only its return value is its answer.
    """

    status: str
    value: Any = None
    exception: str | None = None
    builtin_exception: bool = False
    error: str = ""
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    fingerprint: bytes = b""
    during_load: bool = False
    opaque: Opaque | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class RunResult:
    """What one run of a whole program (stdin in, stdout out) came to.

    Attributes:
        status: ``exited`` (see ``exit_code``), ``timeout`` (the wall-clock deadline),
            ``cpu_limit`` (the CPU-time limit), ``output_limit``, ``violation``, ``crashed``,
            ``memory``, ``sandbox_error``.
        exit_code: The exit status when ``status == "exited"``.
        stdout / stderr: What it printed (decoded as UTF-8, capped).
        error: A human-readable account of anything but a clean exit.
        elapsed_s: Time the run took.
        cpu_s: CPU time of the run (its process tree's, as far as the sandbox can see it: all
            of it in a private PID namespace).
        maxrss_kb: Peak resident memory of the run's main process.
        files: For a build, the files it made that are kept for the runs.
    """

    status: str
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    error: str = ""
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    maxrss_kb: int = 0
    files: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExecLimits:
    """The memory limits of one ``exec`` task (each ``None``: the sandbox's own).

    Attributes:
        as_mb: Address space (``RLIMIT_AS``): right for C, C++, Rust, Python.
        data_mb: Private writable memory (``RLIMIT_DATA``): for runtimes that reserve far more
            address space than they use (a JVM, Go, V8), where an address-space cap would
            refuse a correct program at start.
        stack_mb: The main thread's stack (``RLIMIT_STACK``; deep recursion needs it); 0:
            unlimited (bounded by the other limits, as problemtools runs programs).
        task_mb: What all the task's processes may use together, shared and anonymous mappings
            and the files they write included (the sandbox's memory cgroup); None: its largest
            limit. A runtime capped by ``data_mb`` reserves more than it keeps resident: its
            task limit is what it may really use.
    """

    as_mb: int | None = None
    data_mb: int | None = None
    stack_mb: int | None = None
    task_mb: int | None = None

    def header(self) -> dict[str, int]:
        return {
            k: v
            for k, v in (
                ("as_mb", self.as_mb),
                ("data_mb", self.data_mb),
                ("stack_mb", self.stack_mb),
            )
            if v is not None
        }

    def total_mb(self, default_mb: int) -> int:
        """What the task may use in all, all its processes together (the sandbox's memory
        cgroup): ``task_mb``, else its largest limit, else ``default_mb``."""
        return self.task_mb or max(self.as_mb or 0, self.data_mb or 0) or default_mb


@dataclass
class _Reply:
    header: dict[str, Any]
    blob: bytes


_SIGNAL_STATUS = {
    "SIGSYS": ("violation", "made a system call the sandbox forbids (killed by seccomp)"),
    "SIGXCPU": ("timeout", "used up its CPU-time limit"),
    "SIGXFSZ": ("violation", "wrote a file over the size limit"),
    "SIGKILL": ("crashed", "was killed (CPU-time or memory limit)"),
}


def _signal_outcome(name: str) -> tuple[str, str]:
    return _SIGNAL_STATUS.get(name, ("crashed", f"crashed ({name})"))


class _Ended(Exception):
    """A session stopped answering: ``how`` is ``timeout``, ``exited``, ``output_limit`` or
    ``setup_failed``."""

    def __init__(self, how: str, said: bytes = b"") -> None:
        super().__init__(how)
        self.how = how
        self.said = said


class _Channel:
    """The harness's ends of one call session's pipes (the session holds the others), and the
    session's CPU-time clock.

    Everything read here comes from the program's process: reads are capped and bounded by the
    deadline and the CPU-time limit, and a record is only ever parsed by ``_answer``.
    """

    __slots__ = (
        "answered", "buffer", "host_pid", "loaded", "outbox", "ready", "requests", "responses",
    )  # fmt: skip

    def __init__(self, requests: int, responses: int, host_pid: int) -> None:
        self.requests = requests
        self.responses = responses
        self.host_pid = host_pid  # 0: the session's CPU time cannot be read here
        self.buffer = bytearray()
        self.outbox = bytearray()  # requests not yet taken by the pipe
        self.answered = 0  # calls answered in this session: the index the next record must carry
        self.ready = False  # the session confirmed its confinement
        self.loaded = False  # and ran the program's module code
        os.set_blocking(requests, False)
        os.set_blocking(responses, False)

    def cpu(self) -> float:
        """The session's CPU time so far (0.0 when it cannot be read: the session is gone, or
        its PID is not known here)."""
        if not self.host_pid:
            return 0.0
        return process_cpu(self.host_pid) or 0.0

    def close(self) -> None:
        for fd in (self.requests, self.responses):
            with contextlib.suppress(OSError):
                os.close(fd)

    def send(self, data: bytes) -> None:
        """Queue requests: what the pipe takes now is written at once, the rest while reading
        (a session answers as it reads, so a request larger than the pipe, written whole before
        any answer is read, would leave both sides waiting on full pipes)."""
        self.outbox += data
        self.flush()

    def flush(self) -> None:
        """Write what the request pipe takes without waiting."""
        while self.outbox:
            try:
                written = os.write(self.requests, self.outbox[: 1 << 16])
            except BlockingIOError:
                return
            except OSError:
                raise _Ended("exited") from None
            del self.outbox[:written]

    def read(
        self, size: int, deadline: float, cap: int, watch: Callable[[], None] | None = None
    ) -> bytes:
        """``size`` bytes from the session; ``_Ended`` when it ends, runs past ``deadline`` (the
        wall clock) or, checked every ``_CPU_WATCH_S`` by ``watch``, past its CPU time."""
        buffer = self.buffer
        while len(buffer) < size:
            if len(buffer) > cap:
                raise _Ended("output_limit")
            try:
                chunk = os.read(self.responses, 1 << 16)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Ended("timeout") from None
                if watch is not None:
                    left = min(left, _CPU_WATCH_S)
                writers = [self.requests] if self.outbox else []
                readable, writable, _ = select.select([self.responses], writers, [], left)
                if writable:
                    self.flush()
                if not readable and not writable and watch is not None:
                    watch()
                continue
            if not chunk:  # the session is gone
                raise _Ended("exited" if self.ready else "setup_failed", bytes(buffer))
            buffer += chunk
        out = bytes(buffer[:size])
        del buffer[:size]
        return out

    def record(self, deadline: float, cap: int, watch: Callable[[], None] | None = None) -> bytes:
        (length,) = RECORD.unpack(self.read(RECORD.size, deadline, cap, watch))
        if length > cap:
            raise _Ended("output_limit")
        return self.read(length, deadline, cap, watch)


class _CpuLimits:
    """A call's limit and the calls' budget, in the session's CPU time; the wall clock is only
    their backstop (``wall_backstop_s``), so a loaded machine never turns an answer into a
    time-out. Where the session's clock cannot be read, both are wall-clock deadlines."""

    def __init__(
        self,
        channel: _Channel,
        limit_s: float,
        budget_s: float,
        per_call: list[float] | None = None,
    ) -> None:
        self.channel = channel
        self.default_s = limit_s
        self.limit_s = limit_s
        self.per_call = per_call or []
        self.index = 0  # the call being answered
        self.budget_s = budget_s
        self.counted = bool(channel.host_pid)
        now = time.monotonic()
        self.start_cpu = self.mark_cpu = channel.cpu() if self.counted else 0.0
        self.last = now + (wall_backstop_s(budget_s) if self.counted else budget_s)
        self.started = now
        self.deadline = now
        self.next_call(now)

    def next_call(self, now: float) -> None:
        """A new call starts counting now (with its own limit, when each has one)."""
        self.started = now
        index = self.index
        self.limit_s = self.per_call[index] if index < len(self.per_call) else self.default_s
        wall = wall_backstop_s(self.limit_s) if self.counted else self.limit_s
        self.deadline = min(now + wall, self.last)
        if self.counted:
            self.mark_cpu = self.channel.cpu()

    def watch(self) -> None:
        """``_Ended("timeout")`` once the call's CPU time is used up, ``_Ended("budget")`` once
        the calls' is."""
        used = self.channel.cpu()
        if used - self.mark_cpu >= self.limit_s:
            raise _Ended("timeout")
        if used - self.start_cpu >= self.budget_s:
            raise _Ended("budget")

    def used(self) -> float:
        """The CPU time the current call has used so far."""
        return max(0.0, self.channel.cpu() - self.mark_cpu) if self.counted else 0.0


class CallStream:
    """Calls sent to a program's session as one request, their answers read one by one.

    ``next`` returns the next call's result, or None when every answer has been read or the
    session ended (the result of the call that ended it is the last one). ``close`` ends the
    session when answers are still owed: nothing unread may leak into the next call.
    """

    def __init__(
        self,
        program: Program,
        calls: list[tuple[Any, dict[str, Any]]],
        timeout_s: float,
        budget_s: float | None,
        cap: int | None = None,
        limits: list[float] | None = None,
    ) -> None:
        self._program = program
        self._timeout_s = timeout_s
        self._queued: list[CallResult] = []
        self._owed = 0
        self._channel: _Channel | None = None
        problem = program._usable()
        if problem is None and program.entry_point is None:
            problem = "the program was loaded without an entry point"
        if problem is not None:
            self._queued.append(CallResult("sandbox_error", error=problem))
            return
        # one frame per call, however many are sent at once: what the session reads for a call
        # is the same whether the call came alone or ahead of others
        request = b"".join(
            request_frame({"calls": [[encode_value(list(a)), encode_value(dict(k))]]})
            for a, k in calls
        )
        channel = program._session()
        if isinstance(channel, str):
            self._queued.append(CallResult("sandbox_error", error=f"no call session: {channel}"))
            return
        self._cap = max(cap or 0, program.sandbox.config.output_bytes)
        if limits is not None and len(limits) != len(calls):
            raise ValueError("one limit per call")
        per_call = list(limits) if limits is not None else []
        budget = budget_s if budget_s is not None else sum(per_call) or timeout_s * len(calls)
        self._limits = _CpuLimits(channel, timeout_s, budget, per_call)
        try:
            failure = program._loaded(channel, self._limits)
            if failure is not None:
                self._queued.append(failure)
                return
            channel.send(request)
        except _Ended as ended:
            self._queued.append(self._ended(ended))
            return
        self._channel = channel
        self._owed = len(calls)

    def _ended(self, ended: _Ended) -> CallResult:
        self._owed = 0
        used = self._limits.used()
        status = self._program._end()
        if self._program._usable() is not None:  # the sandbox died under the call
            return CallResult("sandbox_error", error="the sandbox stopped")
        elapsed = time.monotonic() - self._limits.started
        limit = self._limits.limit_s
        result = _ended_result(ended, status, limit, elapsed, counted=self._limits.counted)
        return replace(result, cpu_s=used)

    @property
    def owed(self) -> int:
        """Answers not read yet."""
        return len(self._queued) + self._owed

    def next(self) -> CallResult | None:
        """The next call's result, or None when there is none left."""
        if self._queued:
            return self._queued.pop(0)
        channel = self._channel
        if self._owed == 0 or channel is None:
            return None
        limits = self._limits
        watch = limits.watch if limits.counted else None
        try:
            record = channel.record(limits.deadline, self._cap, watch)
        except _Ended as ended:
            return self._ended(ended)
        now = time.monotonic()
        result = _answer(record, now - limits.started, call=channel.answered)
        result.cpu_s = limits.used()
        channel.answered += 1
        self._owed -= 1
        if result.status == "bad_record":  # forged or repeated: the stream is not ours
            self._owed = 0
            self._program._end()
        limits.index += 1
        limits.next_call(now)
        return result

    def close(self) -> None:
        """Stop reading: end the session if it still owes answers."""
        self._queued.clear()
        if self._owed:
            self._owed = 0
            if self._program._channel is self._channel:
                self._program._end()


class Program:
    """A program for the sandbox: call its function, or run it whole; then ``close``.

    Calls run in a *session*: one fresh process, forked from the zygote's root as soon as the
    program is loaded (and again at each ``reset``), that receives the program itself, compiles
    and runs it once and then answers calls until the session ends (``reset``, ``close``, or a
    call that ends it: a timeout, a crash, an exit). The harness talks to the session directly;
    the root only forks and kills, and never sees the program. ``reset`` before every call gives
    each call a process of its own. A program loaded without an entry point is held by a
    supervisor of its own, and each ``run`` is a fresh process there. Nothing one process
    leaves behind (globals, files, processes) reaches the next.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        source: str,
        entry_point: str | None,
        *,
        limits: dict[str, Any],
        error: str | None = None,
        code: bytes = b"",
    ) -> None:
        self.sandbox = sandbox
        self.source = source
        self.entry_point = entry_point
        self.error = error
        """Why the program does not compile (a syntax error's message), or None."""
        self._code = code  # compiled here, marshalled: what each session runs
        self._limits = limits
        self._channel: _Channel | str | None = None
        self._generation = sandbox._generation
        self._load = sandbox._loads

    def _current(self) -> bool:
        return self._generation == self.sandbox._generation and self._load == self.sandbox._loads

    def _usable(self) -> str | None:
        if self.error is not None:
            return f"the program did not compile: {self.error}"
        if self._generation != self.sandbox._generation or not self.sandbox.running:
            return "the sandbox stopped since this program was loaded"
        if self._load != self.sandbox._loads:
            # one program at a time: a session of an older one was killed when this one came
            return "another program was loaded in this sandbox since (it holds one at a time)"
        return None

    def _session(self) -> _Channel | str:
        """The current session, started (and sent its limits and program) when there is none."""
        if self._channel is None:
            self._channel = self.sandbox._session(self)
        channel = self._channel
        if isinstance(channel, str):
            self._channel = None
        return channel

    def _read_ready(self, channel: _Channel, deadline: float) -> None:
        """Read the byte a session writes once it is confined, before any of the program runs."""
        if channel.ready:
            return
        try:
            said = channel.read(1, deadline, self.sandbox.config.output_bytes)
        except _Ended as ended:
            if ended.how == "timeout":
                raise _Ended("not_started") from None
            raise
        if said != b"R":
            raise _Ended("setup_failed", bytes(channel.buffer))
        channel.ready = True

    def _loaded(self, channel: _Channel, limits: _CpuLimits) -> CallResult | None:
        """Bring a new session to the point where it answers calls; the failure that stops it
        (a syntax error, the program raising while it loads, no such function), or None."""
        if channel.loaded:
            return None
        watch = limits.watch if limits.counted else None
        try:
            self._read_ready(channel, limits.deadline)
        except _Ended as ended:
            if ended.how != "not_started":
                raise
            # no code of the program runs before the session says "R": a session that never
            # says it is the sandbox's failure, never the program's timeout
            self._end()
            return CallResult(
                "sandbox_error",
                error="the call session did not start (no code of the program had run)",
            )
        loaded = channel.record(limits.deadline, self.sandbox.config.output_bytes, watch)
        if loaded != b'{"status":"loaded"}':  # the program raised, or lacks the function
            used = limits.used()
            self._end()
            return replace(_load_failure(loaded, time.monotonic() - limits.started), cpu_s=used)
        channel.loaded = True
        return None

    def call(
        self,
        args: list[Any] | tuple[Any, ...],
        kwargs: dict[str, Any] | None = None,
        *,
        timeout_s: float,
    ) -> CallResult:
        """Call the program's function with plain-data arguments.

        The function gets its own copies: whatever it does to them stays in the sandbox.

        Args:
            args: Plain data (``PlainDataError`` otherwise).
            kwargs: Plain data (``PlainDataError`` otherwise).
            timeout_s: CPU-time limit of this call (of running the program's module code too,
                when the call is the session's first), with a wall-clock backstop.
        """
        return self.call_many([(args, kwargs or {})], timeout_s=timeout_s)[0]

    def call_many(
        self,
        calls: list[tuple[Any, dict[str, Any]]],
        *,
        timeout_s: float,
        budget_s: float | None = None,
        cap: int | None = None,
        limits: list[float] | None = None,
    ) -> list[CallResult]:
        """Several calls, in order, in the current session, sent as one request.

        Each call has its own ``timeout_s`` (or its entry of ``limits``), and all of them
        together ``budget_s`` (if given), all in the session's CPU time. The list stops at the
        first call that ends the session (a timeout, a crash, an exit): shorter than ``calls``
        when that happens.
        """
        stream = self.stream(calls, timeout_s=timeout_s, budget_s=budget_s, cap=cap, limits=limits)
        results = []
        while (result := stream.next()) is not None:
            results.append(result)
        return results

    def stream(
        self,
        calls: list[tuple[Any, dict[str, Any]]],
        *,
        timeout_s: float,
        budget_s: float | None = None,
        cap: int | None = None,
        limits: list[float] | None = None,
    ) -> CallStream:
        """Send several calls as one request now and read their answers one at a time, as the
        caller needs them (``CallStream.next``): the session computes each answer while the
        caller is still looking at the previous one. Limits as in ``call_many``; ``cap`` raises
        the largest answer accepted above the sandbox's ``output_bytes`` (an expected answer
        may be larger).

        Raises:
            PlainDataError: an argument is not plain data (nothing was sent).
        """
        return CallStream(self, calls, timeout_s, budget_s, cap, limits)

    def _end(self) -> int | None:
        """End the session; its wait status (how it died)."""
        channel, self._channel = self._channel, None
        if isinstance(channel, _Channel):
            channel.close()
        if not self._current():
            return None
        try:
            return self.sandbox._kill_current()
        except SandboxError:
            return None

    def reset(self) -> None:
        """End the current session and start the next: the next call runs in a fresh process."""
        if self._usable() is None and self.sandbox.running:
            channel, self._channel = self._channel, None
            if isinstance(channel, _Channel):
                channel.close()
            self._channel = self.sandbox._session(self)

    def run(
        self,
        stdin: str | bytes,
        *,
        timeout_s: float,
        cpu_s: float | None = None,
        output_bytes: int | None = None,
    ) -> RunResult:
        """Run the program as ``__main__`` in a fresh process with ``stdin``; stdout and stderr
        come back (each capped). With ``cpu_s`` the run is stopped at that much CPU time
        (``cpu_limit``) and ``timeout_s`` is only its wall-clock backstop; ``output_bytes`` caps
        each stream (default the sandbox's)."""
        problem = self._usable()
        if problem is not None:
            return RunResult("sandbox_error", error=problem)
        if self.entry_point:
            return RunResult("sandbox_error", error="a program loaded for calls is not run whole")
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        header: dict[str, Any] = {"op": "run", "timeout_s": timeout_s}
        if cpu_s is not None:
            header["cpu_s"] = cpu_s
        if output_bytes is not None:
            header["output_bytes"] = int(output_bytes)
        return self.sandbox._task(header, data, timeout_s, self.sandbox.config.memory_mb)

    def close(self) -> None:
        """Let go of the program's session. The root ends it when the next program is loaded,
        or at ``unload``: no round trip is spent on it here."""
        channel, self._channel = self._channel, None
        if isinstance(channel, _Channel):
            channel.close()

    def unload(self) -> None:
        """End any session or supervisor of the program now."""
        self.close()
        if self._current() and self.sandbox.running:
            with contextlib.suppress(SandboxError):
                self.sandbox._kill_current()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ended_result(
    ended: _Ended, status: int | None, timeout_s: float, elapsed: float, *, counted: bool
) -> CallResult:
    """The result of a call during which the session stopped answering."""
    if ended.how == "setup_failed":
        said = _text(ended.said[-500:]).strip()
        return CallResult("sandbox_error", error=f"the call session could not start: {said}")
    if ended.how == "timeout":
        limit = f"{timeout_s:g} s of CPU time" if counted else f"{timeout_s:g} s deadline"
        return CallResult(
            "timeout", error=f"ran past its {limit} and was killed", elapsed_s=elapsed
        )
    if ended.how == "budget":
        return CallResult(
            "timeout", error="the program's time budget ran out during the call", elapsed_s=elapsed
        )
    if ended.how == "output_limit":
        return CallResult(
            "output_limit",
            error="answered with more than the output limit and was killed",
            elapsed_s=elapsed,
        )
    if status is not None and os.WIFSIGNALED(status):
        kind, why = _signal_outcome(signal.Signals(os.WTERMSIG(status)).name)
        return CallResult(kind, error=why, elapsed_s=elapsed)
    code = os.WEXITSTATUS(status) if status is not None else None
    return CallResult(
        "exited",
        error=f"the process exited (status {code}) without returning a result",
        elapsed_s=elapsed,
    )


def _streams(reply: _Reply, count: int) -> list[bytes]:
    lens = reply.header.get("lens")
    if (
        not isinstance(lens, list)
        or len(lens) != count
        or not all(type(n) is int and n >= 0 for n in lens)
        or sum(lens) != len(reply.blob)
    ):
        raise SandboxError("the sandbox sent a malformed task report")
    out, start = [], 0
    for n in lens:
        out.append(reply.blob[start : start + n])
        start += n
    return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _ended(header: dict[str, Any], timeout_s: float) -> tuple[str, str] | None:
    """The status of a task that did not end with an answer (None when it did)."""
    how = header.get("how")
    if how in ("spawn_failed", "not_loaded"):
        return "sandbox_error", f"the sandbox could not start the task ({how})"
    if how == "timeout":
        return "timeout", f"ran past its {timeout_s:g} s deadline and was killed"
    if how == "output_limit":
        return "output_limit", "wrote more than the output limit and was killed"
    if how == "cpu_limit" or header.get("signal") == "SIGXCPU":
        return "cpu_limit", "used up its CPU-time limit and was killed"
    if "signal" in header:
        return _signal_outcome(str(header["signal"]))
    return None


def _answer(blob: bytes, elapsed: float, *, call: int | None = None) -> CallResult:
    """A call's answer record, validated and rebuilt into plain data.

    ``call`` is the index the record must carry (the session's count of answered calls): the
    harness numbers its records, so one the program writes itself repeats an index, and the
    call it lands on fails as ``bad_record`` instead of taking the forged answer.
    """
    base = CallResult("", elapsed_s=elapsed)
    try:
        record = json.loads(blob)
    except (ValueError, RecursionError):
        return replace(base, status="bad_record", error="the result record is malformed")
    if type(record) is not dict or type(record.get("status")) is not str:
        return replace(base, status="bad_record", error="the result record is malformed")
    if call is not None:
        if record.pop("call", None) != call:
            return replace(
                base, status="bad_record", error="a duplicated or out-of-order result record"
            )
        blob = json.dumps(record, separators=(",", ":")).encode()  # the fingerprint, unnumbered
    status = record["status"]
    if status == "ok":
        if set(record) != {"status", "value"}:
            return replace(base, status="bad_record", error="the result record is malformed")
        try:
            value = decode_value(record["value"])
        except (PlainDataError, RecursionError) as exc:
            return replace(base, status="bad_value", error=f"the returned value: {exc}")
        if crowded_within(value):  # a check may build a set of any part of it
            return replace(base, status="bad_value", error=f"the returned value: {_CROWD}")
        return replace(base, status="ok", value=value, fingerprint=blob)
    if status == "raised":
        name = str(record.get("type") or "Exception")[:100]
        message = str(record.get("message") or "")[:1000]
        load = record.get("phase") == "load"
        text = f"{name}: {message}" if message else name
        return replace(
            base,
            status="memory" if name == "MemoryError" else "raised",
            exception=name,
            builtin_exception=bool(record.get("builtin")),
            error=f"raised {text}" + (" while loading the program" if load else ""),
            during_load=load,
            fingerprint=blob,
        )
    if status == "bad_value" and "truth" in record:
        return _opaque_answer(base, record, blob)
    if status in ("bad_value", "missing_entry", "syntax_error"):
        return replace(base, status=status, error=str(record.get("reason") or status)[:2000])
    return replace(base, status="bad_record", error=f"unknown result status {status[:40]!r}")


def _opaque_answer(base: CallResult, record: dict[str, Any], blob: bytes) -> CallResult:
    """A value that is not plain data, sent as its truth and type name: ``bad_value`` with an
    ``Opaque`` for a check. Its fingerprint (truth, type, reason) is what the replay compares."""
    truth, name, reason = record.get("truth"), record.get("type"), record.get("reason")
    if (
        set(record) != {"status", "reason", "truth", "type"}
        or type(truth) is not bool
        or type(name) is not str
        or type(reason) is not str
    ):
        return replace(base, status="bad_record", error="the result record is malformed")
    opaque = Opaque(truth, name[:200])
    return replace(base, status="bad_value", error=reason[:1000], opaque=opaque, fingerprint=blob)


def _load_failure(blob: bytes, elapsed: float) -> CallResult:
    """What a session said instead of "loaded": an exception while loading or a missing
    function; anything else (a value, say, written by the program's module code) is forged."""
    result = _answer(blob, elapsed)
    if (result.status == "raised" and result.during_load) or result.status == "missing_entry":
        return result
    return CallResult(
        "bad_record", error="the session answered before it was asked", elapsed_s=elapsed
    )


def _run_result(reply: _Reply, timeout_s: float) -> RunResult:
    try:
        out, err, ready = _streams(reply, 3)
    except SandboxError as exc:
        return RunResult("sandbox_error", error=str(exc))
    header = reply.header
    files = header.get("image_files")
    base = RunResult(
        "",
        stdout=_text(out),
        stderr=_text(err),
        elapsed_s=_number(header.get("elapsed_s")),
        cpu_s=_number(header.get("cpu_s")),
        maxrss_kb=int(_number(header.get("maxrss_kb"))),
        files=[str(f) for f in files] if isinstance(files, list) else [],
    )
    if ready != b"R" and header.get("how") not in ("spawn_failed", "not_loaded"):
        said = _text(err[-500:]).strip()
        return replace(base, status="sandbox_error", error=f"sandbox setup failed: {said}")
    ended = _ended(header, timeout_s)
    if ended is not None:
        return replace(base, status=ended[0], error=ended[1])
    code = header.get("code")
    if type(code) is not int:
        return replace(base, status="sandbox_error", error="the sandbox sent no exit status")
    error = "" if code == 0 else f"exited with status {code}"
    if code == 0 and header.get("image_error"):
        error = str(header["image_error"])[:500]
    return replace(base, status="exited", exit_code=code, error=error)


def _number(value: Any) -> float:
    return float(value) if type(value) in (int, float) else 0.0


class Executable:
    """What a build in the sandbox made (a binary, class files, a checked script): ``exec`` it.

    ``build`` is the build's own result (a compiler's exit status and messages); ``ok`` says
    whether it succeeded and kept its output. A sandbox holds one program at a time (its
    supervisor keeps the build's output): a later ``load`` or ``build`` in the same sandbox
    makes this handle unusable (``sandbox_error``).
    Each ``exec`` is a fresh process in a scratch directory emptied and refilled with the build's
    output, so no run sees a file another run wrote. ``cached`` says the build was not run again:
    an identical earlier build's output was installed (``Sandbox.build``'s ``cache``).
    """

    def __init__(self, sandbox: Sandbox, build: RunResult, *, cached: bool = False) -> None:
        self.sandbox = sandbox
        self.build = build
        self.cached = cached
        self._generation = sandbox._generation
        self._load = sandbox._loads

    @property
    def ok(self) -> bool:
        return self.build.status == "exited" and self.build.exit_code == 0 and not self.build.error

    @property
    def current(self) -> bool:
        """Whether the sandbox still holds this build (no restart, no later load or build)."""
        box = self.sandbox
        same = (self._generation, self._load) == (box._generation, box._loads)
        return same and box.running

    def exec(  # a method: the command runs inside the sandbox
        self,
        argv: list[str],
        stdin: str | bytes = b"",
        *,
        timeout_s: float,
        cpu_s: float | None = None,
        env: dict[str, str] | None = None,
        limits: ExecLimits | None = None,
        files: dict[str, bytes] | None = None,
        output_bytes: int | None = None,
        run_past_cap: bool = False,
    ) -> RunResult:
        """Execute ``argv`` (an absolute path first) in the scratch directory, on ``stdin``.

        Args:
            timeout_s: Wall-clock deadline; ``cpu_s`` the CPU-time limit of the whole process
                tree (default the same), which stops the run as ``cpu_limit``.
            env: The whole environment of the process (nothing else is passed on).
            limits: Its memory limits.
            files: Extra files written next to the build's output for this run only.
            output_bytes: The cap of stdout and of stderr (default the sandbox's).
            run_past_cap: A stream past its cap is discarded and the run goes on to its end
                or a limit (``output_limit`` only if it ends by itself), as judges let a
                program that writes too much run; else it is stopped at the cap.
        """
        if not self.ok:
            return RunResult("sandbox_error", error="the build did not succeed")
        if not self.current:
            return RunResult(
                "sandbox_error", error="the sandbox holds another program since this build"
            )
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        header = _task_header(argv, timeout_s, cpu_s, env, limits, files)
        header.update(op="exec", stdin_len=len(data))
        if output_bytes is not None:
            header["output_bytes"] = int(output_bytes)
        if run_past_cap:
            header["run_past_cap"] = True
        blob = data + b"".join((files or {}).values())
        total = (limits or ExecLimits()).total_mb(self.sandbox.config.memory_mb)
        return self.sandbox._task(header, blob, timeout_s, total)

    def files(self) -> list[tuple[str, int, bytes]]:
        """What the build kept, as the sandbox holds it: ``(name, mode, bytes)`` per file.

        Raises:
            SandboxError: the build did not succeed, the sandbox holds another program since,
                or it stopped answering.
        """
        if not self.ok or not self.current:
            raise SandboxError("the sandbox no longer holds this build's output")
        box = self.sandbox
        wait_s = _GRACE_S + (box.config.scratch_mb >> 4)  # a large image takes a while
        reply = box._request({"op": "image"}, b"", wait_s, expect="image", max_blob=box._image_cap)
        return _image(reply)


def _image(reply: _Reply) -> list[tuple[str, int, bytes]]:
    """The files of an ``image`` reply, checked (a malformed one is the sandbox failing)."""
    listed = reply.header.get("files")
    if not isinstance(listed, list):
        raise SandboxError("the sandbox sent a malformed image")
    out, start = [], 0
    for item in listed:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and type(item[0]) is str
            and item[0]
            and "/" not in item[0]
            and item[0] not in (".", "..")
            and all(type(n) is int and n >= 0 for n in item[1:])
        ):
            raise SandboxError("the sandbox sent a malformed image")
        name, mode, length = item
        out.append((name, mode & 0o755, reply.blob[start : start + length]))
        start += length
    if start != len(reply.blob):
        raise SandboxError("the sandbox sent a malformed image")
    return out


def _task_header(
    argv: list[str],
    timeout_s: float,
    cpu_s: float | None,
    env: dict[str, str] | None,
    limits: ExecLimits | None,
    files: dict[str, bytes] | None,
) -> dict[str, Any]:
    if not argv or not os.path.isabs(argv[0]):
        raise ValueError(f"the command must start with an absolute path, not {argv[:1]}")
    return {
        "argv": list(argv),
        "timeout_s": timeout_s,
        "cpu_s": cpu_s or timeout_s,
        "env": dict(env or {}),
        "memory": (limits or ExecLimits()).header(),
        "files": [[name, len(data)] for name, data in (files or {}).items()],
    }


@dataclass
class _Launch:
    mode: str
    proc: subprocess.Popen[bytes]
    fd_socket: socket.socket
    ctl_in: int  # the root's commands
    ctl_out: int  # its replies
    cgroup: _launch.PidsCgroup | None
    memory: _launch.MemoryCgroup | None
    scratch_host: str | None
    seccomp_note: str
    hello: dict[str, Any] = field(default_factory=dict)


class Sandbox:
    """A running sandbox: one zygote whose root forks a fresh child per task.

    One sandbox serves one thread at a time (the code grader keeps one per engine worker), and
    one program at a time (loading or building another ends the last one's session or
    supervisor). The sandbox dies with the thread that started it (bubblewrap's
    ``--die-with-parent`` is tied to the starting thread), so start it from a thread that
    outlives its use.

    Examples:
        >>> with Sandbox() as box:  # doctest: +SKIP
        ...     program = box.load("def add(a, b):\\n    return a + b\\n", entry_point="add")
        ...     program.call([1, 2], {}, timeout_s=2).value
        3
    """

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self._launch: _Launch | None = None
        _open.add(self)
        self._buffer = bytearray()
        self._generation = 0
        self._loads = 0  # programs loaded: only the latest one's handle may start sessions
        self._supervised: tuple[int, int] | None = None  # (generation, load) a supervisor serves
        self.starts = 0

    # -- life cycle -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._launch is not None and self._launch.proc.poll() is None

    @property
    def host_pid(self) -> int | None:
        """PID, on the host, of the process the sandbox was started as (bubblewrap, or the
        native launcher); every process of the sandbox descends from it."""
        return self._launch.proc.pid if self._launch is not None else None

    @property
    def mode(self) -> str | None:
        """The isolation in use (``bwrap``, ``native`` or ``none``), once started."""
        return self._launch.mode if self._launch is not None else None

    @property
    def sandboxed(self) -> bool:
        """False when running with no isolation (every result must then say so)."""
        return self.mode in ("bwrap", "native")

    @property
    def hello(self) -> dict[str, Any]:
        """What the zygote reported about itself when it started."""
        return dict(self._launch.hello) if self._launch is not None else {}

    @property
    def details(self) -> dict[str, Any]:
        """Launch facts the layer report needs (mode, cgroups, seccomp note)."""
        launch = self._launch
        if launch is None:
            return {}
        return {
            "mode": launch.mode,
            "cgroup": str(launch.cgroup.path) if launch.cgroup is not None else None,
            "cgroup_max": launch.cgroup.max_pids if launch.cgroup is not None else None,
            "memory_cgroup": str(launch.memory.path) if launch.memory is not None else None,
            "seccomp_note": launch.seccomp_note,
            "host_uid": os.geteuid(),
        }

    def start(self) -> Sandbox:
        """Start the zygote (if not running) in the strongest mode that works here.

        Raises:
            SandboxUnavailable: no allowed mode can start; the message says why for each.
        """
        if self.running:
            return self
        self.close()
        isolation = self.config.isolation
        if isolation == "auto":
            modes = ["bwrap", "native"] + (["none"] if self.config.allow_unsandboxed else [])
        else:
            modes = [isolation]
        failures = []
        for mode in modes:
            try:
                self._launch = self._start(mode)
            except SandboxError as exc:
                failures.append(f"{mode}: {exc}")
                continue
            self._generation += 1
            self.starts += 1
            return self
        hint = (
            "install bubblewrap (apt-get install bubblewrap) or allow user namespaces; "
            "to run untrusted code with no isolation, pass --unsafe-no-sandbox"
        )
        raise SandboxUnavailable(
            "no sandbox could be started here: " + "; ".join(failures) + f". Hint: {hint}"
        )

    def _start(self, mode: str) -> _Launch:
        cfg = self.config
        executable, prefix = _launch.interpreter()
        filters: dict[str, bytes] = {}
        seccomp_note = "disabled by configuration"
        if cfg.seccomp:
            try:
                filters = build_filters()
                seccomp_note = ""
            except SeccompUnavailable as exc:
                seccomp_note = str(exc)
        scratch_host = None
        scratch = _launch.SCRATCH
        if mode == "none":
            scratch_host = _launch.host_scratch()
            scratch = scratch_host
        read_paths = _launch.read_paths(executable, prefix, cfg.read_only_dirs)
        hidden = _launch.package_dirs(read_paths, cfg.read_only_dirs)
        if mode == "bwrap" and _launch.bwrap_path() is None:
            raise SandboxError("bubblewrap is not installed (apt-get install bubblewrap)")
        if mode == "native" and cfg.landlock and not landlock_abi():
            # without Landlock the host's files would be readable from the sandbox
            raise SandboxError(
                "the native fallback needs Landlock (Linux >= 5.13, enabled) to confine the "
                "filesystem; install bubblewrap (apt-get install bubblewrap)"
            )
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # the sessions' PIDs
        ctl_r, ctl_in = os.pipe()  # the harness writes commands, the root reads them
        ctl_out, ctl_w = os.pipe()
        memory = _launch.MemoryCgroup.create() if cfg.memory_cgroup and mode != "none" else None
        passed = [theirs.fileno(), ctl_r, ctl_w] + ([memory.procs_fd] if memory else [])
        zconfig = {
            "mode": mode,
            "parent_pid": os.getpid(),
            "fd_socket": theirs.fileno(),
            "ctl_in": ctl_r,
            "ctl_out": ctl_w,
            "cgroup_fd": memory.procs_fd if memory is not None else -1,
            "scratch": scratch,
            "scratch_mb": cfg.scratch_mb,
            "inner_uid": cfg.uid,
            "inner_gid": cfg.gid,
            "limits": {
                "memory_mb": cfg.memory_mb,
                "file_size_mb": cfg.file_size_mb,
                "open_files": cfg.open_files,
                "max_processes": cfg.max_processes,
                "output_bytes": cfg.output_bytes,
                "address_space_mb": cfg.address_space_mb or cfg.memory_mb,
            },
            "seccomp": {k: base64.b64encode(v).decode() for k, v in filters.items()},
            "landlock": cfg.landlock and mode != "none",
            "read_paths": read_paths,
            "hidden_dirs": hidden,
            "file_rules": _launch.file_rules(),
            "preimport": list(cfg.preimport),
        }
        zygote = [executable, "-I", "-S", "-B", "-c", _BOOTSTRAP, json.dumps(zconfig)]
        if mode == "bwrap":
            cmd = _launch.bwrap_command(
                str(_launch.bwrap_path()),
                uid=cfg.uid,
                gid=cfg.gid,
                scratch_mb=cfg.scratch_mb,
                executable=executable,
                prefix=prefix,
                read_only_dirs=cfg.read_only_dirs,
                hidden_dirs=tuple(hidden),
            )
            cmd += zygote
        else:
            cmd = zygote
        cgroup = _launch.PidsCgroup.create(cfg.max_processes + 8) if cfg.pids_cgroup else None
        if cgroup is not None:
            cmd = cgroup.wrap(cmd)

        def undo() -> None:
            for fd in (ctl_in, ctl_out):
                os.close(fd)
            ours.close()
            if cgroup is not None:
                cgroup.remove()
            if memory is not None:
                memory.remove()
            if scratch_host is not None:
                shutil.rmtree(scratch_host, ignore_errors=True)

        with tempfile.TemporaryFile() as errors:  # what the sandbox says if it cannot start
            try:
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    start_new_session=True,
                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                    cwd="/",
                    bufsize=0,
                    pass_fds=tuple(passed),
                )
            except OSError as exc:
                undo()
                raise SandboxError(f"cannot start: {exc}") from None
            finally:
                theirs.close()
                os.close(ctl_r)
                os.close(ctl_w)
            launch = _Launch(
                mode, proc, ours, ctl_in, ctl_out, cgroup, memory, scratch_host, seccomp_note
            )
            self._launch = launch
            self._buffer.clear()
            try:
                deadline = time.monotonic() + _START_TIMEOUT_S
                self._send(_zygote_blob(), deadline)
                reply = self._receive(deadline)
                if reply.header.get("op") != "hello":
                    raise SandboxError("the sandbox did not introduce itself")
            except SandboxError as exc:
                errors.seek(0)
                said = errors.read()[-2000:].decode("utf-8", "replace").strip()
                self._kill()
                raise SandboxError(said or str(exc)) from None
        if cgroup is not None and not cgroup.holds(proc.pid):
            launch.cgroup = None  # not joined after all: report no cgroup, rather than assume one
            cgroup.remove()
        if memory is not None and not reply.header.get("task_cgroup"):
            launch.memory = None  # the tasks could not join it: report none
            memory.remove()
        launch.hello = reply.header
        return launch

    def close(self) -> None:
        """Stop the zygote and everything in the sandbox; safe to call twice."""
        self._kill()

    def _kill(self) -> None:
        launch, self._launch = self._launch, None
        if launch is None:
            return
        proc = launch.proc
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for stream in (proc.stdin, proc.stdout, launch.fd_socket):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        for fd in (launch.ctl_in, launch.ctl_out):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        for group in (launch.cgroup, launch.memory):
            if group is None:
                continue
            for _ in range(100):  # the processes of a killed sandbox take a moment to go
                group.remove()
                if not group.path.exists():
                    break
                time.sleep(0.01)
        if launch.scratch_host is not None:
            shutil.rmtree(launch.scratch_host, ignore_errors=True)
        self._buffer.clear()
        self._supervised = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- programs ---------------------------------------------------------------------------------

    def load(
        self, source: str, *, entry_point: str | None = None, session_cpu_s: float = 60.0
    ) -> Program:
        """A handle for ``source``: with an entry point, a function to call (the first call
        session starts at once, and compiles and runs the program in the background); without
        one, a program to run whole, compiled by a supervisor of its own.

        A program that does not compile comes back with ``error`` set (a syntax error is the
        program's failure, not the sandbox's).

        Args:
            source: The program.
            entry_point: The function ``call`` calls (None for a program only ``run``).
            session_cpu_s: CPU-time limit of each call session.

        Raises:
            SandboxError: the sandbox could not be started or stopped answering.
        """
        self.start()
        self._loads += 1  # whatever happens, the previous program's session or supervisor ends
        limits = {"cpu_s": session_cpu_s, "as_mb": self.config.memory_mb}
        if entry_point:
            # compiled here, once, and sent to each session ready to run: compiling in every
            # session would cost it the copy of every page the compiler touches. Nothing of
            # the program runs here; the response was parsed here already (its tells)
            try:
                code = compile(source, "<solution>", "exec", dont_inherit=True)
            except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
                why = f"{type(exc).__name__}: {exc}"[:2000]
                return Program(self, source, entry_point, limits=limits, error=why)
            program = Program(self, source, entry_point, limits=limits, code=marshal.dumps(code))
            program._session()
            return program
        self._supervise()
        data = source.encode("utf-8", "surrogatepass")
        reply = self._request({"op": "load"}, data, _GRACE_S + 30, expect="load")
        error = None if reply.header.get("ok") is True else str(reply.header.get("error"))[:2000]
        return Program(self, source, None, limits=limits, error=error)

    def build(
        self,
        files: dict[str, bytes],
        argv: list[str] | None,
        *,
        keep: list[str],
        timeout_s: float,
        cpu_s: float | None = None,
        env: dict[str, str] | None = None,
        limits: ExecLimits | None = None,
        cache: BuildCache | None = None,
    ) -> Executable:
        """Write ``files`` into an empty scratch directory, run the build command ``argv`` there
        (None: nothing to build) and keep the files it made whose names match a ``keep``
        pattern (``fnmatch``, top level only) for the runs.

        With a ``cache``, a build of exactly the same inputs as one that succeeded before (in
        any sandbox sharing the cache) is not run again: its output is installed instead, and
        the handle says ``cached``. Why that is safe: ``truegrade.sandbox._buildcache``.

        Raises:
            SandboxError: the sandbox could not be started or stopped answering.
        """
        self.start()
        self._loads += 1  # the previous program's supervisor ends, whatever the outcome
        if argv:
            header = _task_header(argv, timeout_s, cpu_s, env, limits, files)
        else:
            header = {"files": [[n, len(d)] for n, d in files.items()], "timeout_s": timeout_s}
        header.update(op="build", keep=list(keep), image_bytes=self._image_cap)
        total = (limits or ExecLimits()).total_mb(self.config.memory_mb)
        if cache is None:
            return self._build(header, files, timeout_s, total)
        key = build_key(
            sandbox=f"{self.mode} {self.config!r}", files=files, argv=argv, keep=keep, header=header
        )
        hit = cache.claim(key, wait_s=timeout_s + _GRACE_S)
        if hit is not None:
            return self._install(hit)
        kept = None
        try:
            built = self._build(header, files, timeout_s, total)
            if built.ok:
                kept = CachedBuild(built.build, tuple(built.files()))
            return built
        finally:
            cache.finish(key, kept)

    @property
    def _image_cap(self) -> int:
        """The largest image a build may keep: what the scratch directory can hold."""
        return self.config.scratch_mb << 20

    def _build(
        self, header: dict[str, Any], files: dict[str, bytes], timeout_s: float, total_mb: int
    ) -> Executable:
        self._supervise()
        result = self._task(header, b"".join(files.values()), timeout_s, total_mb)
        if result.status == "sandbox_error":
            raise SandboxError(result.error)
        return Executable(self, result)

    def _install(self, cached: CachedBuild) -> Executable:
        """Hand a new supervisor a kept build's output, as if it had just built it."""
        self._supervise()
        header = {"op": "install", "files": [[n, m, len(d)] for n, m, d in cached.files]}
        blob = b"".join(data for _, _, data in cached.files)
        wait_s = _GRACE_S + (self.config.scratch_mb >> 4)
        result = self._task(header, blob, wait_s, None)
        if result.status != "exited" or result.exit_code != 0:
            raise SandboxError(result.error or "the sandbox did not take a cached build")
        return Executable(self, cached.result, cached=True)

    def _task(
        self, header: dict[str, Any], blob: bytes, timeout_s: float, total_mb: int | None
    ) -> RunResult:
        """Run one task of the program the supervisor holds; its result. ``total_mb`` is what
        all the task's processes together may use (the sandbox's memory cgroup): past it the
        kernel kills one of them, and the task ran out of memory."""
        memory = self._launch.memory if self._launch is not None else None
        kills = 0
        try:
            if memory is not None and total_mb is not None:
                memory.set_limit(total_mb)
                kills = memory.oom_kills()
            reply = self._request(header, blob, timeout_s + _GRACE_S, expect="done")
        except (SandboxError, OSError) as exc:
            return RunResult("sandbox_error", error=str(exc))
        result = _run_result(reply, timeout_s)
        if memory is not None and total_mb is not None and memory.oom_kills() > kills:
            result = replace(
                result,
                status="memory",
                error=f"ran out of memory: its processes together used {total_mb} MB",
            )
        return result

    # -- the root's commands ---------------------------------------------------------------------

    def _command(self, op: bytes, reply_len: int, wait_s: float = _GRACE_S) -> bytes:
        """One command to the root and its reply; on any failure the sandbox is killed."""
        launch = self._launch
        if launch is None or not self.running:
            raise SandboxError("the sandbox is not running")
        deadline = time.monotonic() + wait_s
        try:
            os.write(launch.ctl_in, op)
            said = b""
            while len(said) < reply_len:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([launch.ctl_out], [], [], left)[0]:
                    raise SandboxError("the sandbox stopped answering (killed and restarted)")
                chunk = os.read(launch.ctl_out, reply_len - len(said))
                if not chunk:
                    raise SandboxError("the sandbox exited unexpectedly")
                said += chunk
        except (SandboxError, OSError) as exc:
            self._kill()
            raise SandboxError(str(exc)) from None
        return said

    def _supervise(self) -> None:
        """A fresh supervisor for the program just loaded (the last one's, and anything it ran,
        gone first)."""
        if self._command(b"P", 1) != b"p":
            raise SandboxError("the sandbox could not start a supervisor")
        self._supervised = (self._generation, self._loads)

    def _kill_current(self) -> int | None:
        """End the current session or supervisor; how it died, as a wait status (None when
        there was none, or it is not known)."""
        code: int
        value: int
        code, _, _, _, value = _REPORT.unpack(self._command(b"K", _REPORT.size))
        if code == _CLD_EXITED:
            return (value & 0xFF) << 8
        if code in (_CLD_KILLED, _CLD_DUMPED):
            return (value & 0x7F) | (0x80 if code == _CLD_DUMPED else 0)
        return None

    def _session(self, program: Program) -> _Channel | str:
        """A new call session for ``program`` (the last one's killed), sent its limits and the
        program; or why there is none."""
        try:
            self.start()
            launch = self._launch
            assert launch is not None
            os.write(launch.ctl_in, b"S")
            sock = launch.fd_socket
            sock.settimeout(_GRACE_S)
            size = socket.CMSG_SPACE(2 * 4) + socket.CMSG_SPACE(struct.calcsize("3i"))
            message, ancillary, _, _ = sock.recvmsg(16, size)
        except (OSError, SandboxError) as exc:
            self._kill()
            return f"the sandbox did not hand over a session ({exc})"
        fds = array.array("i")
        host_pid = 0
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                host_pid = struct.unpack("3i", data[:12])[0]
        if message[:1] != b"S" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            if message[:1] == b"F":
                return "the sandbox could not fork a session"
            self._kill()
            return "the sandbox handed over a malformed session"
        if not host_pid and self.mode == "none" and len(message) >= 5:
            host_pid = struct.unpack("i", message[1:5])[0]  # unsandboxed: the host's own PID
        channel = _Channel(fds[0], fds[1], host_pid)
        limits = program._limits
        setup = request_frame({"cpu_s": limits["cpu_s"], "as_mb": limits["as_mb"]})
        code = program._code
        # a session already gone is said by the call that reads from it
        with contextlib.suppress(_Ended):
            channel.send(setup + request_frame({"entry": program.entry_point}, code))
        return channel

    # -- the wire ---------------------------------------------------------------------------------

    def _request(
        self,
        header: dict[str, Any],
        blob: bytes,
        wait_s: float,
        *,
        expect: str,
        max_blob: int | None = None,
    ) -> _Reply:
        """Send one frame to the supervisor and read the reply; on any failure the sandbox is
        killed."""
        if not self.running:
            raise SandboxError("the sandbox is not running")
        if self._supervised != (self._generation, self._loads):
            raise SandboxError("no supervisor holds this program")
        deadline = time.monotonic() + wait_s
        try:
            self._send(request_frame(header, blob), deadline)
        except SandboxError:
            self._kill()
            raise
        return self._reply(deadline, expect=expect, max_blob=max_blob)

    def _reply(self, deadline: float, *, expect: str, max_blob: int | None = None) -> _Reply:
        """The next frame on the data pipe, which must be an ``expect`` reply (its bytes at most
        ``max_blob``, by default four output caps); on any failure the sandbox is killed."""
        try:
            reply = self._receive(deadline, max_blob)
        except SandboxError:
            self._kill()
            raise
        if reply.header.get("op") != expect:
            self._kill()
            raise SandboxError(f"the sandbox answered {reply.header.get('op')!r} to a request")
        return reply

    def _pipe(self, stream: Any) -> int:
        if self._launch is None or stream is None:
            raise SandboxError("the sandbox is not running")
        return int(stream.fileno())

    def _send(self, data: bytes, deadline: float) -> None:
        fd = self._pipe(self._launch.proc.stdin if self._launch else None)
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError("the sandbox stopped reading its input")
            _, writable, _ = select.select([], [fd], [], left)
            if writable:
                try:
                    view = view[os.write(fd, view[: 1 << 16]) :]
                except OSError as exc:
                    raise SandboxError(f"the sandbox is gone ({exc.strerror})") from None

    def _fill(self, size: int, deadline: float) -> None:
        fd = self._pipe(self._launch.proc.stdout if self._launch else None)
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError("the sandbox stopped answering (killed and restarted)")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            # what is still missing, at least 64 KiB: a fixed 1 MiB read would map and unmap a
            # fresh MiB for every small reply
            chunk = os.read(fd, max(size - len(self._buffer), 1 << 16))
            if not chunk:
                raise SandboxError("the sandbox exited unexpectedly")
            self._buffer += chunk

    def _receive(self, deadline: float, max_blob: int | None = None) -> _Reply:
        self._fill(_HEAD_BYTES, deadline)
        head_len = int.from_bytes(self._buffer[:4], "big")
        blob_len = int.from_bytes(self._buffer[4:8], "big")
        max_blob = max_blob or 4 * max(self.config.output_bytes, STREAM_BYTES_MAX) + 64
        if head_len > _MAX_HEADER or blob_len > max_blob:
            raise SandboxError("the sandbox sent an oversized frame")
        total = _HEAD_BYTES + head_len + blob_len
        self._fill(total, deadline)
        raw = bytes(self._buffer[_HEAD_BYTES : _HEAD_BYTES + head_len])
        blob = bytes(self._buffer[_HEAD_BYTES + head_len : total])
        del self._buffer[:total]
        try:
            header = json.loads(raw)
        except (ValueError, RecursionError):
            raise SandboxError("the sandbox sent a malformed frame") from None
        if type(header) is not dict:
            raise SandboxError("the sandbox sent a malformed frame")
        return _Reply(header, blob)


_open: weakref.WeakSet[Sandbox] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At exit, stop every sandbox this process started (and remove what it made on the host:
    its cgroups, an unsandboxed run's scratch directory)."""
    for box in list(_open):
        with contextlib.suppress(Exception):
            box.close()
