"""The execution engine: long-lived worker processes with hard per-item deadlines.

Grading hostile text can hang (a LaTeX power tower), crash (a C extension) or eat memory. The
engine runs such work in worker processes and enforces every deadline by killing the worker and
starting a replacement: never by a signal in a thread, which cannot stop C code and breaks in
threads (the failure mode that gave verl silent all-zero rewards).

How it works. A dispatcher thread owns the workers. Callers (any thread, or asyncio through
``amap``) submit a job: a picklable task and a list of payloads. The dispatcher cuts jobs into
chunks, sends each chunk to an idle worker in one message, and the worker sends results back at
most every few milliseconds. Before each item the worker writes ``(chunk, position, start time)``
into shared memory; the dispatcher reads it to know exactly which item is running and since when,
so batching never blurs a deadline. When an item overruns, the dispatcher collects the results the
worker already sent, kills the worker's whole process group, records ``timeout`` for that item,
puts the untouched items back in the queue and starts a new worker. A worker that dies (segfault,
out-of-memory kill) is handled the same way with ``crashed``.

What it must never do: run a task in the caller's process, trust what comes back from a worker
(results are unpickled with builtin types only), or let one item's failure fail another item.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import hashlib
import itertools
import math
import os
import pickle
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NamedTuple, Protocol

from truegrade.exec._protocol import (
    POS_IDLE,
    POS_SETUP,
    STATUS_MEMORY,
    STATUS_OK,
    Progress,
    dumps,
    make_progress_fd,
    safe_loads,
)

__all__ = [
    "WALL_EXTRA_S",
    "WALL_FACTOR",
    "Engine",
    "EngineConfig",
    "Failure",
    "Outcome",
    "Task",
    "configure_default_engine",
    "default_engine",
    "default_worker_count",
]

_MAX_ATTEMPTS = 3
_MAX_BOOT_FAILURES = 3
_PIPE_BYTES = 1 << 20
_PIPE_DEFAULT_BYTES = 1 << 16  # Linux's, when the size can be neither set nor read
_PREFETCH = 2  # chunks queued per worker, so it never waits on the dispatcher between chunks
#: Items of a task whose recent items took less than this are batched: several per message,
#: items of concurrent jobs together, a chunk sent ahead to a busy worker. Slower (or not yet
#: measured) tasks go one item per message to idle workers only, so no item ever waits behind
#: another in a worker's queue; the dispatcher's round trip is nothing beside such items.
_QUICK_S = 0.01
#: An item of a quick task that runs this many times the task's recent mean (and at least
#: ``_STALL_MIN_S``) has stalled its worker: the items queued behind it go to other workers.
_STALL_FACTOR = 20
_STALL_MIN_S = 0.05
#: A task timed in CPU time (``deadline_clock = "cpu"``) also has a wall-clock backstop of
#: ``WALL_FACTOR * deadline + WALL_EXTRA_S``: room for an item that uses its whole CPU budget on a
#: machine running twice its cores in other work (it then gets about 2/5 of a core: 2.5x its
#: budget in wall-clock time). An item that reaches the backstop having used less CPU time than
#: its budget is ``starved`` (an error: not graded), never a timeout.
WALL_FACTOR = 3.0
#: The fixed part of that backstop, in seconds (see ``WALL_FACTOR``).
WALL_EXTRA_S = 2.0
_CLOCK_TICK_NS = 1_000_000_000 // (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
#: The soonest a CPU-timed item past its wall-clock deadline is looked at again.
_RECHECK_MIN_NS = 5_000_000


class Failure:
    """Why an item has no value (``Outcome.failure``)."""

    TIMEOUT = "timeout"
    STARVED = "starved"
    CRASHED = "crashed"
    EXCEPTION = "exception"
    MEMORY = "memory"
    CANCELLED = "cancelled"


class Outcome(NamedTuple):
    """The result of one payload: a value, or the reason there is none.

    (A named tuple: the engine makes one per item, and this is the cheapest immutable record.)

    Attributes:
        ok: True when the task returned normally.
        value: What the task returned (plain data: it crossed a process boundary).
        failure: ``None``, or one of ``Failure``'s constants.
        message: A human-readable account of the failure.
        elapsed_s: Time the item ran in its worker (up to the kill, for timeouts).
    """

    ok: bool
    value: Any = None
    failure: str | None = None
    message: str = ""
    elapsed_s: float = 0.0


class Task(Protocol):
    """A picklable callable run in workers: ``task(payload) -> plain data``.

    A task may define ``setup()``, called once per worker before its first payload (load a model,
    warm a parser). It is pickled once per job and cached in each worker by content, so a grader
    that submits the same task batch after batch pays for ``setup`` once per worker.

    A task that only computes (parses, simplifies, matches: no waiting on a network, a child
    process or a lock) should set ``deadline_clock = "cpu"``: its deadline is then the CPU time
    its worker spends on the item, which a loaded machine does not change, so neither does its
    verdict (with a wall-clock backstop, see ``WALL_FACTOR``). The default, ``"wall"``, times an
    item by the clock on the wall, as a task that waits must be.
    """

    def __call__(self, payload: Any, /) -> Any: ...


def default_worker_count() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _default_memory_mb(workers: int) -> int:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return 4096
    return max(2048, int(total * 0.8 / max(1, workers)))


@dataclass(frozen=True)
class EngineConfig:
    """Settings of an engine.

    Attributes:
        workers: Worker processes (default: the core count).
        memory_mb: Address-space limit of each worker; 0 disables it (default: 80% of RAM shared
            among workers, at least 2 GiB).
        setup_timeout_s: Deadline for a worker to start and run a task's ``setup``.
        max_chunk: Most payloads sent to a worker in one message.
        worker_output: ``"devnull"`` or ``"inherit"``: where a worker's stdout goes (stderr is
            always inherited so a crashing worker's last words are visible).
    """

    workers: int | None = None
    memory_mb: int | None = None
    setup_timeout_s: float = 120.0
    max_chunk: int = 256
    worker_output: str = "devnull"


class _Job:
    __slots__ = (
        "attempts",
        "blob",
        "cancelled",
        "cpu_clock",
        "future",
        "key",
        "next_index",
        "on_outcome",
        "outcomes",
        "payloads",
        "remaining",
        "retry",
        "timeout_ns",
        "waiter",
    )

    def __init__(
        self,
        key: str,
        blob: bytes,
        payloads: Sequence[Any],
        timeout_s: float,
        on_outcome: Callable[[int, Outcome], None] | None,
        cpu_clock: bool = False,
    ) -> None:
        self.key = key
        self.cpu_clock = cpu_clock
        self.blob = blob
        self.payloads = payloads
        self.timeout_ns = int(timeout_s * 1e9)
        self.outcomes: list[Outcome | None] = [None] * len(payloads)
        self.remaining = len(payloads)
        self.next_index = 0
        self.retry: collections.deque[int] = collections.deque()
        self.attempts: dict[int, int] = {}
        self.future: Future[list[Outcome]] = Future()
        self.on_outcome = on_outcome
        self.cancelled = False
        #: For ``amap``: the event loop and its future, resolved in batches (``_flush``).
        self.waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[list[Outcome]]] | None = None

    def pending(self) -> int:
        return len(self.retry) + len(self.payloads) - self.next_index


class _Chunk:
    """Items sent to a worker in one message: one task, possibly several jobs' items."""

    __slots__ = ("dispatched_ns", "done", "items", "key", "rescued", "seq")

    def __init__(self, key: str, seq: int, items: list[tuple[_Job, int]]) -> None:
        self.key = key
        self.seq = seq
        self.items = items
        self.done = 0
        #: Positions handed to other workers because this worker stalled on another item.
        self.rescued: set[int] = set()
        self.dispatched_ns = time.monotonic_ns()

    def requeue(self, positions: Iterable[int]) -> None:
        """Put these items back at the front of their jobs' queues (in order), unless they
        already have an outcome or were put back before."""
        for position in sorted(set(positions) - self.rescued, reverse=True):
            job, index = self.items[position]
            self.rescued.add(position)
            if job.outcomes[index] is None and not job.cancelled:
                job.retry.appendleft(index)


class _Worker:
    __slots__ = (
        "booted",
        "chunks",
        "inbox",
        "known",
        "outbox",
        "pipe_bytes",
        "proc",
        "progress",
        "recheck",
    )

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        inbox: Connection,
        outbox: Connection,
        progress: Progress,
        pipe_bytes: int,
    ) -> None:
        self.pipe_bytes = pipe_bytes  # what its inbox holds unread: more blocks the sender
        self.proc = proc
        self.inbox = inbox
        self.outbox = outbox
        self.progress = progress
        self.known: set[str] = set()
        self.booted = False
        self.chunks: collections.deque[_Chunk] = collections.deque()
        #: ``(seq, pos, ns)``: a CPU-timed item past its wall-clock deadline but within its CPU
        #: budget is looked at again at ``ns``, not before.
        self.recheck = (0, POS_IDLE, 0)

    @property
    def chunk(self) -> _Chunk | None:
        """The chunk the worker is on (the head of its queue)."""
        return self.chunks[0] if self.chunks else None


def _cpu_ns(pid: int) -> int | None:
    """The CPU time (user + system, all threads) process ``pid`` has used, from the kernel's
    accounting (to a clock tick), or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * _CLOCK_TICK_NS
    except (OSError, IndexError, ValueError):
        return None


def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "the worker stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = " (the OS out-of-memory killer does this)" if name == "SIGKILL" else ""
        return f"the worker was killed by {name}{hint}"
    return f"the worker exited with code {returncode}"


class Engine:
    """A pool of killable worker processes.

    Examples:
        >>> with Engine(workers=2) as engine:  # doctest: +SKIP
        ...     outcomes = engine.map(len, ["a", "bb"], timeout_s=1.0)
        >>> [o.value for o in outcomes]  # doctest: +SKIP
        [1, 2]
    """

    def __init__(self, config: EngineConfig | None = None, /, **overrides: Any) -> None:
        cfg = config or EngineConfig()
        if overrides:
            cfg = EngineConfig(**{**cfg.__dict__, **overrides})
        workers = cfg.workers or default_worker_count()
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        memory = _default_memory_mb(workers) if cfg.memory_mb is None else cfg.memory_mb
        self.config = EngineConfig(
            workers=workers,
            memory_mb=memory,
            setup_timeout_s=cfg.setup_timeout_s,
            max_chunk=max(1, cfg.max_chunk),
            worker_output=cfg.worker_output,
        )
        self._lock = threading.Lock()
        self._incoming: list[_Job] = []
        self._jobs: collections.deque[_Job] = collections.deque()
        self._workers: list[_Worker] = []
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = -1, -1
        self._wake_pending = False  # a wake byte is in the pipe: more submits need not write
        self._selector: selectors.BaseSelector | None = None  # the dispatcher's, while it runs
        self._polled_ns = 0  # when workers' exit statuses were last polled
        self._finished: list[_Job] = []  # ``amap`` jobs done, for the loops to hear of at once
        self._closing = False
        self._closed = False
        self._broken: str | None = None
        self._boot_failures = 0
        self._seq = itertools.count(1)
        self._pid = os.getpid()
        self.counters = collections.Counter[str]()
        self._item_s: dict[str, float] = {}  # recent mean seconds per item, by task

    # -- public ------------------------------------------------------------------------------------

    @property
    def workers(self) -> int:
        """The number of worker processes this engine keeps."""
        return int(self.config.workers or 1)

    def start(self) -> Engine:
        """Start the workers now instead of at the first job (they boot in parallel)."""
        with self._lock:
            self._check_usable()
            self._ensure_thread()
        return self

    def submit(
        self,
        task: Task | Callable[[Any], Any],
        payloads: Sequence[Any],
        *,
        timeout_s: float,
        on_outcome: Callable[[int, Outcome], None] | None = None,
    ) -> Future[list[Outcome]]:
        """Queue a job; the future resolves to one ``Outcome`` per payload, in order.

        Args:
            task: A picklable callable (a module-level function or an instance of a module-level
                class); it runs only in workers.
            payloads: Picklable inputs, one item each.
            timeout_s: Hard wall-clock deadline for each item.
            on_outcome: Called as ``(index, outcome)`` from the engine's thread as each item
                finishes, for streaming results. Keep it quick.
        """
        return self._submit(task, payloads, timeout_s, on_outcome, None)

    def _submit(
        self,
        task: Task | Callable[[Any], Any],
        payloads: Sequence[Any],
        timeout_s: float,
        on_outcome: Callable[[int, Outcome], None] | None,
        waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[list[Outcome]]] | None,
    ) -> Future[list[Outcome]]:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        try:
            blob = dumps(task)
        except Exception as exc:
            raise TypeError(
                f"the task {task!r} cannot be sent to a worker ({exc}); use a module-level "
                "function or an instance of a module-level class"
            ) from None
        clock = getattr(task, "deadline_clock", "wall")
        if clock not in ("wall", "cpu"):
            raise ValueError(f"a task's deadline_clock is 'wall' or 'cpu', not {clock!r}")
        key = hashlib.blake2b(blob, digest_size=16).hexdigest()
        job = _Job(key, blob, list(payloads), timeout_s, on_outcome, cpu_clock=clock == "cpu")
        job.waiter = waiter
        if not job.payloads:
            job.future.set_result([])
            if waiter is not None:
                waiter[1].set_result([])
            return job.future
        with self._lock:
            self._check_usable()
            self._incoming.append(job)
            self._ensure_thread()
        self._wake()
        return job.future

    def map(
        self,
        task: Task | Callable[[Any], Any],
        payloads: Sequence[Any],
        *,
        timeout_s: float,
        on_outcome: Callable[[int, Outcome], None] | None = None,
    ) -> list[Outcome]:
        """Run ``task`` on every payload and wait; see ``submit``."""
        future = self.submit(task, payloads, timeout_s=timeout_s, on_outcome=on_outcome)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            self._cancel(future)
            raise

    async def amap(
        self,
        task: Task | Callable[[Any], Any],
        payloads: Sequence[Any],
        *,
        timeout_s: float,
    ) -> list[Outcome]:
        """Async ``map``: awaits the job without blocking the event loop.

        The jobs of one event loop that finish together are handed to it in one call, not one
        cross-thread wake-up each (a server's one-item requests finish many at a time)."""
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[list[Outcome]] = loop.create_future()
        future = self._submit(task, payloads, timeout_s, None, (loop, waiter))
        try:
            return await waiter
        except asyncio.CancelledError:
            self._cancel(future)
            raise

    def close(self) -> None:
        """Stop the workers; unfinished jobs fail with ``cancelled``. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closing = True
            thread = self._thread
        if thread is not None:
            self._wake()
            thread.join()
        with self._lock:
            self._closed = True
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- caller side helpers -----------------------------------------------------------------------

    def _check_usable(self) -> None:
        from truegrade.core import EngineError

        if self._closing or self._closed:
            raise EngineError("this engine is closed; create a new one")
        if os.getpid() != self._pid:
            raise EngineError(
                "this engine belongs to the process that created it; after a fork, create a new "
                "engine (default_engine() does this for you)"
            )
        if self._broken is not None:
            raise EngineError(self._broken)

    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_w, False)
            self._thread = threading.Thread(target=self._run, name="truegrade-engine", daemon=True)
            self._thread.start()

    def _wake(self) -> None:
        if self._wake_pending:
            return  # the dispatcher has yet to read the last wake, and will see this job then
        self._wake_pending = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _cancel(self, future: Future[list[Outcome]]) -> None:
        with self._lock:
            for job in itertools.chain(self._incoming, self._jobs):
                if job.future is future:
                    job.cancelled = True
        self._wake()

    # -- dispatcher thread -------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # pragma: no cover - a bug here must not hang callers
            self._broken = f"the engine's dispatcher failed: {type(exc).__name__}: {exc}"
            self._fail_all(Failure.CRASHED, self._broken)
            self._flush()
            raise
        finally:
            for worker in list(self._workers):
                self._stop_worker(worker, kill=bool(worker.chunks))

    def _loop(self) -> None:
        # one selector for the dispatcher's life (workers are added and removed as they come
        # and go), not one per wait: the loop turns once per message at high request rates
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            while True:
                with self._lock:
                    self._jobs.extend(self._incoming)
                    self._incoming.clear()
                    closing = self._closing
                if closing:
                    self._fail_all(Failure.CANCELLED, "the engine was closed before this item ran")
                    return
                self._drop_cancelled()
                self._ensure_workers()
                self._assign()
                busy = [w for w in self._workers if w.chunk is not None]
                timeout = self._poll_timeout(busy)
                for key, _ in self._selector.select(timeout):
                    worker = key.data
                    if worker is None:
                        with contextlib.suppress(BlockingIOError, OSError):
                            os.read(self._wake_r, 4096)
                        # after reading, and before the loop's top takes the incoming jobs: a
                        # job submitted before this line is taken there; one after it writes
                        self._wake_pending = False
                    elif worker in self._workers:
                        self._receive(worker)
                self._enforce_deadlines()
                self._flush()
        finally:
            self._flush()
            self._selector.close()
            self._selector = None

    def _poll_timeout(self, busy: list[_Worker]) -> float:
        if not busy:
            return 1.0
        now = time.monotonic_ns()
        soonest = 0.05
        for worker in busy:
            chunk = worker.chunk
            assert chunk is not None
            seq, pos, start = worker.progress.read()
            if seq == chunk.seq and 0 <= pos < len(chunk.items):
                due = start + chunk.items[pos][0].timeout_ns
                if worker.recheck[:2] == (seq, pos):
                    due = max(due, worker.recheck[2])
                soonest = min(soonest, max((due - now) / 1e9, 0.0005))
        return soonest

    def _ensure_workers(self) -> None:
        while len(self._workers) < self.workers and self._broken is None:
            try:
                worker = self._spawn()
                self._workers.append(worker)
                if self._selector is not None:
                    self._selector.register(worker.outbox.fileno(), selectors.EVENT_READ, worker)
            except OSError as exc:
                self._broken = f"cannot start a worker process: {exc}"
                self._fail_all(Failure.CRASHED, self._broken)
                return

    def _spawn(self) -> _Worker:
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        progress_fd = make_progress_fd()
        for fd in (to_worker_w, from_worker_w):
            with contextlib.suppress(OSError, AttributeError):
                import fcntl

                fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        pipe_bytes = _PIPE_DEFAULT_BYTES
        with contextlib.suppress(OSError, AttributeError):
            import fcntl

            pipe_bytes = fcntl.fcntl(to_worker_w, getattr(fcntl, "F_GETPIPE_SZ", 1032))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env["TRUEGRADE_WORKER"] = "1"
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env.setdefault(var, "1")
        stdout = subprocess.DEVNULL if self.config.worker_output == "devnull" else None
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "truegrade.exec._worker",
                    str(to_worker_r),
                    str(from_worker_w),
                    str(progress_fd),
                    str(self.config.memory_mb or 0),
                ],
                pass_fds=(to_worker_r, from_worker_w, progress_fd),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                env=env,
                start_new_session=True,
            )
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        progress = Progress(progress_fd)
        os.close(progress_fd)
        self.counters["workers_started"] += 1
        return _Worker(
            proc,
            Connection(to_worker_w, readable=False),
            Connection(from_worker_r, writable=False),
            progress,
            pipe_bytes,
        )

    def _quick(self, key: str) -> bool:
        return self._item_s.get(key, math.inf) < _QUICK_S

    def _stalled(self, worker: _Worker, now: int) -> bool:
        """Whether the worker's current item has run far longer than its task's items do."""
        chunk = worker.chunk
        if chunk is None or not self._quick(chunk.key):
            return False
        seq, pos, start = worker.progress.read()
        limit = max(_STALL_MIN_S, _STALL_FACTOR * self._item_s[chunk.key])
        return seq == chunk.seq and pos >= 0 and (now - start) / 1e9 > limit

    def _assign(self) -> None:
        now = time.monotonic_ns()
        for worker in list(self._workers):
            while len(worker.chunks) < _PREFETCH and self._jobs:
                if worker.chunks and self._stalled(worker, now):
                    break
                job = self._next_job()
                if job is None:
                    return
                quick = self._quick(job.key)
                if worker.chunks and not quick:
                    break  # a slow task's item waits for an idle worker, never in a queue
                items = self._take(job, quick)
                seq = next(self._seq)
                messages = [dumps(("chunk", seq, job.key, [j.payloads[i] for j, i in items]))]
                if job.key not in worker.known:
                    messages.insert(0, dumps(("task", job.key, job.blob)))
                if worker.chunks and sum(map(len, messages)) > worker.pipe_bytes - 64:
                    # Sent ahead to a busy worker, a message its inbox cannot hold would block
                    # this thread until the worker reads it, while the worker may be blocked
                    # writing answers this thread no longer reads. It goes when the worker is
                    # idle (reading) instead.
                    for taken, index in reversed(items):
                        taken.retry.appendleft(index)
                    break
                chunk = _Chunk(job.key, seq, items)
                worker.chunks.append(chunk)
                try:
                    for message in messages:
                        worker.inbox.send_bytes(message)
                    worker.known.add(job.key)
                except (BrokenPipeError, OSError):
                    self._retire(worker, blame=None)
                    break

    def _take(self, job: _Job, quick: bool) -> list[tuple[_Job, int]]:
        """The items of the next chunk: one of a slow task's; for a quick task a share of the
        pending items of every job running it, starting with ``job``, so concurrent small jobs
        (a server's one-item requests) travel together."""
        if not quick:
            return [(job, self._pop(job))]
        same = [job, *(j for j in self._jobs if j is not job and j.key == job.key)]
        pending = sum(j.pending() for j in same if not j.cancelled)
        size = max(1, min(self.config.max_chunk, math.ceil(pending / (_PREFETCH * self.workers))))
        items: list[tuple[_Job, int]] = []
        for other in same:
            while len(items) < size and other.pending() and not other.cancelled:
                items.append((other, self._pop(other)))
        return items

    @staticmethod
    def _pop(job: _Job) -> int:
        if job.retry:
            return job.retry.popleft()
        job.next_index += 1
        return job.next_index - 1

    def _next_job(self) -> _Job | None:
        for _ in range(len(self._jobs)):
            job = self._jobs[0]
            self._jobs.rotate(-1)  # round-robin among concurrent jobs
            if job.pending() and not job.cancelled:
                return job
        return None

    def _receive(self, worker: _Worker) -> None:
        try:
            while worker.outbox.poll():
                message = safe_loads(worker.outbox.recv_bytes())
                self._handle(worker, message)
        except (EOFError, OSError):
            self._retire(worker, blame=None)
        except pickle.UnpicklingError as exc:
            self.counters["protocol_errors"] += 1
            self._retire(worker, blame=None, why=f"the worker broke protocol: {exc}")

    def _handle(self, worker: _Worker, message: Any) -> None:
        kind = message[0]
        if kind == "ready":
            worker.booted = True
            self._boot_failures = 0
            return
        if kind != "results":
            raise pickle.UnpicklingError(f"unexpected message {kind!r}")
        _, seq, first, statuses, values, starts, end_ns = message
        chunk = worker.chunk
        count = len(values)
        if (
            chunk is None
            or seq != chunk.seq
            or first != chunk.done
            or len(statuses) != count
            or len(starts) != count
            or chunk.done + count > len(chunk.items)
        ):
            raise pickle.UnpicklingError("results out of sequence")
        items = chunk.items[first : first + count]
        ends = [*starts[1:], end_ns]
        finished: list[_Job] = []
        make = tuple.__new__  # skips the named tuple's Python-level __new__
        for (job, index), status, value, start, end in zip(
            items, statuses, values, starts, ends, strict=True
        ):
            if job.outcomes[index] is not None:
                continue  # cancelled, or run again elsewhere after this worker stalled
            elapsed = (end - start) / 1e9
            if status == STATUS_OK:
                outcome = make(Outcome, (True, value, None, "", elapsed))
            else:
                kind = Failure.MEMORY if status == STATUS_MEMORY else Failure.EXCEPTION
                outcome = Outcome(False, None, kind, str(value), elapsed)
                self.counters[kind] += 1
            job.outcomes[index] = outcome
            job.remaining -= 1
            if job.on_outcome is not None and not job.cancelled:
                self._notify(job, index, outcome)
            if job.remaining == 0:
                finished.append(job)
        mean = (end_ns - starts[0]) / 1e9 / count
        recent = self._item_s.get(chunk.key)
        self._item_s[chunk.key] = mean if recent is None else 0.8 * recent + 0.2 * mean
        chunk.done += count
        self.counters["items"] += count
        if chunk.done >= len(chunk.items):
            worker.chunks.popleft()
            if worker.chunks:  # the next chunk's clock starts now, not when it was queued
                worker.chunks[0].dispatched_ns = time.monotonic_ns()
        for job in finished:
            self._finish(job)

    def _notify(self, job: _Job, index: int, outcome: Outcome) -> None:
        callback = job.on_outcome
        if callback is None:
            return
        try:
            callback(index, outcome)
        except BaseException as exc:  # reported through the future
            job.on_outcome = None
            if not job.future.done():
                job.future.set_exception(exc)

    def _finish(self, job: _Job) -> None:
        if not job.future.done():
            job.future.set_result([o for o in job.outcomes if o is not None])
        if job.waiter is not None and not job.waiter[1].done():
            self._finished.append(job)
        with contextlib.suppress(ValueError):
            self._jobs.remove(job)

    def _flush(self) -> None:
        """Hand finished ``amap`` jobs to their event loops: one call per loop."""
        if not self._finished:
            return
        by_loop: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
        for job in self._finished:
            assert job.waiter is not None
            by_loop.setdefault(job.waiter[0], []).append(job)
        self._finished = []
        for loop, jobs in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting
                loop.call_soon_threadsafe(_resolve, jobs)

    def _settle(self, job: _Job, index: int, outcome: Outcome) -> None:
        """Record one outcome decided by the dispatcher (kills, crashes, cancellations)."""
        if job.outcomes[index] is not None:
            return
        job.outcomes[index] = outcome
        job.remaining -= 1
        self.counters["items"] += 1
        if outcome.failure:
            self.counters[outcome.failure] += 1
        if not job.cancelled:
            self._notify(job, index, outcome)
        if job.remaining == 0:
            self._finish(job)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic_ns()
        # a dead worker's outbox reads as closed, which the selector reports at once; polling
        # exit statuses is the backstop, and a system call per worker, so it runs every 50 ms
        poll = now - self._polled_ns > 50_000_000
        if poll:
            self._polled_ns = now
        for worker in list(self._workers):
            chunk = worker.chunk
            if poll and worker.proc.poll() is not None and worker in self._workers:
                self._receive(worker)  # take what it sent before dying
                if worker in self._workers:
                    self._retire(worker, blame=None)
                continue
            if chunk is None:
                continue
            seq, pos, start, cpu_start = worker.progress.read_cpu()
            if seq == chunk.seq and 0 <= pos < len(chunk.items):
                job = chunk.items[pos][0]
                overrun = (
                    self._overrun(worker, job, (seq, pos), now - start, cpu_start, now)
                    if now - start > job.timeout_ns
                    and not (worker.recheck[:2] == (seq, pos) and now < worker.recheck[2])
                    else None
                )
                if overrun is not None:
                    self._receive(worker)
                    if worker in self._workers and worker.chunk is chunk and chunk.done <= pos:
                        self._retire(
                            worker,
                            blame=pos,
                            failure=overrun[0],
                            why=overrun[1],
                            elapsed=(now - start) / 1e9,
                        )
                elif self._stalled(worker, now):
                    # what waits behind the stalled item goes to other workers now; if this one
                    # gets to it after all, its answers for items already done are ignored
                    # (with those it finished but had not yet reported when it stalled)
                    chunk.requeue(p for p in range(chunk.done, len(chunk.items)) if p != pos)
                    for later in list(worker.chunks)[1:]:
                        later.requeue(range(later.done, len(later.items)))
            elif (
                seq != chunk.seq or pos == POS_SETUP
            ) and now - chunk.dispatched_ns > self.config.setup_timeout_s * 1e9:
                self._retire(
                    worker,
                    blame="all",
                    failure=Failure.TIMEOUT,
                    why=f"the worker did not start the task within {self.config.setup_timeout_s:g}"
                    " s (setup_timeout_s)",
                )

    def _overrun(
        self,
        worker: _Worker,
        job: _Job,
        at: tuple[int, int],
        wall_ns: int,
        cpu_start: int,
        now: int,
    ) -> tuple[str, str] | None:
        """Why the item at ``at`` (past its wall-clock deadline) must be stopped, or None.

        A wall-clock task's deadline is the wall clock's. A CPU-timed one is stopped when its
        worker has used more CPU time than the deadline since the item began (a timeout), or at
        the wall-clock backstop having used less (``starved``: the machine or a wait, not the
        item, took the time, so there is no verdict); otherwise it is looked at again when its
        remaining budget could at the soonest be spent.
        """
        limit = job.timeout_ns / 1e9
        used = _cpu_ns(worker.proc.pid) if job.cpu_clock and cpu_start > 0 else None
        if used is None:
            return (
                Failure.TIMEOUT,
                f"the item ran past its {limit:g} s deadline; its worker was killed and replaced",
            )
        used -= cpu_start
        if used > job.timeout_ns:
            return (
                Failure.TIMEOUT,
                f"the item used more than its {limit:g} s of CPU time; its worker was killed "
                "and replaced",
            )
        backstop_ns = int((WALL_FACTOR * limit + WALL_EXTRA_S) * 1e9)
        if wall_ns > backstop_ns:
            return (
                Failure.STARVED,
                f"the item had {used / 1e9:.2f} s of CPU time in {wall_ns / 1e9:.1f} s, the "
                f"wall-clock backstop of its {limit:g} s CPU budget: the machine is too loaded "
                "(or the item waited), so it was not graded; its worker was replaced",
            )
        wait = max(job.timeout_ns - used, _RECHECK_MIN_NS)
        worker.recheck = (*at, min(now + wait, now - wall_ns + backstop_ns + 1))
        return None

    def _retire(
        self,
        worker: _Worker,
        *,
        blame: int | str | None,
        failure: str = Failure.CRASHED,
        why: str | None = None,
        elapsed: float = 0.0,
    ) -> None:
        """Kill a worker and account for every item of its chunk; start a replacement."""
        if worker not in self._workers:
            return
        self._workers.remove(worker)
        if self._selector is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(worker.outbox.fileno())
        queued = list(worker.chunks)
        worker.chunks.clear()
        chunk = queued[0] if queued else None
        in_setup = False
        if chunk is not None and blame is None:
            seq, pos, _ = worker.progress.read()
            if seq == chunk.seq and pos >= 0:
                blame = pos
            elif seq == chunk.seq and pos == POS_SETUP:
                in_setup = True
        for later in reversed(queued[1:]):  # never started: back to the front of their queues
            later.requeue(range(later.done, len(later.items)))
        self._stop_worker(worker, kill=True)
        returncode = worker.proc.returncode
        if failure == Failure.CRASHED:
            self.counters["worker_deaths"] += 1
        if not worker.booted and failure == Failure.CRASHED:
            self._boot_failures += 1
            if self._boot_failures >= _MAX_BOOT_FAILURES:
                self._broken = (
                    f"worker processes die before they start ({_signal_name(returncode)}); "
                    f"check that '{sys.executable} -m truegrade.exec._worker' can import truegrade"
                )
        if chunk is not None and self._broken is not None:
            for job, index in chunk.items[chunk.done :]:
                self._settle(job, index, Outcome(False, None, Failure.CRASHED, self._broken))
        elif chunk is not None:
            reason = why or _signal_name(returncode)
            for local in reversed(range(chunk.done, len(chunk.items))):
                job, index = chunk.items[local]
                if job.outcomes[index] is not None or local in chunk.rescued:
                    continue
                if blame == "all" or in_setup or blame == local:
                    self._settle(job, index, Outcome(False, None, failure, reason, elapsed))
                elif isinstance(blame, int):
                    job.retry.appendleft(index)  # innocent: it finished or never started
                else:
                    # the worker died between items: nobody to blame, so count the attempt
                    tries = job.attempts.get(index, 0) + 1
                    job.attempts[index] = tries
                    if tries >= _MAX_ATTEMPTS:
                        self._settle(
                            job,
                            index,
                            Outcome(
                                False,
                                None,
                                Failure.CRASHED,
                                f"{tries} workers died while this item was queued in them "
                                f"(last: {reason})",
                            ),
                        )
                    else:
                        job.retry.appendleft(index)
        if self._broken is not None:
            self._fail_all(Failure.CRASHED, self._broken)

    def _stop_worker(self, worker: _Worker, *, kill: bool = False) -> None:
        if not kill and worker.proc.poll() is None:
            with contextlib.suppress(OSError):
                worker.inbox.send_bytes(dumps(("stop",)))
            try:
                worker.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                kill = True
        if kill or worker.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(worker.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(timeout=10)
        for conn in (worker.inbox, worker.outbox):
            with contextlib.suppress(OSError):
                conn.close()
        with contextlib.suppress(BufferError, ValueError):
            worker.progress.close()

    def _drop_cancelled(self) -> None:
        for job in list(self._jobs):
            if job.cancelled:
                for i, outcome in enumerate(job.outcomes):
                    if outcome is None:
                        job.outcomes[i] = Outcome(False, None, Failure.CANCELLED, "cancelled")
                        self.counters[Failure.CANCELLED] += 1
                job.remaining = 0
                job.retry.clear()
                job.next_index = len(job.payloads)
                self._jobs.remove(job)
                now = time.monotonic_ns()
                for worker in list(self._workers):
                    chunk = worker.chunk
                    if chunk is None or (self._quick(chunk.key) and not self._stalled(worker, now)):
                        continue  # a quick item ends soon; its answer is ignored
                    seq, pos, _ = worker.progress.read()
                    if seq == chunk.seq and 0 <= pos < len(chunk.items):
                        if chunk.items[pos][0] is job:
                            # a slow item of a cancelled job: the worker is freed for others
                            self._retire(
                                worker, blame=pos, failure=Failure.CANCELLED, why="cancelled"
                            )
                    elif all(owner is job for owner, _ in chunk.items):
                        self._retire(
                            worker, blame="all", failure=Failure.CANCELLED, why="cancelled"
                        )

    def _fail_all(self, failure: str, why: str) -> None:
        with self._lock:
            self._jobs.extend(self._incoming)
            self._incoming.clear()
        for job in list(self._jobs):
            for i, outcome in enumerate(job.outcomes):
                if outcome is None:
                    self._settle(job, i, Outcome(False, None, failure, why))
        self._jobs.clear()


def _resolve(jobs: list[_Job]) -> None:
    """In the event loop: give each finished ``amap`` its outcomes (or its failure)."""
    for job in jobs:
        assert job.waiter is not None
        waiter = job.waiter[1]
        if waiter.done():
            continue  # its caller was cancelled
        error = job.future.exception()
        if error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(job.future.result())


# -- the process-wide default engine ---------------------------------------------------------------

_default: Engine | None = None
_default_config = EngineConfig()
_default_lock = threading.Lock()


def configure_default_engine(config: EngineConfig | None = None, /, **overrides: Any) -> None:
    """Set the settings of the engine graders use when none is given; restarts it if running."""
    global _default, _default_config
    base = config or _default_config
    with _default_lock:
        _default_config = EngineConfig(**{**base.__dict__, **overrides})
        old, _default = _default, None
    if old is not None and old._pid == os.getpid():
        old.close()


def default_engine() -> Engine:
    """The shared engine, created on first use (and anew in a forked child)."""
    global _default
    with _default_lock:
        if _default is None or _default._pid != os.getpid() or _default._closing:
            _default = Engine(_default_config)
        return _default


@atexit.register
def _close_default() -> None:
    engine = _default
    if engine is not None and engine._pid == os.getpid():
        engine.close()
