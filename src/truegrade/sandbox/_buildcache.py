"""A content-addressed cache of builds: the same inputs built twice are built once.

In a batch of graded programs the same program often comes back (a GRPO group's identical
answers, a checker built for every response), and compiling it again is most of its cost. A
build's *key* is a hash of everything that goes into it, read on this side of the sandbox:

* the source files, name and bytes, in order, and which outputs are kept;
* the command line, the environment, the time and memory limits, the sandbox's configuration
  and isolation mode;
* the identity of the toolchain's executable on the host (device, inode, size, time).

Why a program cannot poison it. Two builds share an entry only when every one of those inputs
is equal, so a program can only ever be handed the output of a build of itself, byte for byte.
What is kept is what the build made, copied out of the sandbox right after the build, before any
run of it: no run ever executes in the zygote's copy, and the kept bytes live in this process,
which no sandboxed process can reach. A cached build is installed into the sandbox like a fresh
one, and each run still starts from an emptied scratch directory with the image written back,
so a run that changes its files changes nothing the next run or the cache sees. Only builds that
succeeded are kept: a failed build (an error, a timeout) is built again next time, so a
program's verdict never depends on the load of the machine when another copy of it was built.

The cache is bounded in entries and in bytes, least recently used dropped first. Concurrent
builds of one key (two workers' threads handed the same program) wait for the first instead of
compiling twice; if it fails, the next one builds.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from truegrade.sandbox._sandbox import RunResult

__all__ = ["BuildCache", "CachedBuild", "build_key"]


@dataclass(frozen=True)
class CachedBuild:
    """A successful build: its result (the compiler's messages) and what it kept.

    Attributes:
        result: The build's own result, as the first build reported it.
        files: ``(name, mode, bytes)`` of each kept file.
    """

    result: RunResult
    files: tuple[tuple[str, int, bytes], ...]

    @property
    def size(self) -> int:
        return sum(len(data) for _, _, data in self.files)


def _tool_identity(path: str) -> list[int] | None:
    """What tells one installed toolchain from the next: an upgrade replaces the file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]


def build_key(
    *,
    sandbox: str,
    files: dict[str, bytes],
    argv: list[str] | None,
    keep: list[str],
    header: dict[str, Any],
) -> str:
    """The key of one build: a hash of all that goes into it (see the module docstring).

    Args:
        sandbox: The sandbox's configuration and isolation mode, as text.
        files: The source files, in the order they are written.
        argv: The build command (None: nothing to build).
        keep: The patterns of the files kept.
        header: The build's task header (limits, environment, timeouts).
    """
    whole = {
        "sandbox": sandbox,
        "files": [[name, hashlib.sha256(data).hexdigest()] for name, data in files.items()],
        "argv": argv,
        "tool": _tool_identity(argv[0]) if argv else None,
        "keep": keep,
        "header": {k: v for k, v in header.items() if k != "files"},
    }
    text = json.dumps(whole, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class BuildCache:
    """Successful builds by key, least recently used dropped first (thread-safe).

    Attributes:
        max_entries / max_bytes: The bounds; a build larger than ``max_bytes`` is not kept.
        hits / misses / evictions: Counts since creation (or ``clear``).
    """

    def __init__(self, max_entries: int = 512, max_bytes: int = 128 << 20) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a build cache needs room for at least one entry")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, CachedBuild] = OrderedDict()
        self._bytes = 0
        self._building: dict[str, int] = {}  # key -> the thread building it
        self._changed = threading.Condition()
        self.hits = self.misses = self.evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._bytes

    def claim(self, key: str, wait_s: float) -> CachedBuild | None:
        """The build of ``key``, or None: then the caller builds it and must call ``finish``.

        While another thread builds the same key, wait for it (at most ``wait_s``): its
        success is a hit; its failure, or the wait running out, makes this caller the builder.
        """
        deadline = time.monotonic() + wait_s
        me = threading.get_ident()
        with self._changed:
            while True:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return entry
                builder = self._building.get(key)
                left = deadline - time.monotonic()
                if builder is None or builder == me or left <= 0:
                    self._building.setdefault(key, me)
                    self.misses += 1
                    return None
                self._changed.wait(left)

    def finish(self, key: str, entry: CachedBuild | None) -> None:
        """The outcome of a claimed build: kept when it succeeded (``entry``), else dropped."""
        with self._changed:
            if self._building.get(key) == threading.get_ident():
                del self._building[key]
            if entry is not None and entry.size <= self.max_bytes and key not in self._entries:
                self._entries[key] = entry
                self._bytes += entry.size
                while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                    _, dropped = self._entries.popitem(last=False)
                    self._bytes -= dropped.size
                    self.evictions += 1
            self._changed.notify_all()

    def clear(self) -> None:
        """Drop every entry and reset the counts."""
        with self._changed:
            self._entries.clear()
            self._bytes = 0
            self.hits = self.misses = self.evictions = 0
