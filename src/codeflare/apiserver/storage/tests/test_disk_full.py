"""The store on a full database: writes refused with nothing changed, recovery, watchers served.

SQLite's own cap (``PRAGMA max_page_count``) makes the database full through the real SQLite
path (SQLITE_FULL); a full file system (ENOSPC, where the reserve matters) is exercised over
HTTP on a small tmpfs in ``tests/apiserver/test_disk_full.py``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeflare.apiserver.storage.reserve import SpaceReserve, is_disk_full
from codeflare.apiserver.storage.store import Change, ObjectStore, StorageFull

KEY = "core/configmaps"


def cm(name: str, size: int = 0) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": "x" * size}}


def cap(store: ObjectStore, extra_pages: int) -> None:
    """Cap the database at its current size plus ``extra_pages`` (SQLite's own limit)."""
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]  # the store's own connection
    store._db.execute(f"PRAGMA max_page_count={pages + extra_pages}")


def fill(store: ObjectStore) -> list[str]:
    """Write 64 KiB objects until the store refuses one; the names it acknowledged."""
    written = []
    for i in range(1000):
        try:
            store.put(KEY, cm(f"big-{i}", 64 * 1024), None)
        except StorageFull:
            return written
        written.append(f"big-{i}")
    raise AssertionError("the capped database never filled")


def test_a_refused_write_changes_nothing_and_the_store_recovers(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "state.db")
    store.put(KEY, cm("small"), None)
    cap(store, 40)
    written = fill(store)
    assert written and store.full
    rv = store.resource_version
    with pytest.raises(StorageFull) as refused:
        store.put(KEY, cm("one-more", 64 * 1024), None)
    assert refused.value.directory == str(tmp_path)
    assert store.resource_version == rv and store.get(KEY, "default", "one-more") is None
    cap(store, 10_000)  # room again: the next write succeeds and clears the condition
    store.put(KEY, cm("after"), None)
    assert not store.full and store.resource_version == rv + 1
    store.close()
    reopened = ObjectStore(tmp_path / "state.db")
    assert {o["metadata"]["name"] for o in reopened.iter(KEY)} == {"small", "after", *written}
    assert reopened.resource_version == rv + 1
    reopened.close()


class _TrimFails(ObjectStore):
    """A store whose change-log trimming hits a full disk (trimming is the one write that runs
    after the commit; a test cannot make SQLite fail a DELETE that frees pages)."""

    def _trim(self) -> None:
        raise sqlite3.OperationalError("database or disk is full")


def test_a_committed_write_reaches_its_listeners_when_trimming_fails(tmp_path: Path) -> None:
    store = _TrimFails(tmp_path / "state.db", history=10)
    seen: list[Change] = []
    store.subscribe(seen.append)
    for i in range(1001):  # the 1000th write trims
        store.put(KEY, cm(f"c{i}"), None)
    assert [c.name for c in seen] == [f"c{i}" for i in range(1001)]
    store.close()


def test_the_reserve_is_held_released_and_taken_back(tmp_path: Path) -> None:
    reserve = SpaceReserve(tmp_path / "state.db.reserve", 64 * 1024)
    assert reserve.held and (tmp_path / "state.db.reserve").stat().st_size == 64 * 1024
    assert reserve.release() and not reserve.held and not (tmp_path / "state.db.reserve").exists()
    assert not reserve.release()
    assert reserve.take() and reserve.held
    assert SpaceReserve(tmp_path / "none.reserve", 0).take() is False


@pytest.mark.parametrize(
    ("exc", "full"),
    [
        (sqlite3.OperationalError("database or disk is full"), True),
        (OSError(28, "No space left on device"), True),
        (sqlite3.OperationalError("database is locked"), False),
        (OSError(13, "Permission denied"), False),
    ],
)
def test_which_errors_mean_a_full_disk(exc: BaseException, full: bool) -> None:
    assert is_disk_full(exc) is full
