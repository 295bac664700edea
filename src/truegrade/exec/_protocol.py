"""Wire format between the engine and its workers.

Messages are pickles over pipes. The engine only unpickles what a worker sends through
``safe_loads``, which refuses to resolve any global except a short list of builtin value types:
a worker that was somehow subverted by the data it graded cannot make the engine's process import
or call anything. Workers unpickle what the engine sends with the normal unpickler (it is ours).

Progress is not sent as messages: each worker writes ``(chunk seq, item position, start time,
CPU time at the start)`` into a small shared memory block before every item, so the engine knows
to the item which one is running, since when and (for tasks timed in CPU time) from what CPU
reading, without a message per item.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import sys
import tempfile
from typing import Any

__all__ = [
    "PROGRESS_SLOTS",
    "STATUS_EXCEPTION",
    "STATUS_MEMORY",
    "STATUS_OK",
    "Progress",
    "dumps",
    "make_progress_fd",
    "safe_loads",
]

STATUS_OK = 0
STATUS_EXCEPTION = 1
STATUS_MEMORY = 2

PROGRESS_SLOTS = 4  # seq, pos, start_ns, cpu_ns (the worker's CPU time; 0: not read)
POS_IDLE = -1
POS_SETUP = -2

_SAFE_GLOBALS = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "bytearray"),
    ("builtins", "slice"),
    ("builtins", "range"),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"a worker sent a reference to {module}.{name}; only plain data may leave a worker"
        )


def safe_loads(data: bytes) -> Any:
    """Unpickle data from a worker, allowing builtin values only (no classes, no callables)."""
    return _SafeUnpickler(io.BytesIO(data)).load()


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def make_progress_fd() -> int:
    """A file descriptor for a small shared block the parent and one worker both map, reading
    as an idle worker (``pos`` is ``POS_IDLE``) until the worker writes to it: a block of zeros
    would say that item 0 of chunk 0 has run since the clock's zero, and a reader that caught a
    new worker between its writes of ``seq`` and ``pos`` would see item 0 of the new chunk
    running for as long as the machine has been up."""
    size = PROGRESS_SLOTS * 8
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None:
        fd = int(memfd("truegrade-progress", 0))
    else:  # pragma: no cover - non-Linux fallback
        with tempfile.TemporaryFile() as handle:
            fd = os.dup(handle.fileno())
    os.ftruncate(fd, size)
    os.pwrite(fd, POS_IDLE.to_bytes(8, sys.byteorder, signed=True), 8)
    return fd


class Progress:
    """A view of the shared progress block: ``seq``, ``pos``, ``start_ns`` and ``cpu_ns`` as
    int64 slots."""

    def __init__(self, fd: int) -> None:
        self._map = mmap.mmap(fd, PROGRESS_SLOTS * 8)
        self.slots = memoryview(self._map).cast("q")

    def read(self) -> tuple[int, int, int]:
        """A consistent ``(seq, pos, start_ns)``: re-read if the worker moved on mid-read."""
        seq, pos, start, _ = self.read_cpu()
        return seq, pos, start

    def read_cpu(self) -> tuple[int, int, int, int]:
        """A consistent ``(seq, pos, start_ns, cpu_ns)``."""
        slots = self.slots
        while True:
            seq, pos, start, cpu = slots[0], slots[1], slots[2], slots[3]
            if slots[1] == pos and slots[0] == seq:
                return seq, pos, start, cpu

    def close(self) -> None:
        self.slots.release()
        self._map.close()
