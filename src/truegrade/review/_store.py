"""A review project: one SQLite file holding the items, the criteria (every version), the
experts and their labels, the grader's verdicts, and an append-only log of every action.

Why SQLite: one file per project that a domain expert can copy, back up or mail; WAL so that
readers (the dashboard) never block the writer (a label), and a label acknowledged to the
browser is on disk (``synchronous=FULL``); the schema's version in ``PRAGMA user_version`` so a
newer truegrade can refuse, or upgrade, an older project. Every write is one transaction through
``ReviewStore.write`` (``BEGIN IMMEDIATE``: writers queue on the lock rather than fail with
"database is locked"), and the event log cannot be edited or deleted (triggers refuse it).

Labels are keyed by (item, criterion *version*, expert): a second tab of the same expert
updates the one label, and a criterion's new wording starts with no label (the old ones stay
with the old text, as history).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from truegrade.core import DataError

__all__ = [
    "ROLES",
    "SCHEMA_VERSION",
    "Criterion",
    "Item",
    "Label",
    "ReviewStore",
    "ReviewVerdict",
    "SlotsTaken",
    "User",
]

SCHEMA_VERSION = 1
ROLES = ("expert", "viewer", "admin")
"""An expert labels; a viewer reads the numbers; an admin manages experts, criteria and exports."""

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('expert', 'viewer', 'admin')),
    password TEXT
);
CREATE TABLE items(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    prompt TEXT NOT NULL,
    response TEXT NOT NULL,
    category TEXT,
    cluster TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'data',
    attack TEXT
);
CREATE TABLE criteria(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    version INTEGER NOT NULL,
    item_id INTEGER REFERENCES items(id),
    text TEXT NOT NULL,
    points REAL NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    author TEXT NOT NULL,
    created TEXT NOT NULL,
    current INTEGER NOT NULL DEFAULT 1,
    UNIQUE (key, version)
);
CREATE TABLE labels(
    item_id INTEGER NOT NULL REFERENCES items(id),
    criterion_id INTEGER NOT NULL REFERENCES criteria(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    met INTEGER NOT NULL CHECK (met IN (0, 1)),
    reason TEXT NOT NULL DEFAULT '',
    disputes_grader INTEGER NOT NULL DEFAULT 0,
    updated TEXT NOT NULL,
    PRIMARY KEY (item_id, criterion_id, user_id)
);
CREATE TABLE verdicts(
    item_id INTEGER NOT NULL REFERENCES items(id),
    criterion_id INTEGER NOT NULL REFERENCES criteria(id),
    met INTEGER CHECK (met IN (0, 1)),
    explanation TEXT NOT NULL DEFAULT '',
    error TEXT,
    PRIMARY KEY (item_id, criterion_id)
);
CREATE TABLE assignments(
    item_id INTEGER NOT NULL REFERENCES items(id),
    slot INTEGER NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (item_id, slot),
    UNIQUE (item_id, user_id)
);
CREATE TABLE events(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TABLE sessions(
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    csrf TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX labels_by_criterion ON labels(criterion_id);
CREATE INDEX criteria_by_item ON criteria(item_id);
"""


_HELD_UNFINISHED = (
    "SELECT id FROM items WHERE EXISTS (SELECT 1 FROM assignments WHERE item_id = items.id AND "
    "user_id = :user) AND "
    "(SELECT count(*) FROM criteria WHERE current = 1 AND (item_id = items.id OR item_id IS "
    "NULL)) > (SELECT count(*) FROM labels JOIN criteria ON criteria.id = labels.criterion_id "
    "WHERE criteria.current = 1 AND labels.item_id = items.id AND labels.user_id = :user) "
    "ORDER BY id LIMIT :count"
)
"""The items an expert holds a slot on and has not finished labelling."""
_FREE_UNFINISHED = (
    "SELECT id FROM items WHERE NOT EXISTS (SELECT 1 FROM assignments WHERE item_id = items.id "
    "AND user_id = :user) AND (:limit IS NULL OR (SELECT count(*) FROM assignments WHERE "
    "item_id = items.id) < :limit) AND "
    "(SELECT count(*) FROM criteria WHERE current = 1 AND (item_id = items.id OR item_id IS "
    "NULL)) > (SELECT count(*) FROM labels JOIN criteria ON criteria.id = labels.criterion_id "
    "WHERE criteria.current = 1 AND labels.item_id = items.id AND labels.user_id = :user) "
    "ORDER BY id LIMIT :count"
)
"""The items an expert holds no slot on, with a free one, that they have not finished."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$<salt hex>$<hash hex>`` (the standard library's scrypt: no dependency, memory
    hard, so a stolen project file does not give the passwords away cheaply)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored or not stored.startswith("scrypt$"):
        return False
    _, salt, _ = stored.split("$", 2)
    return hmac.compare_digest(hash_password(password, salt=bytes.fromhex(salt)), stored)


class SlotsTaken(DataError):
    """Every slot of an item is held by another expert (see ``experts_per_item``)."""


class EditConflict(DataError):
    """A criterion was edited from a version that is no longer the current one."""

    def __init__(self, base: Criterion, now: Criterion, attempted: str) -> None:
        self.base, self.now, self.attempted = base, now, attempted
        super().__init__(
            f"criterion {base.key} was edited from version {base.version}, but version "
            f"{now.version} (by {now.author}) is current now: nothing was saved"
        )

    def diff(self) -> str:
        """The current text against the one that was being saved, as a unified diff."""
        return "".join(
            difflib.unified_diff(
                self.now.text.splitlines(keepends=True),
                self.attempted.splitlines(keepends=True),
                f"version {self.now.version} (current)",
                "your edit",
            )
        )


@dataclass(frozen=True)
class User:
    """A person of the project: an expert labels, a viewer reads, an admin manages."""

    id: int
    name: str
    role: str


@dataclass(frozen=True)
class Item:
    """A response to judge, with the conversation it answers."""

    id: int
    key: str
    prompt: Any
    """The conversation (a list of messages) or the prompt's text."""
    response: str
    category: str | None
    cluster: str
    source: str
    """``data``, or ``attack`` (a response an attack found rewarded)."""
    attack: str | None


@dataclass(frozen=True)
class Criterion:
    """One version of a criterion's wording; a new wording is a new version."""

    id: int
    key: str
    version: int
    item_id: int | None
    """The item it belongs to (HealthBench: each conversation has its own), or None for all."""
    text: str
    points: float
    tags: tuple[str, ...]
    author: str
    created: str
    current: bool


@dataclass(frozen=True)
class Label:
    """An expert's verdict on one criterion of one item, and why."""

    item_id: int
    criterion_id: int
    user: str
    met: bool
    reason: str
    disputes_grader: bool
    updated: str


@dataclass(frozen=True)
class ReviewVerdict:
    """The grader's verdict on one criterion of one item (None: it gave none)."""

    item_id: int
    criterion_id: int
    met: bool | None
    explanation: str
    error: str | None


class ReviewStore:
    """The project's database (see the module docstring).

    Raises:
        DataError: the file is not a review project, or one of a newer schema.
    """

    FILE = "review.sqlite"

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir() or not self.path.suffix:
            self.path = self.path / self.FILE
        exists = self.path.exists()
        if exists and not self.path.is_file():
            raise DataError(f"{self.path}: not a review project's database (not a file)")
        if not exists and not create:
            raise DataError(
                f"{self.path}: no review project here (make one: truegrade review init)"
            )
        if exists and create:
            raise DataError(f"{self.path}: a review project is already here")
        if create:
            _new_directory(self.path.parent)
        self._local = threading.local()
        self._opened: dict[int | None, sqlite3.Connection] = {}  # by the thread that opened it
        self._guard = threading.Lock()
        try:
            db = self._db
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self.close()
            raise DataError(f"{self.path}: not a review project's database ({exc})") from None
        if create:
            with self.write():
                for statement in _split(_SCHEMA):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise DataError(
                f"{self.path}: schema version {version}, this truegrade reads {SCHEMA_VERSION}"
            )

    @property
    def _db(self) -> sqlite3.Connection:
        """This thread's connection (a connection is never shared between threads: the app's
        requests run on a pool of them, and one transaction must not see another's)."""
        found: sqlite3.Connection | None = getattr(self._local, "db", None)
        if found is None:
            found = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            found.row_factory = sqlite3.Row
            found.execute("PRAGMA journal_mode=WAL")
            found.execute("PRAGMA synchronous=FULL")
            found.execute("PRAGMA foreign_keys=ON")
            found.execute("PRAGMA busy_timeout=30000")
            self._local.db = found
            with self._guard:
                # the connections of threads that have ended are closed here: a server's pool
                # of threads comes and goes, and each connection holds three files open
                alive = {t.ident for t in threading.enumerate()}
                for ident in [i for i in self._opened if i not in alive]:
                    self._opened.pop(ident).close()
                self._opened[threading.get_ident()] = found
        return found

    def close(self) -> None:
        with self._guard:
            for db in self._opened.values():
                db.close()
            self._opened.clear()
        self._local = threading.local()

    def __del__(self) -> None:
        # a store dropped without close() (an app that ends with its test) leaves no file open
        opened = getattr(self, "_opened", None)
        for db in list(opened.values()) if opened else []:
            db.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it lands, or none."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return list(self._db.execute(sql, args))

    # -- the log ----------------------------------------------------------------------------------

    def log(self, db: sqlite3.Connection, actor: str, kind: str, detail: Mapping[str, Any]) -> None:
        """Append one event (inside the caller's transaction, so it lands with the change)."""
        db.execute(
            "INSERT INTO events(at, actor, kind, detail) VALUES (?, ?, ?, ?)",
            (_now(), actor, kind, json.dumps(detail, sort_keys=True, ensure_ascii=False)),
        )

    def last_event(self) -> int:
        """The id of the newest event: every change appends one, so numbers computed at one id
        stay right until it moves."""
        return int(self.query("SELECT coalesce(max(id), 0) AS id FROM events")[0]["id"])

    def events(self) -> list[dict[str, Any]]:
        return [
            {
                "id": r["id"],
                "at": r["at"],
                "actor": r["actor"],
                "kind": r["kind"],
                "detail": json.loads(r["detail"]),
            }
            for r in self.query("SELECT * FROM events ORDER BY id")
        ]

    # -- meta -------------------------------------------------------------------------------------

    def set_meta(self, db: sqlite3.Connection, key: str, value: Any) -> None:
        db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value, sort_keys=True)),
        )

    def meta(self, key: str, default: Any = None) -> Any:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return json.loads(rows[0]["value"]) if rows else default

    # -- users ------------------------------------------------------------------------------------

    def add_user(
        self, name: str, role: str, password: str | None = None, *, actor: str = "cli"
    ) -> User:
        if role not in ROLES:
            raise DataError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if not name.strip() or len(name) > 80:
            raise DataError("a user's name must be 1 to 80 characters")
        with self.write() as db:
            if db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                raise DataError(f"a user named {name!r} already exists")
            cursor = db.execute(
                "INSERT INTO users(name, role, password) VALUES (?, ?, ?)",
                (name, role, hash_password(password) if password else None),
            )
            self.log(db, actor, "user_added", {"name": name, "role": role})
        return User(int(cursor.lastrowid or 0), name, role)

    def user(self, name: str) -> User | None:
        rows = self.query("SELECT id, name, role FROM users WHERE name = ?", (name,))
        return User(rows[0]["id"], rows[0]["name"], rows[0]["role"]) if rows else None

    def users(self, role: str | None = None) -> list[User]:
        rows = self.query(
            "SELECT id, name, role FROM users WHERE ? IS NULL OR role = ? ORDER BY id",
            (role, role),
        )
        return [User(r["id"], r["name"], r["role"]) for r in rows]

    def login(self, name: str, password: str) -> tuple[str, str] | None:
        """A new session (token, CSRF token) for a right password, else None."""
        rows = self.query("SELECT id, password FROM users WHERE name = ?", (name,))
        if not rows or not check_password(password, rows[0]["password"]):
            return None
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self.write() as db:
            db.execute(
                "INSERT INTO sessions(token, user_id, csrf, created) VALUES (?, ?, ?, ?)",
                (hashlib.sha256(token.encode()).hexdigest(), rows[0]["id"], csrf, _now()),
            )
            self.log(db, name, "login", {})
        return token, csrf

    def session(self, token: str) -> tuple[User, str] | None:
        """The user and CSRF token of a session token (stored hashed: the file gives none)."""
        rows = self.query(
            "SELECT users.id, users.name, users.role, sessions.csrf FROM sessions "
            "JOIN users ON users.id = sessions.user_id WHERE sessions.token = ?",
            (hashlib.sha256(token.encode()).hexdigest(),),
        )
        if not rows:
            return None
        r = rows[0]
        return User(r["id"], r["name"], r["role"]), r["csrf"]

    def logout(self, token: str) -> None:
        with self.write() as db:
            db.execute(
                "DELETE FROM sessions WHERE token = ?",
                (hashlib.sha256(token.encode()).hexdigest(),),
            )

    # -- items and criteria -----------------------------------------------------------------------

    def add_item(
        self,
        db: sqlite3.Connection,
        *,
        key: str,
        prompt: Any,
        response: str,
        category: str | None = None,
        cluster: str | None = None,
        source: str = "data",
        attack: str | None = None,
    ) -> int:
        found = db.execute("SELECT id FROM items WHERE key = ?", (key,)).fetchone()
        if found:
            return int(found["id"])
        cursor = db.execute(
            "INSERT INTO items(key, prompt, response, category, cluster, source, attack) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                json.dumps(prompt, ensure_ascii=False),
                response,
                category,
                cluster or key,
                source,
                attack,
            ),
        )
        return int(cursor.lastrowid or 0)

    def add_criterion(
        self,
        db: sqlite3.Connection,
        *,
        key: str,
        text: str,
        points: float,
        tags: Sequence[str] = (),
        item_id: int | None = None,
        author: str = "import",
    ) -> int:
        found = db.execute(
            "SELECT id FROM criteria WHERE key = ? AND current = 1", (key,)
        ).fetchone()
        if found:
            return int(found["id"])
        cursor = db.execute(
            "INSERT INTO criteria(key, version, item_id, text, points, tags, author, created) "
            "VALUES (?, 1, ?, ?, ?, ?, ?, ?)",
            (key, item_id, text, float(points), json.dumps(list(tags)), author, _now()),
        )
        return int(cursor.lastrowid or 0)

    def items(self) -> list[Item]:
        return [_item(r) for r in self.query("SELECT * FROM items ORDER BY id")]

    def item(self, item_id: int) -> Item | None:
        rows = self.query("SELECT * FROM items WHERE id = ?", (item_id,))
        return _item(rows[0]) if rows else None

    def edit_criterion(
        self,
        user: User,
        base_id: int,
        text: str,
        points: float | None = None,
        tags: Sequence[str] | None = None,
    ) -> Criterion:
        """Save a new wording of a criterion as its next version.

        ``base_id`` is the version the editor started from: when another edit has made a newer
        version since, nothing is saved and ``EditConflict`` says what is there now (never the
        last write winning). The old version and its labels and verdicts stay, as history; the
        new one starts with none, so grading it again judges exactly the items that carry it.
        """
        if user.role not in ("expert", "admin"):
            raise PermissionError(f"{user.name} is a {user.role}: experts and admins edit criteria")
        if not text.strip() or len(text) > 4000:
            raise DataError("a criterion is 1 to 4,000 characters")
        with self.write() as db:
            row = db.execute("SELECT * FROM criteria WHERE id = ?", (base_id,)).fetchone()
            if row is None:
                raise DataError(f"no criterion {base_id}")
            base = _criterion(row)
            if not base.current:
                now = db.execute(
                    "SELECT * FROM criteria WHERE key = ? AND current = 1", (base.key,)
                ).fetchone()
                raise EditConflict(base, _criterion(now), text)
            db.execute("UPDATE criteria SET current = 0 WHERE id = ?", (base.id,))
            cursor = db.execute(
                "INSERT INTO criteria(key, version, item_id, text, points, tags, author, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    base.key,
                    base.version + 1,
                    base.item_id,
                    text,
                    float(base.points if points is None else points),
                    json.dumps(list(base.tags if tags is None else tags)),
                    user.name,
                    _now(),
                ),
            )
            new_id = int(cursor.lastrowid or 0)
            self.log(
                db,
                user.name,
                "criterion_edited",
                {"key": base.key, "from": base.version, "to": base.version + 1, "text": text},
            )
        found = self.criterion(new_id)
        assert found is not None
        return found

    def versions(self, key: str) -> list[Criterion]:
        """Every version of a criterion, oldest first."""
        rows = self.query("SELECT * FROM criteria WHERE key = ? ORDER BY version", (key,))
        return [_criterion(r) for r in rows]

    def criteria(self, item_id: int | None = None, *, current: bool = True) -> list[Criterion]:
        """The criteria of an item (its own and the shared ones), or every one."""
        if item_id is None:
            rows = self.query(
                "SELECT * FROM criteria WHERE (? = 0 OR current = 1) ORDER BY key, version",
                (int(current),),
            )
        else:  # two indexed lookups: an item's page never scans the project's criteria
            rows = self.query(
                "SELECT * FROM criteria WHERE item_id = ? AND (? = 0 OR current = 1) UNION ALL "
                "SELECT * FROM criteria WHERE item_id IS NULL AND (? = 0 OR current = 1) "
                "ORDER BY key, version",
                (item_id, int(current), int(current)),
            )
        return [_criterion(r) for r in rows]

    def labelled_pairs(self) -> list[tuple[Item, Criterion]]:
        """The (item, current criterion) pairs with at least one label, in order: all that the
        agreement numbers are computed from (a project of 10,000 items has few of them)."""
        rows = self.query(
            "SELECT DISTINCT labels.item_id, labels.criterion_id FROM labels JOIN criteria ON "
            "criteria.id = labels.criterion_id WHERE criteria.current = 1"
        )
        items = {
            r["id"]: _item(r)
            for r in self.query(
                "SELECT * FROM items WHERE id IN (SELECT DISTINCT labels.item_id FROM labels)"
            )
        }
        criteria = {
            r["id"]: _criterion(r)
            for r in self.query(
                "SELECT * FROM criteria WHERE current = 1 AND id IN (SELECT DISTINCT "
                "labels.criterion_id FROM labels)"
            )
        }
        out = [(items[r["item_id"]], criteria[r["criterion_id"]]) for r in rows]
        return sorted(out, key=lambda p: (p[0].id, p[1].key))

    def unit_counts(
        self, criterion: str | bool = True
    ) -> tuple[int, dict[str, int], dict[str, int]]:
        """How many (item, current criterion) pairs there are: overall, by category (``(none)``
        for items without one) and by criterion key (all of them, only the one named by
        ``criterion``, or none for False), counted in SQL, not loaded."""
        shared = self.query("SELECT key FROM criteria WHERE current = 1 AND item_id IS NULL")
        per_category = {
            (r["category"] or "(none)"): int(r["n"])
            for r in self.query("SELECT category, count(*) AS n FROM items GROUP BY category")
        }
        categories = {name: n * len(shared) for name, n in per_category.items()}
        own = self.query(
            "SELECT items.category, count(*) AS n FROM criteria JOIN items ON items.id = "
            "criteria.item_id WHERE criteria.current = 1 GROUP BY items.category"
        )
        for r in own:
            name = r["category"] or "(none)"
            categories[name] = categories.get(name, 0) + int(r["n"])
        by_key: dict[str, int] = {}
        if criterion is not False:
            only = criterion if isinstance(criterion, str) else None
            by_key = {
                r["key"]: sum(per_category.values())
                for r in shared
                if only is None or r["key"] == only
            }
            for r in self.query(
                "SELECT key, count(*) AS n FROM criteria WHERE current = 1 AND item_id IS NOT "
                "NULL AND (? IS NULL OR key = ?) GROUP BY key",
                (only, only),
            ):
                by_key[r["key"]] = int(r["n"])
        return sum(categories.values()), categories, by_key

    def criterion(self, criterion_id: int) -> Criterion | None:
        rows = self.query("SELECT * FROM criteria WHERE id = ?", (criterion_id,))
        return _criterion(rows[0]) if rows else None

    def pairs(self) -> list[tuple[Item, Criterion]]:
        """Every (item, current criterion) to label, in order."""
        items = {i.id: i for i in self.items()}
        out = []
        for c in self.criteria():
            targets = [items[c.item_id]] if c.item_id is not None else list(items.values())
            out += [(i, c) for i in targets]
        return sorted(out, key=lambda p: (p[0].id, p[1].key))

    # -- labels and verdicts ----------------------------------------------------------------------

    def set_label(
        self,
        user: User,
        item_id: int,
        criterion_id: int,
        met: bool,
        reason: str = "",
        *,
        disputes_grader: bool = False,
    ) -> Label:
        """Set ``user``'s label of one criterion on one item (again: the same label, updated)."""
        if user.role != "expert":
            raise PermissionError(f"{user.name} is a {user.role}: only experts label")
        criterion = self.criterion(criterion_id)
        if criterion is None or not criterion.current:
            raise DataError(f"criterion {criterion_id} is not a current criterion")
        if criterion.item_id is not None and criterion.item_id != item_id:
            raise DataError(f"criterion {criterion_id} does not belong to item {item_id}")
        if self.item(item_id) is None:
            raise DataError(f"no item {item_id}")
        if len(reason) > 4000:
            raise DataError("a reason is at most 4,000 characters")
        now = _now()
        with self.write() as db:
            self.claim_slot(db, user, item_id)
            db.execute(
                "INSERT INTO labels(item_id, criterion_id, user_id, met, reason, disputes_grader,"
                " updated) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(item_id, criterion_id, "
                "user_id) DO UPDATE SET met = excluded.met, reason = excluded.reason, "
                "disputes_grader = excluded.disputes_grader, updated = excluded.updated",
                (item_id, criterion_id, user.id, int(met), reason, int(disputes_grader), now),
            )
            self.log(
                db,
                user.name,
                "label",
                {
                    "item": item_id,
                    "criterion": criterion_id,
                    "met": met,
                    "reason": reason,
                    "disputes_grader": disputes_grader,
                },
            )
        return Label(item_id, criterion_id, user.name, met, reason, disputes_grader, now)

    def labels(
        self,
        *,
        item_id: int | None = None,
        user: str | None = None,
        current: bool = True,
        criterion_id: int | None = None,
    ) -> list[Label]:
        """Labels of current criteria (``current=False``: of every version too), of one item,
        one expert or one criterion's version (that version's, current or not)."""
        rows = self.query(
            "SELECT labels.*, users.name AS user FROM labels JOIN users ON users.id = "
            "labels.user_id JOIN criteria ON criteria.id = labels.criterion_id "
            "WHERE (? = 0 OR ? IS NOT NULL OR criteria.current = 1) "
            "AND (? IS NULL OR labels.item_id = ?) AND (? IS NULL OR users.name = ?) "
            "AND (? IS NULL OR labels.criterion_id = ?) "
            "ORDER BY labels.item_id, labels.criterion_id, users.id",
            (int(current), criterion_id, item_id, item_id, user, user, criterion_id, criterion_id),
        )
        return [
            Label(
                r["item_id"],
                r["criterion_id"],
                r["user"],
                bool(r["met"]),
                r["reason"],
                bool(r["disputes_grader"]),
                r["updated"],
            )
            for r in rows
        ]

    # -- assignments ------------------------------------------------------------------------------

    def experts_per_item(self) -> int | None:
        """How many experts label each item (each holds one of the item's slots), or None: every
        expert may label every item."""
        value = self.meta("experts_per_item")
        return int(value) if value is not None else None

    def set_experts_per_item(self, count: int | None, *, actor: str = "cli") -> None:
        """Give each item ``count`` slots (None: no limit). Refused below the number of experts
        an item already has: a label is never taken away from its expert.

        Raises:
            DataError: ``count`` below 1, or below an item's experts (the item is named).
        """
        if count is not None and count < 1:
            raise DataError("experts per item must be at least 1")
        with self.write() as db:
            if count is not None:
                crowded = db.execute(
                    "SELECT items.key, count(*) AS n FROM assignments JOIN items ON items.id = "
                    "assignments.item_id GROUP BY assignments.item_id HAVING n > ? "
                    "ORDER BY n DESC, items.id LIMIT 1",
                    (count,),
                ).fetchone()
                if crowded:
                    raise DataError(
                        f"item {crowded['key']} already has {crowded['n']} experts: experts "
                        f"per item cannot be {count}"
                    )
            self.set_meta(db, "experts_per_item", count)
            self.log(db, actor, "experts_per_item", {"count": count})

    def claim_slot(self, db: sqlite3.Connection, user: User, item_id: int) -> int:
        """The slot ``user`` holds on ``item_id``, taking the lowest free one if they hold none.

        Runs inside the caller's write transaction (``BEGIN IMMEDIATE``), and a slot is the
        primary key with its item: two experts can never hold the same slot, whatever the race.

        Raises:
            SlotsTaken: every slot of the item is held by another expert.
        """
        held = db.execute(
            "SELECT slot FROM assignments WHERE item_id = ? AND user_id = ?", (item_id, user.id)
        ).fetchone()
        if held:
            return int(held["slot"])
        taken = [
            r["slot"]
            for r in db.execute(
                "SELECT slot FROM assignments WHERE item_id = ? ORDER BY slot", (item_id,)
            )
        ]
        limit = self.experts_per_item()
        slot = next(k for k in range(len(taken) + 1) if k not in taken)
        if limit is not None and slot >= limit:
            holders = [
                r["name"]
                for r in db.execute(
                    "SELECT users.name FROM assignments JOIN users ON users.id = "
                    "assignments.user_id WHERE item_id = ? ORDER BY slot",
                    (item_id,),
                )
            ]
            raise SlotsTaken(
                f"item {item_id} has its {limit} experts ({', '.join(holders)}): no slot is free"
            )
        db.execute(
            "INSERT INTO assignments(item_id, slot, user_id) VALUES (?, ?, ?)",
            (item_id, slot, user.id),
        )
        return slot

    def assignments(self, item_id: int) -> list[tuple[int, str]]:
        """(slot, expert) of one item, by slot."""
        rows = self.query(
            "SELECT slot, users.name FROM assignments JOIN users ON users.id = "
            "assignments.user_id WHERE item_id = ? ORDER BY slot",
            (item_id,),
        )
        return [(int(r["slot"]), str(r["name"])) for r in rows]

    def next_item(self, user: User) -> int | None:
        """The item ``user`` should label next: the first one they hold a slot on and have not
        finished, else the first they have not finished with a free slot (taken for them now),
        else None."""
        return next(iter(self.assign(user, 1)), None)

    def assign(self, user: User, count: int, *, actor: str | None = None) -> list[int]:
        """Up to ``count`` items for ``user`` to label, their own unfinished ones first, then
        new ones whose slot is taken for them, all in one transaction."""
        if user.role != "expert":
            raise PermissionError(f"{user.name} is a {user.role}: only experts label")
        limit = self.experts_per_item()
        with self.write() as db:
            chosen = [
                int(r["id"])
                for r in db.execute(_HELD_UNFINISHED, {"user": user.id, "count": count})
            ]
            fresh = db.execute(
                _FREE_UNFINISHED, {"user": user.id, "limit": limit, "count": count - len(chosen)}
            ).fetchall()
            for r in fresh:
                self.claim_slot(db, user, int(r["id"]))
                chosen.append(int(r["id"]))
            if fresh:
                self.log(
                    db, actor or user.name, "assigned", {"expert": user.name, "items": len(fresh)}
                )
        return chosen

    def set_verdicts(self, verdicts: Sequence[ReviewVerdict], *, actor: str = "grader") -> None:
        with self.write() as db:
            for v in verdicts:
                db.execute(
                    "INSERT INTO verdicts(item_id, criterion_id, met, explanation, error) VALUES "
                    "(?, ?, ?, ?, ?) ON CONFLICT(item_id, criterion_id) DO UPDATE SET met = "
                    "excluded.met, explanation = excluded.explanation, error = excluded.error",
                    (
                        v.item_id,
                        v.criterion_id,
                        None if v.met is None else int(v.met),
                        v.explanation,
                        v.error,
                    ),
                )
            self.log(db, actor, "graded", {"verdicts": len(verdicts)})

    def progress(
        self, user: str, *, offset: int = 0, limit: int = 100
    ) -> list[tuple[Item, int, int]]:
        """A page of items with, for each, how many of its current criteria ``user`` labelled
        and how many it has."""
        shared = self.query(
            "SELECT count(*) AS n FROM criteria WHERE current = 1 AND item_id IS NULL"
        )
        rows = self.query(
            "SELECT items.*, (SELECT count(*) FROM criteria WHERE current = 1 AND item_id = "
            "items.id) AS own, (SELECT count(*) FROM labels JOIN criteria ON criteria.id = "
            "labels.criterion_id JOIN users ON users.id = labels.user_id WHERE criteria.current "
            "= 1 AND labels.item_id = items.id AND users.name = ?) AS done FROM items "
            "ORDER BY items.id LIMIT ? OFFSET ?",
            (user, limit, offset),
        )
        return [(_item(r), r["done"], r["own"] + shared[0]["n"]) for r in rows]

    def count_items(self) -> int:
        return int(self.query("SELECT count(*) AS n FROM items")[0]["n"])

    def neighbours(self, item_id: int) -> tuple[int | None, int | None]:
        """The items before and after ``item_id`` (by id), for the pager."""
        before = self.query("SELECT max(id) AS id FROM items WHERE id < ?", (item_id,))
        after = self.query("SELECT min(id) AS id FROM items WHERE id > ?", (item_id,))
        return before[0]["id"], after[0]["id"]

    def criterion_verdicts(self, criterion_id: int) -> dict[int, ReviewVerdict]:
        """The grader's verdicts on one criterion's version, by item."""
        rows = self.query("SELECT * FROM verdicts WHERE criterion_id = ?", (criterion_id,))
        return {r["item_id"]: _verdict(r) for r in rows}

    def labelled_verdicts(self) -> dict[tuple[int, int], ReviewVerdict]:
        """The grader's verdicts on the (item, criterion) pairs that carry a label."""
        rows = self.query(
            "SELECT * FROM verdicts WHERE EXISTS (SELECT 1 FROM labels WHERE labels.item_id = "
            "verdicts.item_id AND labels.criterion_id = verdicts.criterion_id)"
        )
        return {(r["item_id"], r["criterion_id"]): _verdict(r) for r in rows}

    def verdicts(self, item_id: int | None = None) -> dict[tuple[int, int], ReviewVerdict]:
        """The grader's verdicts by (item, criterion): all of them, or one item's."""
        if item_id is not None:
            rows = self.query("SELECT * FROM verdicts WHERE item_id = ?", (item_id,))
            return {(r["item_id"], r["criterion_id"]): _verdict(r) for r in rows}
        return self._all_verdicts()

    def _all_verdicts(self) -> dict[tuple[int, int], ReviewVerdict]:
        rows = self.query("SELECT * FROM verdicts")
        return {(r["item_id"], r["criterion_id"]): _verdict(r) for r in rows}


def _new_directory(folder: Path) -> None:
    """Make a new project's directory: nothing may stand there but an empty directory."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        what = "a directory that is not empty" if folder.is_dir() else "a file"
        raise DataError(f"{folder}: {what} is there; a new project needs a new directory")
    make_directory(folder, "the project's directory")


def make_directory(folder: Path, what: str) -> None:
    """``mkdir -p``, or a ``DataError`` saying why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{folder}: cannot make {what} ({exc.strerror or exc})") from None


def _verdict(r: sqlite3.Row) -> ReviewVerdict:
    met = None if r["met"] is None else bool(r["met"])
    return ReviewVerdict(r["item_id"], r["criterion_id"], met, r["explanation"], r["error"])


def _split(script: str) -> list[str]:
    """The schema's statements (a trigger's body holds a ``;`` of its own)."""
    out, current = [], ""
    for line in script.strip().splitlines():
        current += line + "\n"
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    return out


def _item(r: sqlite3.Row) -> Item:
    return Item(
        r["id"],
        r["key"],
        json.loads(r["prompt"]),
        r["response"],
        r["category"],
        r["cluster"],
        r["source"],
        r["attack"],
    )


def _criterion(r: sqlite3.Row) -> Criterion:
    return Criterion(
        r["id"],
        r["key"],
        r["version"],
        r["item_id"],
        r["text"],
        r["points"],
        tuple(json.loads(r["tags"])),
        r["author"],
        r["created"],
        bool(r["current"]),
    )
