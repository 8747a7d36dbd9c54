"""Write a file atomically: private (0600) for credentials, public (0644) for certificates.

Tokens, kubeconfigs and private keys must never be readable by other users, not even for the
instant between creating a file and narrowing its mode, and a reader must never see half a file.
So the content goes to a temporary file created 0600 in the target's directory, is flushed and
fsynced, gets its final mode, and is renamed over the target (then the directory is fsynced).
Directories are created on demand (0700 unless told otherwise); existing modes of parents are
left alone. No reading, no locking: concurrent writers each win whole.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic", "write_private", "write_public"]


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, mode: int, *, dir_mode: int = 0o700
) -> Path:
    """Replace ``path`` with ``data`` (text is UTF-8) in one rename; the file gets exactly ``mode``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)
    return target


def write_private(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write a credential (token, key, kubeconfig): mode 0600, atomically."""
    return write_atomic(path, data, 0o600)


def write_public(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write a file others may read (a CA certificate): mode 0644, atomically."""
    return write_atomic(path, data, 0o644)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory file descriptors
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
