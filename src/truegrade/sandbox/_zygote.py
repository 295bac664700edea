"""The processes that live inside the sandbox: a root that only forks, call sessions that set
themselves up, and a supervisor per program.

Run as ``python -I -S -B -c <bootstrap>`` inside bubblewrap (or, as the native fallback, building
its own namespaces first): the bootstrap executes this module's code objects, the codec's and the
kernel interfaces' in one namespace; the harness imports them as modules.

Three kinds of process, so that nothing trusted is ever in an ancestor of a program:

* **The root** (PID 1 of a PID namespace of its own, holding ``CAP_SYS_ADMIN`` in a user
  namespace of its own and nothing else) reads one-byte commands from the control pipe and
  forks: a call session (``S``), a supervisor (``P``); ``K`` kills the current child and says
  how it died. It never reads a program, an input, an expected value or an answer: every
  byte of those travels between the harness and the child that needs it, over pipes the root
  hands over, or moves in the kernel (``splice``). It collects dead children into one buffer
  allocated at start (``Reaper``) and gives each child a random PID (``PidChooser``), so its
  memory at every fork is what it was at start up to random numbers: a child learns nothing
  from it about the tasks before it.
* **A call session** is forked from the root and sets itself up from its own request pipe: its
  limits, then its program (the only program it ever sees), which it runs itself;
  then it answers calls, one request at a time. It drops every capability, enforces Landlock,
  its limits and the function allow-list filter before any of the program runs. (The harness
  compiles the program, so a session does not copy every page a compiler touches.)
* **A supervisor** serves one whole program (a Python program run on stdin, a build and the
  runs of what it made) from the data pipe, as PID 1 of a PID and mount namespace of its own:
  each task gets a fresh tmpfs as its scratch directory and a random PID, every process of
  the task is killed and reaped after it, and the tmpfs is unmounted. Inputs and outputs move
  from pipe to file and back in the kernel, never through its memory.

What it must never do: run one line of a program in the root or a supervisor (a supervisor
compiles a Python program, nothing more), import anything outside the standard library, read a
payload into the root, or trust a child to exit.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import fcntl
import gc
import json
import marshal
import math
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __name__ != "__main__":
    # in the sandbox these names come from the codec's and the kernel's code objects, run first
    # in the same namespace
    from truegrade.sandbox._codec import (
        PlainDataError,
        _encode,
        _read_exact,
        _read_request,
        _write_all,
        decode_value,
        encode_value,
        frame,
    )
    from truegrade.sandbox._kernel import (
        CAP_SYS_ADMIN,
        CLONE_NEWCGROUP,
        CLONE_NEWIPC,
        CLONE_NEWNET,
        CLONE_NEWNS,
        CLONE_NEWPID,
        CLONE_NEWUSER,
        CLONE_NEWUTS,
        PR_SET_DUMPABLE,
        PR_SET_NO_NEW_PRIVS,
        PR_SET_PDEATHSIG,
        Filter,
        PidChooser,
        Reaper,
        become_init_of_new_namespaces,
        children_cpu,
        drop_all_capabilities,
        drop_capabilities,
        dumpable,
        landlock_enforce,
        landlock_ruleset,
        make_mounts_private,
        map_ids,
        mount_proc,
        mount_tmpfs,
        namespaces,
        prctl,
        process_cpu,
        read_only_everywhere,
        sethostname,
        splice_exact,
        unmount,
        unshare,
    )

__all__ = ["RECORD", "STREAM_BYTES_MAX", "main"]

RECORD = struct.Struct(">I")
"""The length in front of each record a call session writes."""

#: The most bytes a task's output stream may be given as its cap: a larger ``output_bytes``
#: is held to this.
STREAM_BYTES_MAX = 64 << 20

_HEAD = struct.Struct(">II")
_REQUEST_FD = 3
_RESPONSE_FD = 4
_READY_FD = 3
_RULESET_FD = 5
_CGROUP_FD = 6
_CPU_WATCH_S = 0.02
"""How often a supervisor reads a task's CPU time while it runs (the most a task overruns its
CPU-time limit by)."""
_PID_PROBE = 64
"""PIDs past the highest live one of a task that are probed for new processes."""
_PID_WINDOW = 4096
"""The most PIDs probed at one look (a process that churns through PIDs faster is still held by
the per-process CPU limit, the process limit and the wall-clock backstop)."""


# -- limits ---------------------------------------------------------------------------------------


def _limit_all(limits: dict[str, int]) -> None:
    """The limits every process of the sandbox shares (set once in the root, inherited)."""
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
    without touching), ``stack_mb`` the main thread's stack (0: unlimited, as problemtools runs
    programs: the stack then grows until the address space or the memory runs out, and a new
    thread gets glibc's default of a few megabytes, not a stack the size of the limit)."""
    mib = 1024 * 1024
    for key, name in (
        ("as_mb", resource.RLIMIT_AS),
        ("data_mb", resource.RLIMIT_DATA),
        ("stack_mb", resource.RLIMIT_STACK),
    ):
        value = limits.get(key)
        if key == "stack_mb" and value == 0:
            hard = resource.getrlimit(name)[1]  # unlimited unless the caller's is lower
            resource.setrlimit(name, (hard, hard))
        elif value:
            hard = resource.getrlimit(name)[1]
            want = int(value) * mib
            if hard != resource.RLIM_INFINITY:
                want = min(want, hard)
            resource.setrlimit(name, (want, want))


def _limit_cpu(seconds: float) -> None:
    """CPU time is counted per process, so each task gets its own limit: SIGXCPU, then SIGKILL.
    Whole seconds only: the backstop of the process tree's limit, which the supervisor (or, for
    a call, the harness) watches."""
    cpu_s = max(1, math.ceil(seconds) + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))


def _cpu_limit(header: dict[str, Any]) -> float | None:
    value: Any = header.get("cpu_s")
    return float(value) if type(value) in (int, float) and value > 0 else None


def _output_bytes(header: dict[str, Any]) -> int | None:
    """A task's own stream cap (a judge's 8 MiB), never above what a supervisor will hold."""
    value = header.get("output_bytes")
    return min(int(value), STREAM_BYTES_MAX) if type(value) is int and value > 0 else None


# -- a child's confinement (runs after the fork, before any of the program) -----------------------


class Confinement:
    """What every child applies to itself before any of a program runs, built once in the root
    so that applying it allocates nothing: no capabilities, Landlock, the memory cgroup of
    tasks (a supervisor's children), the task's limits, and its seccomp filter."""

    def __init__(self, filters: dict[str, Filter], ruleset: int, cgroup: int) -> None:
        self.filters = filters
        self.ruleset = ruleset
        self.cgroup = cgroup

    def with_ruleset(self, ruleset: int) -> Confinement:
        """The same, with another Landlock ruleset (a supervisor's, for its task's scratch)."""
        return Confinement(self.filters, ruleset, self.cgroup)

    def slots(self) -> dict[int, int]:
        """The descriptors a child keeps until it has applied the confinement."""
        placed = {}
        if self.ruleset >= 0:
            placed[_RULESET_FD] = self.ruleset
        if self.cgroup >= 0:
            placed[_CGROUP_FD] = self.cgroup
        return placed

    def apply(
        self, kind: str, memory: dict[str, Any], cpu_s: float | None, *, cgroup: bool
    ) -> None:
        """In a child that has placed its descriptors (``place``): confine it for good."""
        drop_all_capabilities()
        if self.cgroup >= 0:
            if cgroup:  # the whole process tree of a task shares one memory limit
                os.write(_CGROUP_FD, b"0")
            os.close(_CGROUP_FD)
        if self.ruleset >= 0:
            landlock_enforce(_RULESET_FD)
            os.close(_RULESET_FD)
        _limit_memory(memory)
        if cpu_s is not None:
            _limit_cpu(cpu_s)
        chosen = self.filters.get(kind)
        if chosen is not None:
            chosen.install()


def place(placed: dict[int, int], *, orphan_guard: bool) -> None:
    """Own process group; ``placed`` maps each descriptor the child keeps to its source; every
    other descriptor is closed (the standard streams stay as they are unless placed: the
    zygote's are ``/dev/null``).

    Without a PID namespace of its own the supervisor's death would not take its children with
    it, so then each child also asks to be killed when its parent dies.
    """
    os.setpgid(0, 0)
    top = max(placed)
    # every source first above the targets, so no dup2 overwrites a source still needed
    high = {t: fcntl.fcntl(src, fcntl.F_DUPFD, top + 1) for t, src in placed.items()}
    for fd in range(3, top + 1):
        with contextlib.suppress(OSError):
            os.close(fd)
    for target, source in high.items():
        os.dup2(source, target)
    os.closerange(top + 1, 1 << 16)
    if orphan_guard:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _setup_failed(fd: int, exc: BaseException) -> None:
    """Report a failed confinement (without the ready byte) and leave; never returns."""
    try:
        os.write(fd, f"sandbox setup failed: {type(exc).__name__}: {exc}".encode())
    finally:
        os._exit(70)


# -- call sessions --------------------------------------------------------------------------------


def _record(data: bytes) -> bytes:
    return RECORD.pack(len(data)) + data


_LOADED = _record(b'{"status":"loaded"}')  # what the harness expects, byte for byte


def _respond(record: dict[str, Any]) -> None:
    """One length-prefixed result record on the response pipe."""
    try:
        data = _encode(record).encode("utf-8")
    except (ValueError, TypeError, RecursionError) as exc:
        data = _encode({"status": "bad_value", "reason": f"cannot encode: {exc}"}).encode()
    _write_all(_RESPONSE_FD, _record(data))


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


def _raised(exc: BaseException, phase: str) -> dict[str, Any]:
    return {
        "status": "raised",
        "phase": phase,
        "type": type(exc).__name__,
        "builtin": type(exc).__module__ == "builtins",
        "message": _describe(exc),
    }


def _session(confinement: Confinement, requests: int, responses: int) -> None:
    """A call session, in the child the root just forked; never returns.

    Before any of the program runs: its descriptors (two pipes, nothing of the root's), its
    limits from the first request, no capabilities, Landlock, the allow-list filter, and the
    ready byte. Then its program, the second request, which it compiles and runs; then the
    calls, one request each.
    """
    gc.enable()  # the root runs without collections; a program gets the usual interpreter
    try:
        place(
            {_REQUEST_FD: requests, _RESPONSE_FD: responses, **confinement.slots()},
            orphan_guard=False,
        )
        setup, _ = _read_request(_REQUEST_FD)
        memory = {"as_mb": setup.get("as_mb")}
        confinement.apply("function", memory, _cpu_limit(setup), cgroup=False)
        os.write(_RESPONSE_FD, b"R")
    except BaseException as exc:
        _setup_failed(_RESPONSE_FD, exc)
    _serve_calls()


def _serve_calls() -> None:
    """Run the program (compiled by the harness) once, then answer calls of its function until
    the harness closes the request pipe or the root kills the session; never returns.

    The program's globals persist from call to call within a session (as in any harness that
    imports a solution once); the harness sends calls in a secret random order, and replays a
    check's calls in another session in another, so a function whose answers depend on that
    state (a call counter) fails.
    """
    try:
        header, blob = _read_request(_REQUEST_FD)
        entry = str(header["entry"])
        code = marshal.loads(blob)  # noqa: S302 - compiled by the harness, the program's own
    except (EOFError, OSError, ValueError, KeyError):
        os._exit(0)
    del header, blob
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
    the call and under its limits, and what it raises is the program's exception. Only a
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


# -- whole programs -------------------------------------------------------------------------------


def _reopen_streams() -> None:
    """Fresh text streams on the new descriptors (the zygote's own were never used)."""
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def _run_program(code: Any) -> None:
    """Run the program as ``__main__`` on its stdin, like ``python program.py``."""
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


_PREIMPORT_ALLOWED = frozenset(
    {
        "abc", "array", "bisect", "calendar", "cmath", "collections", "copy", "dataclasses",
        "datetime", "decimal", "enum", "fractions", "functools", "hashlib", "heapq", "itertools",
        "json", "math", "numbers", "operator", "random", "re", "statistics", "string", "textwrap",
        "typing", "unicodedata",
    }
)  # fmt: skip
"""Standard-library modules a supervisor may import ahead of a Python program that names them,
so each run does not import them again. Chosen by name only from this list: the program picks
which, but only trusted library code runs."""


def _code_names(code: Any, seen: set[str]) -> None:
    seen.update(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            _code_names(const, seen)


def _memfd(name: str) -> int:
    return os.memfd_create(name, os.MFD_CLOEXEC)


class Supervisor:
    """Serves one program's tasks from the data pipe, as PID 1 of its own PID and mount
    namespaces (when the root could give it them): a Python program's runs, or a build and the
    runs of what it made.

    Each task gets a fresh tmpfs as the scratch directory, its process a random PID, and ends
    with every other process of the namespace killed and reaped and the tmpfs unmounted: no
    file, inode number, PID or process of one task reaches the next. The task's stdin, its
    extra files, what it prints and the build's output move between the data pipe, memory
    files and the scratch directory in the kernel (``splice``, ``sendfile``): this process
    holds its program's source (a Python program's, compiled here) and nothing a task sent.
    """

    def __init__(
        self,
        config: dict[str, Any],
        confinement: Confinement,
        pids: PidChooser,
        data_in: int,
        data_out: int,
        *,
        own_namespace: bool,
    ) -> None:
        self.config = config
        self.base = confinement  # the root's, whose ruleset does not reach a fresh tmpfs
        self.confinement = confinement
        self.pids = pids
        self.data_in = data_in
        self.data_out = data_out
        self.own_namespace = own_namespace
        self.limits: dict[str, int] = config["limits"]
        self.output_bytes: int = self.limits["output_bytes"]
        self.scratch: str = config["scratch"]
        self.scratch_mb: int = int(config["scratch_mb"])
        self.mounted = False
        self.code: Any = None
        self.image: list[tuple[str, int, int, int]] = []  # name, mode, memory file, size

    def send(self, header: dict[str, Any], blob: bytes = b"") -> None:
        _write_all(self.data_out, frame(header, blob))

    def serve(self) -> None:
        """Answer requests until the harness closes the pipe (or the root kills us)."""
        while True:
            try:
                head_len, blob_len = _HEAD.unpack(_read_exact(self.data_in, _HEAD.size))
                header = marshal.loads(_read_exact(self.data_in, head_len))  # noqa: S302
            except (EOFError, OSError, ValueError):  # written by the harness only
                return
            op = header.get("op")
            handler = getattr(self, f"op_{op}", None) if type(op) is str else None
            if handler is None:
                self.discard(blob_len)
                self.send({"op": "error", "reason": f"unknown op {op!r}"})
                continue
            handler(header, blob_len)

    def discard(self, count: int) -> None:
        if count:
            with open(os.devnull, "wb") as sink:
                splice_exact(self.data_in, sink.fileno(), count)

    def take(self, count: int, name: str) -> int:
        """The next ``count`` bytes of the data pipe, in a memory file read from its start."""
        fd = _memfd(name)
        if count:
            splice_exact(self.data_in, fd, count)
            os.lseek(fd, 0, os.SEEK_SET)
        return fd

    # -- the requests --

    def op_ping(self, header: dict[str, Any], blob_len: int) -> None:
        self.discard(blob_len)
        self.send({"op": "pong"})

    def op_load(self, header: dict[str, Any], blob_len: int) -> None:
        """Compile a Python program (its own source, the one thing of a program held here)."""
        source = _read_exact(self.data_in, blob_len).decode("utf-8") if blob_len else ""
        try:
            code = compile(source, "<solution>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
            self.send({"op": "load", "ok": False, "error": f"{type(exc).__name__}: {exc}"})
            return
        names: set[str] = set()
        _code_names(code, names)
        for name in sorted(names & _PREIMPORT_ALLOWED):
            if name not in sys.modules:
                with contextlib.suppress(Exception):
                    __import__(name)
        gc.freeze()  # children's collections then leave this process's pages shared
        self.code = code
        self.send({"op": "load", "ok": True})

    def op_run(self, header: dict[str, Any], blob_len: int) -> None:
        """Run the Python program once as ``__main__`` on the request's bytes as stdin."""
        started = time.monotonic()
        stdin = self.take(blob_len, "stdin")
        try:
            if self.code is None:
                self.send({"op": "done", "how": "not_loaded", "lens": [0, 0, 0]})
                return
            timeout_s = float(header["timeout_s"])
            memory = {"as_mb": self.limits["memory_mb"]}
            cpu = _cpu_limit(header) or timeout_s
            code = self.code

            def setup() -> Callable[[], None]:
                self.confinement.apply("program", memory, cpu, cgroup=True)
                _reopen_streams()
                return lambda: _run_program(code)

            self.fresh_scratch()
            self.task(header, started, stdin, setup)
        finally:
            os.close(stdin)

    def op_build(self, header: dict[str, Any], blob_len: int) -> None:
        """Write the source files into a fresh scratch directory, run the build command there
        (a compiler; none for a script), and keep what it made that matches ``keep`` in memory
        files: the *image*, which every run gets in a fresh scratch directory of its own."""
        started = time.monotonic()
        self.clear_image()
        self.fresh_scratch()
        if not self.placed(lambda: self.write_files(header.get("files") or [], blob_len)):
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
            return {"image_files": sorted(name for name, _, _, _ in image)}

        if not header.get("argv"):  # nothing to build: the sources are the image
            self.send_done(snapshot("exited", 0), started)
            return
        self.exec_task(header, started, -1, before_end=snapshot)

    def op_exec(self, header: dict[str, Any], blob_len: int) -> None:
        """Execute a command (the built binary, or an interpreter on the kept script) in a fresh
        scratch directory holding the image and ``files``, on the request's stdin."""
        started = time.monotonic()
        split = int(header.get("stdin_len", blob_len))
        stdin = self.take(split, "stdin")
        try:
            if not self.image:
                self.discard(blob_len - split)
                self.send({"op": "done", "how": "not_loaded", "lens": [0, 0, 0]})
                return
            self.fresh_scratch()

            def place_files() -> None:
                for name, mode, fd, size in self.image:
                    self.write_from(name, mode, fd, size)
                self.write_files(header.get("files") or [], blob_len - split)

            if self.placed(place_files):
                self.exec_task(header, started, stdin)
        finally:
            os.close(stdin)

    def op_image(self, header: dict[str, Any], blob_len: int) -> None:
        """The image of the last build, to the harness, which may keep it for an identical build
        (``install``). Only bytes the build left cross, in the kernel."""
        self.discard(blob_len)
        files = [[name, mode, size] for name, mode, _, size in self.image]
        head = _encode({"op": "image", "files": files}).encode("utf-8")
        total = sum(size for _, _, _, size in self.image)
        _write_all(self.data_out, _HEAD.pack(len(head), total) + head)
        for _, _, fd, size in self.image:
            splice_exact(fd, self.data_out, size, offset=0)

    def op_install(self, header: dict[str, Any], blob_len: int) -> None:
        """Take an image the harness kept from an earlier build of the very same inputs, in
        place of building again: ``files`` is ``[[name, mode, length], ...]``, the bytes one
        after the other in the request."""
        started = time.monotonic()
        self.clear_image()
        image: list[tuple[str, int, int, int]] = []
        left = blob_len
        try:
            for name, mode, length in header.get("files") or []:
                name, length = str(name), int(length)
                if not name or "/" in name or name in (".", "..") or not 0 <= length <= left:
                    raise ValueError(f"not a plain file or length: {name!r}")
                image.append((name, int(mode) & 0o755, self.take(length, name), length))
                left -= length
        except (TypeError, ValueError) as exc:
            for _, _, fd, _ in image:
                os.close(fd)
            self.discard(left)
            said = f"cannot take the image: {exc}".encode()
            self.send({"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}, said)
            return
        self.discard(left)
        self.image = image
        self.send_done({"image_files": sorted(name for name, _, _, _ in image)}, started)

    # -- the scratch directory --

    def fresh_scratch(self) -> None:
        """An empty scratch directory for the next task: a new tmpfs in this mount namespace,
        or, unsandboxed, a new directory.

        Landlock's rules hold for the directories they were made on, and not for what is
        mounted over one later (it ignores the hidden mount point), so the task's ruleset is
        made here, once the fresh tmpfs is in place: writes only there."""
        self.drop_scratch()
        if self.own_namespace:
            mount_tmpfs(self.scratch, self.scratch_mb)
            self.mounted = True
        else:
            os.makedirs(self.scratch, exist_ok=True)
        os.chdir(self.scratch)
        if self.config.get("landlock_applied"):
            ruleset, _ = landlock_ruleset(
                self.config["read_paths"], [self.scratch], self.config["file_rules"]
            )
            self.confinement = self.base.with_ruleset(ruleset)

    def drop_scratch(self) -> None:
        """Take the last task's scratch directory away with everything in it (every process of
        the task is gone by then): its tmpfs unmounted, or, unsandboxed, the directory removed."""
        os.chdir("/")
        if self.confinement is not self.base:
            os.close(self.confinement.ruleset)
            self.confinement = self.base
        if self.mounted:
            unmount(self.scratch)
            self.mounted = False
        elif not self.own_namespace:
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)

    def clear_image(self) -> None:
        for _, _, fd, _ in self.image:
            os.close(fd)
        self.image = []

    def placed(self, write: Callable[[], None]) -> bool:
        """Run ``write`` (files into the scratch directory); on failure report it and say so."""
        try:
            write()
        except (OSError, ValueError, EOFError) as exc:
            said = f"cannot write the task's files: {exc}".encode()
            self.drop_scratch()
            self.send({"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}, said)
            return False
        return True

    def write_files(self, files: list[Any], available: int) -> None:
        """``files`` is ``[[name, length], ...]``, their bytes next on the data pipe."""
        left = available
        try:
            for name, length in files:
                length = int(length)
                if not 0 <= length <= left:
                    raise ValueError(f"bad length for {name!r}")
                fd = self.create(str(name), 0o644)
                try:
                    if length:
                        splice_exact(self.data_in, fd, length)
                finally:
                    os.close(fd)
                left -= length
        finally:
            self.discard(left)

    def write_from(self, name: str, mode: int, src: int, size: int) -> None:
        fd = self.create(name, mode)
        try:
            offset = 0
            while offset < size:
                moved = os.sendfile(fd, src, offset, size - offset)
                if moved == 0:
                    raise EOFError(f"{name} is shorter than it was")
                offset += moved
        finally:
            os.close(fd)

    def create(self, name: str, mode: int) -> int:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        return os.open(os.path.join(self.scratch, name), flags, mode)

    def collect(self, keep: list[str], cap: int) -> tuple[list[tuple[str, int, int, int]], str]:
        """The regular files at the top of the scratch directory whose names match ``keep``,
        copied into memory files."""
        import fnmatch

        image: list[tuple[str, int, int, int]] = []
        total = 0
        try:
            with os.scandir(self.scratch) as entries:
                for entry in entries:
                    if not any(fnmatch.fnmatchcase(entry.name, k) for k in keep):
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    info = entry.stat(follow_symlinks=False)
                    total += info.st_size
                    if total > cap:
                        raise ValueError(f"the build's output is larger than {cap} bytes")
                    copy = _memfd(entry.name)
                    image.append((entry.name, info.st_mode & 0o755, copy, info.st_size))
                    src = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                    try:
                        offset = 0
                        while offset < info.st_size:
                            moved = os.sendfile(copy, src, offset, info.st_size - offset)
                            if moved == 0:
                                break
                            offset += moved
                    finally:
                        os.close(src)
        except (OSError, ValueError) as exc:
            for _, _, fd, _ in image:
                os.close(fd)
            return [], str(exc)
        if not image:
            return [], "the build made none of the files it should have: " + ", ".join(keep)
        return image, ""

    # -- running a task --

    def exec_task(
        self,
        header: dict[str, Any],
        started: float,
        stdin: int,
        before_end: Callable[[str, int], dict[str, Any]] | None = None,
    ) -> None:
        """Fork a child that execs ``argv`` in the scratch directory with its own limits."""
        timeout_s = float(header["timeout_s"])
        argv = [str(a) for a in header["argv"]]
        env = {str(k): str(v) for k, v in (header.get("env") or {}).items()}
        memory = dict(header.get("memory") or {})
        cpu = float(header.get("cpu_s") or timeout_s)

        def setup() -> Callable[[], None]:
            self.confinement.apply("exec", memory, cpu, cgroup=True)

            def execute() -> None:
                try:
                    os.execve(argv[0], argv, env)  # noqa: S606 - inside the sandbox, confined
                except OSError as exc:
                    os.write(2, f"cannot execute {argv[0]}: {exc.strerror}\n".encode())
                os._exit(127)

            return execute

        self.task(header, started, stdin, setup, before_end)

    def task(
        self,
        header: dict[str, Any],
        started: float,
        stdin: int,
        setup: Callable[[], Callable[[], None]],
        before_end: Callable[[str, int], dict[str, Any]] | None = None,
    ) -> None:
        """Run one task: a fresh scratch directory (unless the caller filled one), a child with
        a random PID that places its streams, confines itself (``setup``) and says so, then runs
        what ``setup`` returned; supervise it; end every process of the task; report."""
        pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, ready
        (out_r, out_w), (err_r, err_w), (ready_r, ready_w) = pipes
        if stdin < 0:
            stdin = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            own_stdin = True
        else:
            own_stdin = False
        self.pids.choose()
        try:
            pid = os.fork()
        except OSError as exc:
            for pair in pipes:
                for fd in pair:
                    os.close(fd)
            if own_stdin:
                os.close(stdin)
            said = str(exc).encode()
            self.send({"op": "done", "how": "spawn_failed", "lens": [0, len(said), 0]}, said)
            return
        if pid == 0:
            try:
                placed = {0: stdin, 1: out_w, 2: err_w, _READY_FD: ready_w}
                place({**placed, **self.confinement.slots()}, orphan_guard=not self.own_namespace)
                then = setup()
                os.write(_READY_FD, b"R")
                os.close(_READY_FD)
            except BaseException as exc:
                _setup_failed(2, exc)
            then()
            os._exit(0)
        for fd in (out_w, err_w, ready_w):
            os.close(fd)
        if own_stdin:
            os.close(stdin)
        self.supervise(pid, started, header, [out_r, err_r, ready_r], before_end)

    def supervise(
        self,
        pid: int,
        started: float,
        header: dict[str, Any],
        readers: list[int],
        before_end: Callable[[str, int], dict[str, Any]] | None,
    ) -> None:
        """Collect the streams (capped) into memory files, wait for the exit or a limit, end
        the task, report.

        ``before_end(how, status)``, when given, runs once every process of the task is gone and
        before the scratch directory goes (a build keeps its output from there); what it
        returns is added to the report.

        From the task's ``header``: ``timeout_s``, the wall-clock deadline; ``output_bytes``,
        the cap of each stream (the sandbox's own when absent); ``cpu_s``, the CPU-time limit:
        the task's CPU time (its whole process tree's, as judges count it) is read every
        ``_CPU_WATCH_S`` and the task killed (``cpu_limit``) once it reaches it, so the deadline
        is only the backstop of a task that waits; ``run_past_cap``: a stream past its cap is
        discarded (nothing more is held) and the task runs on to its end or a limit, as judges
        let a program that writes too much run (a time limit reached then is the verdict); it
        is ``output_limit`` only if it ends by itself.
        """
        deadline = started + float(header["timeout_s"])
        cpu_limit = _cpu_limit(header)
        output_bytes = _output_bytes(header) or self.output_bytes
        run_past_cap = header.get("run_past_cap") is True
        discard = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC) if run_past_cap else -1
        over = False
        reaped_before = children_cpu()
        tree_cpu = 0.0
        probe = [pid]
        probe_end: tuple[int, Any] | None = None  # the main process's end, when a look reaped it
        next_watch = time.monotonic() + _CPU_WATCH_S
        sinks = [_memfd("stdout"), _memfd("stderr"), _memfd("ready")]
        sizes = [0, 0, 0]
        slot = {fd: i for i, fd in enumerate(readers)}
        pidfd = os.pidfd_open(pid)
        poller = select.poll()
        for fd in readers:
            poller.register(fd, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        open_readers = len(readers)
        how, status = "exited", -1
        usage: Any = None
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
                    continue
                i = slot[fd]
                sink = sinks[i] if sizes[i] <= output_bytes else discard
                try:
                    moved = os.splice(fd, sink, 1 << 16)
                except BlockingIOError:
                    continue
                if not moved:
                    poller.unregister(fd)
                    open_readers -= 1
                    continue
                sizes[i] += moved
                if sizes[i] > output_bytes:
                    over = True
                    if not run_past_cap:
                        how = "output_limit"
                        break
            if how != "exited":
                break
        if over and how == "exited":  # it ended by itself, having written too much
            how = "output_limit"
        if discard >= 0:
            os.close(discard)
        if status < 0:
            self.kill_strays(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            status, usage = probe_end or os.wait4(pid, 0)[1:]
        elapsed = time.monotonic() - started
        self.reap_all()
        for fd in [*readers, pidfd]:
            os.close(fd)
        cpu = usage.ru_utime + usage.ru_stime
        if self.own_namespace:  # every process of the task was ours to reap
            cpu = max(cpu, children_cpu() - reaped_before)
        report: dict[str, Any] = {
            "op": "done",
            "how": how,
            "elapsed_s": elapsed,
            "cpu_s": max(cpu, tree_cpu),
            "maxrss_kb": usage.ru_maxrss,
        }
        if before_end is not None:
            report.update(before_end(how, status))
        self.drop_scratch()
        if os.WIFSIGNALED(status):
            report["signal"] = signal.Signals(os.WTERMSIG(status)).name
            if how == "exited":
                report["how"] = "signaled"
        else:
            report["code"] = os.WEXITSTATUS(status)
        kept = [min(size, output_bytes) for size in sizes]
        report["lens"] = kept
        head = _encode(report).encode("utf-8")
        _write_all(self.data_out, _HEAD.pack(len(head), sum(kept)) + head)
        for fd, size in zip(sinks, kept, strict=True):
            if size:
                splice_exact(fd, self.data_out, size, offset=0)
            os.close(fd)

    def send_done(self, extra: dict[str, Any], started: float) -> None:
        """The report of a task that ran nothing (a build with no build command)."""
        self.drop_scratch()
        header = {"op": "done", "how": "exited", "code": 0, "lens": [0, 0, 1]}
        header["elapsed_s"] = time.monotonic() - started
        self.send({**header, **extra}, b"R")

    def tree_cpu(
        self, pid: int, reaped_before: float, probe: list[int]
    ) -> tuple[float, tuple[int, Any] | None]:
        """The CPU time a running task has used so far, and the main process's (status, usage)
        when this look reaped it.

        As PID 1 of a private PID namespace, the task's processes are the only others, each
        given a higher PID than the one before: first reap the orphans that ended (their time
        then counts among this process's children's), then add the main process's clock, the
        clocks of live processes up to a little past the highest PID seen (``probe`` keeps it),
        and what was reaped since the task started. Otherwise, the main process's own clock
        (the per-process ``RLIMIT_CPU`` bounds the others). Either way, what a process's
        children used once they are reaped shows in the exact count taken at the end."""
        if not self.own_namespace:
            return process_cpu(pid) or 0.0, None
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
        total = (process_cpu(pid) or 0.0) + children_cpu() - reaped_before
        top = probe[0] + _PID_PROBE
        for other in range(max(pid + 1, top - _PID_WINDOW), top + 1):
            used = process_cpu(other)
            if used is not None:
                total += used
                probe[0] = max(probe[0], other)
        return total, main_end

    def kill_strays(self, pid: int) -> None:
        """Kill what a task left behind: as PID 1 of a private PID namespace, every other process
        in it (those that left the task's process group included); otherwise the task's process
        group."""
        try:
            if self.own_namespace:
                os.kill(-1, signal.SIGKILL)  # never reaches PID 1 itself
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap_all(self) -> None:
        """Wait until every process of the task is gone (orphans are re-parented to PID 1, us)."""
        while True:
            try:
                done, _ = os.waitpid(-1, 0 if self.own_namespace else os.WNOHANG)
            except ChildProcessError:
                return
            if done == 0:
                return


# -- the root -------------------------------------------------------------------------------------


class Root:
    """The loop of one-byte commands; every child forked from the same frame, with the same
    memory up to random numbers (see the module's docstring)."""

    def __init__(
        self,
        config: dict[str, Any],
        confinement: Confinement,
        pids: PidChooser,
        reaper: Reaper,
        channels: dict[str, int],
        own_namespace: bool,
    ) -> None:
        self.config = config
        self.confinement = confinement
        self.pids = pids
        self.reaper = reaper
        self.ctl_in = channels["ctl_in"]
        self.ctl_out = channels["ctl_out"]
        self.data_in = channels["data_in"]
        self.data_out = channels["data_out"]
        self.fd_socket = socket.socket(fileno=channels["fd_socket"])
        self.fd_socket.set_inheritable(False)
        self.rights = (socket.SOL_SOCKET, socket.SCM_RIGHTS)
        self.creds = (socket.SOL_SOCKET, socket.SCM_CREDENTIALS)
        self.ids = (os.getuid(), os.getgid())
        self.own_namespace = own_namespace
        self.current = 0
        self.supervising = False
        self.no_report = bytes(len(reaper.report))

    def serve(self) -> None:
        command = bytearray(1)
        view = memoryview(command)
        while True:
            try:
                if os.readv(self.ctl_in, [view]) == 0:
                    break
            except InterruptedError:
                continue
            op = command[0]
            if op == 83:  # S
                self.session()
            elif op == 80:  # P
                self.supervisor()
            elif op == 75:  # K
                self.kill()
            elif op == 63:  # ?
                os.write(self.ctl_out, b"!")
            elif op == 88:  # X
                break
            self.reaper.reap()
        self.end()

    def end(self) -> None:
        """Kill the current child without waiting (the reaper collects it)."""
        if self.current:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.current, signal.SIGKILL)
            self.current = 0

    def kill(self) -> None:
        """Kill the current child, wait for it, and say how it died (20 bytes from the
        reaper's buffer: code, pid, uid, status; zeros when there was none)."""
        if not self.current:
            os.write(self.ctl_out, self.no_report)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.current, signal.SIGKILL)
        if self.reaper.wait(self.current):
            os.write(self.ctl_out, self.reaper.report)
        else:
            os.write(self.ctl_out, self.no_report)
        self.reaper.clear()
        self.current = 0

    def session(self) -> None:
        """Fork a call session and hand its pipes to the harness, with its PID as credentials
        (which the kernel turns into the harness's own view of it: the harness reads the
        session's CPU time there)."""
        self.end()
        if self.supervising:  # a task's processes may still hold memory: wait them out
            self.settle()
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        self.pids.choose()
        try:
            pid = os.fork()
        except OSError:
            for fd in (req_r, req_w, resp_r, resp_w):
                os.close(fd)
            self.fd_socket.sendmsg([b"F"])
            return
        if pid == 0:
            _session(self.confinement, req_r, resp_w)
        os.close(req_r)
        os.close(resp_w)
        try:
            fds = struct.pack("2i", req_w, resp_r)
            ancillary = [(*self.rights, fds)]
            if self.own_namespace:
                ancillary.append((*self.creds, struct.pack("3i", pid, *self.ids)))
            self.fd_socket.sendmsg([b"S" + struct.pack("i", pid)], ancillary)
        except OSError:
            self.fd_socket.sendmsg([b"S" + struct.pack("i", pid)], [(*self.rights, fds)])
        finally:
            os.close(req_w)  # from now on only the harness and the session hold them
            os.close(resp_r)
        self.current = pid

    def supervisor(self) -> None:
        """Fork the supervisor of a program, in PID and mount namespaces of its own."""
        self.end()
        self.settle()
        self.pids.choose()
        try:
            pid = os.fork()
        except OSError:
            os.write(self.ctl_out, b"f")
            return
        if pid == 0:
            self.become_supervisor()
        self.current = pid
        self.supervising = True
        os.write(self.ctl_out, b"p")

    def settle(self) -> None:
        """Wait until every child (and what the last supervisor left to us) is gone: no task's
        process may still hold memory of the task cgroup when the next one starts."""
        while self.reaper.wait_any():
            pass
        self.supervising = False

    def become_supervisor(self) -> None:
        """In the forked child: the supervisor, never returning."""
        try:
            gc.enable()
            os.close(self.ctl_in)
            os.close(self.ctl_out)
            self.fd_socket.close()
            own = self.own_namespace
            if own:
                become_init_of_new_namespaces(CLONE_NEWPID | CLONE_NEWNS)
                make_mounts_private()
            Supervisor(
                self.config,
                self.confinement,
                self.pids,
                self.data_in,
                self.data_out,
                own_namespace=own,
            ).serve()
        finally:
            os._exit(0)


# -- start-up -------------------------------------------------------------------------------------


def _isolate_natively(config: dict[str, Any]) -> None:
    """The fallback when bubblewrap is absent: new user, PID, network, mount, IPC and UTS
    namespaces, every mount of the host read-only, a fresh ``/proc``, a private tmpfs scratch
    directory, an empty read-only tmpfs over each third-party package directory
    (``hidden_dirs``); every capability dropped but ``CAP_SYS_ADMIN`` in this user namespace,
    which the root keeps to give each task its own PID, mounts and scratch.

    The masks are mounts of this mount namespace, made before any child enforces Landlock, so
    a rule on the interpreter's prefix allows reading the empty masks and nothing beneath
    them; no child keeps a capability (and ``umount`` is killed by every child's filter), so no
    task can lift them.
    """
    uid, gid = os.getuid(), os.getgid()
    flags = (
        CLONE_NEWUSER
        | CLONE_NEWNS
        | CLONE_NEWPID
        | CLONE_NEWNET
        | CLONE_NEWIPC
        | CLONE_NEWUTS
        | CLONE_NEWCGROUP
    )
    unshare(flags)
    map_ids(config["inner_uid"], uid, config["inner_gid"], gid)
    become_init_of_new_namespaces(0)
    scratch = config["scratch"]
    make_mounts_private()
    read_only_everywhere()
    mount_tmpfs(scratch, config["scratch_mb"])
    mount_proc()
    for path in config.get("hidden_dirs") or []:
        mount_tmpfs(path, 0, read_only=True)
    sethostname(b"sandbox")


def _nest() -> None:
    """Inside bubblewrap: a user, PID and mount namespace of the sandbox's own, so the root
    holds ``CAP_SYS_ADMIN`` there (never in bubblewrap's) and is PID 1 of its own PID
    namespace. The same uid and gid inside as outside."""
    uid, gid = os.getuid(), os.getgid()
    unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS)
    map_ids(uid, uid, gid, gid)
    become_init_of_new_namespaces(0)
    make_mounts_private()


def _status_fields() -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp", "Uid", "Gid"):
                    fields[key] = value.strip()
    except OSError:
        pass
    return fields


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


def _child_status() -> dict[str, str]:
    """What a task's process sees of itself once it has dropped its capabilities."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            drop_all_capabilities()
            os.write(write_end, json.dumps(_status_fields()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 4096):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    try:
        fields = json.loads(data)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


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
    import errno

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1: never answers; fails fast only offline
    except OSError as exc:
        return 10 if exc.errno in (errno.ENETUNREACH, errno.EACCES, errno.EPERM) else 11
    return 12


def _try_ptrace() -> int:
    """A call the base rules kill for (5 if they did not)."""
    import ctypes

    ctypes.CDLL(None).ptrace(0, 0, 0, 0)  # PTRACE_TRACEME
    return 5


def _try_socket(extra: Filter | None) -> Any:
    """Under ``extra``, open a TCP socket: 5 if it opened, 6 if it was refused."""

    def attempt() -> int:
        if extra is not None:
            extra.install()
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        except PermissionError:
            return 6
        return 5

    return attempt


def _try_fork(function_filter: Filter) -> Any:
    def attempt() -> int:
        function_filter.install()
        if os.fork() == 0:
            os._exit(0)
        return 5

    return attempt


def _try_join(cgroup: int) -> Any:
    """10 when a child can join the tasks' memory cgroup (and it does, then ends)."""

    def attempt() -> int:
        os.write(cgroup, b"0")
        return 10

    return attempt


def _try_namespaces(scratch: str, size_mb: int) -> int:
    """10 when a child can do what a supervisor does: become PID 1 of a new PID namespace
    with a mount namespace of its own, and mount a fresh tmpfs on the scratch directory."""

    def inside() -> int:
        unshare(CLONE_NEWPID | CLONE_NEWNS)
        pid = os.fork()
        if pid:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        make_mounts_private()
        mount_tmpfs(scratch, size_mb)
        unmount(scratch)
        os._exit(10 if os.getpid() == 1 else 11)

    return os.waitstatus_to_exitcode(_in_child(inside))


def main(argv: list[str]) -> int:
    config = json.loads(argv[0])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != config["parent_pid"] and config["mode"] != "bwrap":
        return 1  # the harness is already gone
    # the data channel moves off 0 and 1, which every child gets as its own streams
    channels = {
        "data_in": os.dup(0),
        "data_out": os.dup(1),
        "ctl_in": int(config["ctl_in"]),
        "ctl_out": int(config["ctl_out"]),
        "fd_socket": int(config["fd_socket"]),
    }
    for fd in channels.values():
        os.set_inheritable(fd, False)
    cgroup = int(config.get("cgroup_fd", -1))
    if cgroup >= 0:
        os.set_inheritable(cgroup, False)
    errors: list[str] = []
    own_namespace = False
    if config["mode"] == "native":
        _isolate_natively(config)
        own_namespace = True
    elif config["mode"] == "bwrap":
        try:
            _nest()
            own_namespace = True
        except OSError as exc:
            errors.append(f"namespaces of its own: {exc}")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    prctl(PR_SET_NO_NEW_PRIVS, 1)  # inherited: no task can gain privileges through exec
    prctl(PR_SET_DUMPABLE, 0)  # no /proc/<pid>/mem, no ptrace of the zygote
    if own_namespace:
        try:
            drop_capabilities(keep=CAP_SYS_ADMIN)
        except OSError as exc:
            errors.append(f"capabilities: {exc}")
    status = _status_fields()
    ns = namespaces()
    ruleset, landlock = -1, 0
    if config.get("landlock"):
        try:
            ruleset, landlock = landlock_ruleset(
                config["read_paths"], [config["scratch"]], config["file_rules"]
            )
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
    filters = {
        kind: Filter(base64.b64decode(blob)) for kind, blob in (config.get("seccomp") or {}).items()
    }
    task_cgroup = cgroup >= 0 and _in_child(_try_join(cgroup)) == 10 << 8
    if cgroup >= 0 and not task_cgroup:
        os.close(cgroup)  # the tasks could not join it: none, and the harness says so
        cgroup = -1
    confinement = Confinement(filters, ruleset, cgroup)
    config["landlock_applied"] = landlock > 0
    pids = PidChooser(enabled=own_namespace)
    # what really holds, checked from inside: the network before any filter (so only the
    # namespace or Landlock can be what stops it), then the filters themselves
    probe: dict[str, Any] = {
        "network_blocked": _in_child(_try_connect) == 10 << 8,
        "packages_hidden": _packages_hidden(config.get("hidden_dirs") or []),
        "task_status": _child_status(),
        "task_cgroup": task_cgroup,
    }
    if own_namespace:
        probe["task_namespaces"] = _try_namespaces(config["scratch"], 1) == 10
    root_filter = filters.pop("root", None)
    if root_filter is not None:
        try:
            root_filter.install()  # every process of the sandbox inherits it
        except OSError as exc:
            errors.append(f"seccomp: {exc}")
        program, call = filters.get("program"), filters.get("function")
        probe["seccomp_enforced"] = (
            program is not None
            and _killed_by_seccomp(_in_child(_try_ptrace))
            and _killed_by_seccomp(_in_child(_try_socket(program)))
            and _in_child(_try_socket(filters.get("exec"))) == 6 << 8
        )
        if call is not None:
            probe["function_filter_enforced"] = _killed_by_seccomp(_in_child(_try_fork(call)))
    hello = {
        "op": "hello",
        "pid": os.getpid(),
        "uid": os.getuid(),
        "status": status,
        "namespaces": ns,
        "landlock_abi": landlock,
        "dumpable": dumpable(),
        "python": sys.version.split()[0],
        "random_pids": bool(pids.ready),
        "errors": errors,
        **probe,
    }
    reaper = Reaper()
    root = Root(config, confinement, pids, reaper, channels, own_namespace)
    _write_all(channels["data_out"], frame(hello))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # nothing of ours goes to stderr after start-up
    gc.collect()
    gc.freeze()
    gc.disable()  # the loop makes no cycles; a collection would change what every child sees
    root.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
