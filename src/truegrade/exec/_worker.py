"""The worker process: receives tasks and chunks of payloads, runs them, sends results back.

Started by the engine as ``python -m truegrade.exec._worker IN OUT PROGRESS MEMORY_MB``. It holds
nothing the engine needs to survive: the engine may SIGKILL it at any moment (that is how deadlines
are enforced) and start another. It must never read from or write to stdout/stderr as a protocol
channel (tasks may print), and it dies with its parent.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import resource
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from truegrade.exec._protocol import (
    POS_IDLE,
    POS_SETUP,
    STATUS_EXCEPTION,
    STATUS_MEMORY,
    STATUS_OK,
    Progress,
    dumps,
    safe_loads,
)

FLUSH_S = 0.01  # send finished results at least this often, so a kill loses little work
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # pragma: no cover - non-Linux
        pass


def _limit_memory(memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {os.path.basename(last.filename)}:{last.lineno} in {last.name})"
    text = str(exc)
    if len(text) > 2000:
        text = text[:2000] + "..."
    return f"{type(exc).__name__}: {text}{where}"


def _run_chunk(
    out: Connection, progress: Progress, seq: int, task: Any, payloads: list[Any]
) -> None:
    """Run a chunk, reporting progress through shared memory and results in batches.

    Results go out as three parallel lists (statuses as bytes, values, start times) plus the end
    time of the last item: the engine derives each item's duration from the next item's start,
    so the hot loop reads the clock once per item.
    """
    slots = progress.slots
    slots[1] = POS_IDLE
    slots[0] = seq
    # a task timed in CPU time has its CPU clock read at each item's start (a system call, so
    # only for those): the engine compares it with what the kernel says the worker has used since
    cpu_clock = time.process_time_ns if getattr(task, "deadline_clock", "wall") == "cpu" else None
    slots[3] = 0
    statuses = bytearray()
    values: list[Any] = []
    starts: list[int] = []
    first = 0
    clock = time.monotonic_ns
    flush_ns = int(FLUSH_S * 1e9)
    last_flush = clock()
    for index, payload in enumerate(payloads):
        started = clock()
        if started - last_flush >= flush_ns and values:
            slots[1] = POS_IDLE
            _send_results(out, seq, first, statuses, values, starts, started)
            first = index
            statuses, values, starts = bytearray(), [], []
            last_flush = started = clock()
        slots[2] = started  # the engine reads (pos, start) to enforce this item's deadline
        if cpu_clock is not None:
            slots[3] = cpu_clock()
        slots[1] = index
        try:
            value = task(payload)
            status = STATUS_OK
        except MemoryError:
            value = "the item exhausted the worker's memory limit (MemoryError)"
            status = STATUS_MEMORY
        except BaseException as exc:
            value, status = _describe(exc), STATUS_EXCEPTION
        statuses.append(status)
        values.append(value)
        starts.append(started)
    end = clock()
    slots[1] = POS_IDLE
    _send_results(out, seq, first, statuses, values, starts, end)


_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None), bytes, complex})


def _plain_problem(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not plain builtin data (exact types, not subclasses), or None.

    The engine's unpickler would refuse anything else anyway; checking here turns an honest
    mistake into a clear per-item error instead of a protocol violation. Type sets are compared
    in C so the common verdict dict costs well under a microsecond.
    """
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return None
    if depth > 50:
        return "nested more than 50 levels"
    if kind is dict:
        if not set(map(type, value)) <= _PLAIN_SCALARS:
            return _first_problem(value.keys(), depth)
        items = value.values()
    elif kind in (list, tuple, set, frozenset):
        items = value
    else:
        return f"a {kind.__module__}.{kind.__qualname__} object"
    if set(map(type, items)) <= _PLAIN_SCALARS:
        return None
    return _first_problem(items, depth)


def _first_problem(items: Any, depth: int) -> str | None:
    for item in items:
        problem = _plain_problem(item, depth + 1)
        if problem is not None:
            return problem
    return None


def _send_results(
    out: Connection,
    seq: int,
    first: int,
    statuses: bytearray,
    values: list[Any],
    starts: list[int],
    end_ns: int,
) -> None:
    """Send a batch of results, having checked it is plain data the engine will accept.

    The check is the engine's own restricted unpickler run on the message (fast, in C); only when
    it refuses does the worker walk the values to find and replace the offending ones, so an
    honest mistake becomes a clear per-item error rather than a protocol violation.
    """
    try:
        data = dumps(("results", seq, first, bytes(statuses), values, starts, end_ns))
        safe_loads(data)
    except Exception:
        for i, value in enumerate(values):
            problem = _plain_problem(value)
            if problem is None:
                try:
                    pickle.dumps(value)
                except Exception as exc:
                    problem = f"a value that cannot be sent back ({_describe(exc)})"
            if problem is not None:
                values[i] = f"the task returned {problem}; tasks must return plain builtin data"
                statuses[i] = STATUS_EXCEPTION
        data = dumps(("results", seq, first, bytes(statuses), values, starts, end_ns))
    out.send_bytes(data)


def main(argv: list[str]) -> int:
    in_fd, out_fd, progress_fd, memory_mb = (int(a) for a in argv[:4])
    _die_with_parent()
    _limit_memory(memory_mb)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to handle
    inbox = Connection(in_fd, writable=False)
    out = Connection(out_fd, readable=False)
    progress = Progress(progress_fd)
    out.send_bytes(dumps(("ready", os.getpid())))
    tasks: dict[str, Any] = {}
    pending: dict[str, bytes] = {}
    while True:
        try:
            # trusted input: the engine's own messages (model text reaches a worker as data)
            message = pickle.loads(inbox.recv_bytes())  # trusted: the engine parent's messages
        except EOFError:
            return 0
        kind = message[0]
        if kind == "stop":
            return 0
        if kind == "task":
            _, key, blob = message
            pending[key] = blob
            tasks.pop(key, None)
            continue
        if kind == "chunk":
            _, seq, key, payloads = message
            if key not in tasks and key not in pending:
                _fail_chunk(out, seq, payloads, "engine sent a chunk for an unknown task")
                continue
            if key not in tasks:
                # ``pos`` first: a reader that sees the new ``seq`` sees the setup, never an
                # item of the chunk with the last chunk's (or no) start time
                progress.slots[1] = POS_SETUP
                progress.slots[2] = time.monotonic_ns()
                progress.slots[0] = seq
                try:
                    task = pickle.loads(pending[key])  # trusted: the caller's task
                    setup = getattr(task, "setup", None)
                    if callable(setup):
                        setup()
                except BaseException as exc:
                    progress.slots[1] = POS_IDLE
                    _fail_chunk(out, seq, payloads, f"task setup failed: {_describe(exc)}")
                    continue
                tasks[key] = task
                del pending[key]
            _run_chunk(out, progress, seq, tasks[key], payloads)


def _fail_chunk(out: Connection, seq: int, payloads: list[Any], why: str) -> None:
    now = time.monotonic_ns()
    statuses = bytearray([STATUS_EXCEPTION]) * len(payloads)
    _send_results(out, seq, 0, statuses, [why] * len(payloads), [now] * len(payloads), now)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
