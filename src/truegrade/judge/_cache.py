"""``JudgeCache``: a content-addressed SQLite store of judge completions, so a rerun is free.

Keys are ``ChatRequest.cache_key``: a hash of the model, template version, messages, sampling
parameters and seed. Values are the completions as JSON. The database runs in WAL mode, so
several processes can read while one writes, and a killed run keeps every answer it committed.

The cache also keeps one random secret, created with the database. Graders derive the fences
around untrusted text from it: stable across reruns (so the cache hits) but unguessable by the
text being fenced. The secret never leaves the database file and never enters a key.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from truegrade.core import DataError, SpecError, check_file

__all__ = ["JudgeCache", "default_cache_path", "open_cache"]


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/truegrade/judge.sqlite`` (``~/.cache/...`` when unset)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truegrade" / "judge.sqlite"


def open_cache(option: str | None, base_dir: Path | None = None) -> JudgeCache | None:
    """The cache a grader's ``cache`` option names: ``default``
    (``$XDG_CACHE_HOME/truegrade/judge.sqlite``, ``~/.cache/...`` when unset), a
    SQLite path (relative to ``base_dir``, the spec file's directory, when given), or None."""
    if option is None:
        return None
    if option == "default":
        path = default_cache_path()
    else:
        path = Path(option)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
    try:
        return JudgeCache(path)
    except DataError as exc:  # named in a spec: the spec's error, the file still named
        raise SpecError(str(exc)) from None


class JudgeCache:
    """A SQLite cache of completions, safe to share between threads and processes.

    Args:
        path: The database file (created with its directory), or ``":memory:"``.

    Raises:
        DataError: the path is a directory or a FIFO, or a file that is not SQLite, or it
            cannot be created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._open()
        except sqlite3.DatabaseError as exc:  # a file that is not SQLite, or not writable
            raise DataError(
                f"judge cache is not a usable SQLite database: {exc}", path=self.path
            ) from None
        self.hits = 0
        self.misses = 0

    def _open(self) -> None:
        if self.path != ":memory:":
            where = Path(self.path)
            if where.exists():
                check_file(where, "judge cache")  # a directory or a FIFO named as the cache
            try:
                where.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DataError(
                    f"judge cache cannot be created: {exc.strerror or exc}", path=self.path
                ) from None
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS completions "
            "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self._db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('secret', ?)", (secrets.token_hex(32),)
        )
        self._db.commit()
        row = self._db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
        self._secret = bytes.fromhex(row[0])

    def __repr__(self) -> str:
        return f"JudgeCache({self.path!r})"

    @property
    def secret(self) -> bytes:
        """The database's random secret (for deriving unguessable, stable fences)."""
        return self._secret

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored completion for ``key``, or None."""
        with self._lock:
            row = self._db.execute("SELECT value FROM completions WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        value: dict[str, Any] = json.loads(row[0])
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store a completion (committed at once: a killed run keeps it)."""
        text = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?)", (key, text, time.time())
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def clear(self) -> None:
        """Forget every completion (the secret stays)."""
        with self._lock:
            self._db.execute("DELETE FROM completions")
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
