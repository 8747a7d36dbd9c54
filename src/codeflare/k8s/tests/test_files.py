"""Atomic writes: private files are 0600 from the first byte, public ones 0644; no temp files remain."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from codeflare.k8s.files import write_atomic, write_private, write_public


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_and_public_modes_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        secret = write_private(tmp_path / "new" / "token", "s3cret")
        public = write_public(tmp_path / "ca.crt", b"PEM")
    finally:
        os.umask(old)
    assert secret.read_text() == "s3cret" and _mode(secret) == 0o600
    assert _mode(secret.parent) == 0o700
    assert public.read_bytes() == b"PEM" and _mode(public) == 0o644


def test_replacing_a_wider_file_narrows_it(tmp_path: Path) -> None:
    target = tmp_path / "kubeconfig"
    target.write_text("old")
    target.chmod(0o666)
    write_private(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "key"
    write_private(target, "old")
    with pytest.raises(TypeError):
        write_atomic(target, 123, 0o600)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]
