"""Room kept for deletes: a preallocated file the store gives back when the disk is full.

SQLite in WAL mode needs free space for every commit, a delete's included (its frames are
appended to the WAL), so on a full disk nothing - not even the DELETE that would free room -
could be written. :class:`SpaceReserve` holds a file of ``size`` bytes next to the database;
the store releases it when a delete hits a full disk, so deletes go on, and takes it again once
the disk has room. It also says whether an SQLite error means "no space". No SQL here.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_RESERVE_BYTES = 4 * 1024 * 1024


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (from sqlite3 or the OS) means the disk or the database is full."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF == sqlite3.SQLITE_FULL:
            return True
        return "database or disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class SpaceReserve:
    """A file of ``size`` bytes at ``path``, released to make room and taken back later."""

    def __init__(self, path: Path, size: int = DEFAULT_RESERVE_BYTES) -> None:
        self.path = path
        self.size = size
        self.held = False
        self.take()

    def release(self) -> bool:
        """Give the space back to the file system; whether there was any to give."""
        self.held = False
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        log.warning("disk full: released the %d-byte reserve %s so deletes can proceed", self.size, self.path)
        return True

    def take(self) -> bool:
        """Hold the reserve again when the disk has room for it twice over; whether it is held."""
        if self.size <= 0 or self.held:
            return self.held
        try:
            if self.path.exists() and self.path.stat().st_size >= self.size:
                self.held = True
                return True
            stats = os.statvfs(self.path.parent)
            if stats.f_bavail * stats.f_frsize < 2 * self.size:
                return False
            with open(self.path, "wb") as out:
                if hasattr(os, "posix_fallocate"):
                    os.posix_fallocate(out.fileno(), 0, self.size)
                else:  # pragma: no cover - platforms without fallocate
                    out.write(b"\0" * self.size)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):
                self.path.unlink()
            log.warning("could not hold the %d-byte storage reserve %s: %s", self.size, self.path, exc)
            return False
        self.held = True
        return True
