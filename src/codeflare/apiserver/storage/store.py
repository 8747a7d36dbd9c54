"""Durable object storage: SQLite (WAL) underneath, an in-memory index on top, and the change log.

Every write is committed to SQLite before it is acknowledged, so a ``kill -9`` loses nothing that
a client was told succeeded. Reads are served from memory. Each write gets the next global
resourceVersion and is appended to a bounded change log that watches resume from; versions older
than the log answer 410 Gone. On a full disk a write raises :class:`StorageFull` and changes
nothing; deletes go on with the room a :class:`~.reserve.SpaceReserve` gives back, and the store
recovers by itself when a later write succeeds. A committed change reaches every listener even
when trimming the change log fails. This module knows nothing about HTTP, validation or semantics.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeflare.apiserver.storage.codec import dumps as _dumps
from codeflare.apiserver.storage.reserve import DEFAULT_RESERVE_BYTES, SpaceReserve, is_disk_full

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass(frozen=True)
class Change:
    """One committed write: the object after it (before it, for DELETED) and the object before."""

    rv: int
    type: str
    key: str
    namespace: str
    name: str
    obj: dict[str, Any]
    old: dict[str, Any] | None


Listener = Callable[[Change], None]


class StorageFull(Exception):
    """A write was refused because the disk (or the database) under ``directory`` is full."""

    def __init__(self, directory: str) -> None:
        super().__init__(f"no space left for the database in {directory}")
        self.directory = directory


class ObjectStore:
    """All objects, keyed by (storage key, namespace, name); '' is the namespace of cluster objects."""

    def __init__(
        self, path: Path | None, history: int = 20_000, reserve_bytes: int = DEFAULT_RESERVE_BYTES
    ) -> None:
        self._path = path
        self._reserve = SpaceReserve(path.with_name(path.name + ".reserve"), reserve_bytes) if path else None
        self.full = False  # the last write found the disk full (cleared by the next one that succeeds)
        self._db = sqlite3.connect(
            str(path) if path else ":memory:", isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS objects (
                rkey TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
                rv INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (rkey, ns, name));
            CREATE TABLE IF NOT EXISTS changes (
                rv INTEGER PRIMARY KEY, type TEXT NOT NULL, rkey TEXT NOT NULL, ns TEXT NOT NULL,
                name TEXT NOT NULL, data TEXT NOT NULL, old TEXT);
            """
        )
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self._history: deque[Change] = deque(maxlen=history)
        self._history_limit = history
        self._listeners: list[Listener] = []
        self._rv = 0
        self._writes_since_trim = 0
        self._load()

    # -- startup -----------------------------------------------------------------------------
    def _load(self) -> None:
        for rkey, ns, name, data in self._db.execute("SELECT rkey, ns, name, data FROM objects"):
            self._objects.setdefault(rkey, {})[(ns, name)] = json.loads(data)
        row = self._db.execute("SELECT MAX(rv) FROM changes").fetchone()
        self._rv = int(row[0] or 0)
        rows = self._db.execute(
            "SELECT rv, type, rkey, ns, name, data, old FROM changes ORDER BY rv DESC LIMIT ?",
            (self._history_limit,),
        ).fetchall()
        for rv, type_, rkey, ns, name, data, old in reversed(rows):
            self._history.append(
                Change(rv, type_, rkey, ns, name, json.loads(data), json.loads(old) if old else None)
            )
        log.info(
            "loaded %d objects, resourceVersion %d", sum(len(v) for v in self._objects.values()), self._rv
        )

    def close(self) -> None:
        self._db.close()

    # -- reads --------------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    @property
    def oldest_resumable(self) -> int:
        """The smallest resourceVersion a watch can resume from without missing changes."""
        if not self._history:
            return self._rv
        return self._history[0].rv - 1

    def get(self, key: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(key, {}).get((namespace, name))

    def iter(self, key: str, namespace: str | None = None) -> Iterator[dict[str, Any]]:
        """Objects of one resource in (namespace, name) order; every namespace when None."""
        bucket = self._objects.get(key, {})
        for ns_name in sorted(bucket):
            if namespace is None or ns_name[0] == namespace:
                yield bucket[ns_name]

    def count(self, key: str) -> int:
        return len(self._objects.get(key, {}))

    def resource_keys(self) -> list[str]:
        return [k for k, v in self._objects.items() if v]

    def changed_since(self, key: str, rv: int) -> bool:
        """Whether resource ``key`` changed after version ``rv`` (within the retained history)."""
        return any(change.key == key for change in self.changes_since(rv))

    def changes_since(self, rv: int) -> list[Change]:
        """Changes after ``rv``; caller checks ``oldest_resumable`` first."""
        if rv >= self._rv:
            return []
        return [c for c in self._history if c.rv > rv]

    # -- writes -------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def put(self, key: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """Create or replace ``obj``; sets metadata.resourceVersion and commits before returning.

        Raises :class:`StorageFull` (nothing changed) when the disk is full.
        """
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        rv = self._rv + 1
        change_type = MODIFIED if old is not None else ADDED
        stored = dict(obj, metadata=dict(meta, resourceVersion=str(rv)))
        data = _dumps(stored)
        self._write(
            [
                (
                    "INSERT OR REPLACE INTO objects (rkey, ns, name, rv, data) VALUES (?, ?, ?, ?, ?)",
                    (key, namespace, name, rv, data),
                ),
                (
                    "INSERT INTO changes (rv, type, rkey, ns, name, data, old) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (rv, change_type, key, namespace, name, data, None),
                ),
            ],
            may_use_reserve=False,
        )
        meta["resourceVersion"] = str(rv)
        self._rv = rv
        self._objects.setdefault(key, {})[(namespace, name)] = obj
        self._emit(Change(rv, change_type, key, namespace, name, obj, old))
        return obj

    def delete(self, key: str, namespace: str, name: str) -> dict[str, Any] | None:
        """Remove an object for good; the DELETED event carries a fresh resourceVersion.

        On a full disk the space reserve is released so the delete (which frees room) goes on.
        """
        old = self.get(key, namespace, name)
        if old is None:
            return None
        rv = self._rv + 1
        final = dict(old)
        final["metadata"] = dict(old["metadata"], resourceVersion=str(rv))
        data = _dumps(final)
        self._write(
            [
                ("DELETE FROM objects WHERE rkey=? AND ns=? AND name=?", (key, namespace, name)),
                (
                    "INSERT INTO changes (rv, type, rkey, ns, name, data, old) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (rv, DELETED, key, namespace, name, data, None),
                ),
            ],
            may_use_reserve=True,
        )
        self._rv = rv
        del self._objects[key][(namespace, name)]
        self._emit(Change(rv, DELETED, key, namespace, name, final, old))
        return final

    @property
    def directory(self) -> str:
        """Where the database lives (named in "storage full" answers)."""
        return str(self._path.parent) if self._path else ":memory:"

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]], *, may_use_reserve: bool) -> None:
        """Run ``statements`` in one transaction; StorageFull when the disk is full (a delete
        first releases the reserve and tries once more)."""
        for attempt in (1, 2):
            try:
                with self._transaction():
                    for sql, params in statements:
                        self._db.execute(sql, params)
            except (sqlite3.Error, OSError) as exc:
                if not is_disk_full(exc):
                    raise
                self.full = True
                if attempt == 1 and may_use_reserve and self._reserve is not None and self._reserve.release():
                    continue
                log.warning("write refused: %s", exc)
                raise StorageFull(self.directory) from exc
            break
        if self.full and not may_use_reserve:
            self.full = False
            log.info("storage has room again: writes accepted")
        if self._reserve is not None and not self.full and not self._reserve.held:
            self._reserve.take()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _emit(self, change: Change) -> None:
        """Tell every listener of a committed change, then trim the change log now and then."""
        self._history.append(change)
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # a broken listener must never undo a committed write
                log.exception("change listener failed")
        self._writes_since_trim += 1
        if self._writes_since_trim >= 1000:
            self._writes_since_trim = 0
            try:
                self._trim()
            except (sqlite3.Error, OSError) as exc:  # the write is committed; trimming retries later
                log.warning("trimming the change log failed: %s", exc)

    def _trim(self) -> None:
        self._db.execute("DELETE FROM changes WHERE rv <= ?", (self._rv - self._history_limit,))


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, _tb: object) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
            except BaseException:  # a failed COMMIT (disk full) leaves the transaction open
                self._rollback()
                raise
        else:
            self._rollback()

    def _rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")


class WatchQueue:
    """The pending events of one watcher; overflowing it ends the watch (the client re-lists)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.queue: asyncio.Queue[Change | None] = asyncio.Queue()
        self._limit = limit
        self.overflowed = False

    def push(self, change: Change) -> None:
        if self.overflowed:
            return
        if self.queue.qsize() >= self._limit:
            self.overflowed = True
            self.queue.put_nowait(None)
            return
        self.queue.put_nowait(change)
