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
    slots = progress.slots
    slots[1] = POS_IDLE
    slots[0] = seq
    buffered: list[tuple[int, Any, float]] = []
    first = 0
    last_flush = time.monotonic()
    monotonic_ns = time.monotonic_ns
    perf = time.perf_counter
    for index, payload in enumerate(payloads):
        slots[2] = monotonic_ns()
        slots[1] = index
        started = perf()
        try:
            value, status = task(payload), STATUS_OK
            problem = _plain_problem(value)
            if problem is not None:
                value = f"the task returned {problem}; tasks must return plain builtin data"
                status = STATUS_EXCEPTION
        except MemoryError:
            value, status = (
                "the item exhausted the worker's memory limit (MemoryError)",
                STATUS_MEMORY,
            )
        except BaseException as exc:
            value, status = _describe(exc), STATUS_EXCEPTION
        elapsed = perf() - started
        slots[1] = POS_IDLE
        buffered.append((status, value, elapsed))
        now = time.monotonic()
        if now - last_flush >= FLUSH_S:
            _send_results(out, seq, first, buffered)
            first = index + 1
            buffered = []
            last_flush = now
    if buffered or first == 0:
        _send_results(out, seq, first, buffered)


_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None), bytes, complex})


def _plain_problem(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not plain builtin data (exact types, not subclasses), or None."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return None
    if depth > 50:
        return "nested more than 50 levels"
    if kind is dict:
        for key, item in value.items():
            problem = _plain_problem(key, depth + 1) or _plain_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if kind in (list, tuple, set, frozenset):
        for item in value:
            problem = _plain_problem(item, depth + 1)
            if problem:
                return problem
        return None
    return f"a {kind.__module__}.{kind.__qualname__} object"


def _send_results(
    out: Connection, seq: int, first: int, results: list[tuple[int, Any, float]]
) -> None:
    try:
        data = dumps(("results", seq, first, results))
    except Exception:  # a result that will not pickle: report it, item by item
        safe = []
        for status, value, elapsed in results:
            try:
                pickle.dumps(value)
                safe.append((status, value, elapsed))
            except Exception as exc:
                safe.append(
                    (STATUS_EXCEPTION, f"result could not be sent back: {_describe(exc)}", elapsed)
                )
        data = dumps(("results", seq, first, safe))
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
            message = pickle.loads(inbox.recv_bytes())
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
                progress.slots[0] = seq
                progress.slots[2] = time.monotonic_ns()
                progress.slots[1] = POS_SETUP
                try:
                    task = pickle.loads(pending[key])
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
    _send_results(out, seq, 0, [(STATUS_EXCEPTION, why, 0.0) for _ in payloads])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
