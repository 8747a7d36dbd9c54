"""A full disk under the API server: writes refused with 507, deletes still work, nothing lost.

Issue 15 observed a bare ``500 an internal error occurred`` for every write and every DELETE on
a full disk, so space could not be freed through the API. The server's state directory is a
small tmpfs mounted in a user and mount namespace (``unshare -rm``, which an unprivileged user
may do here and in CI); the test sees it through ``/proc/<pid>/root`` and fills it with a
ballast file. Then: creates are refused with 507 InsufficientStorage naming the state directory,
``/readyz/storage`` and ``codeflare local status`` report it, DELETE works (the store releases
its reserve), removing the ballast lets writes through again without a restart, and a restart
keeps every acknowledged object.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.apiserver.http_support import client, cm, delete, ok, status_of
from tests.support.apiserver import ServerProcess
from tests.support.child_process import terminate
from tests.support.environment import unavailable
from tests.support.polling import wait_for

CMS = "/api/v1/namespaces/default/configmaps"
TMPFS_SIZE = "64m"


@dataclass
class Tmpfs:
    """A tmpfs at ``mount_point`` inside the namespaces of a holder process (kept while it runs)."""

    mount_point: Path
    holder: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        if shutil.which("unshare") is None or shutil.which("nsenter") is None:
            unavailable("unshare and nsenter (util-linux) are needed to mount a tmpfs")
        self.mount_point.mkdir(parents=True, exist_ok=True)
        script = 'mount -t tmpfs -o size="$1" tmpfs "$0" && echo mounted && exec sleep 3600'
        self.holder = subprocess.Popen(
            ["unshare", "-rm", "sh", "-c", script, str(self.mount_point), TMPFS_SIZE],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.holder.stdout is not None
        first = self.holder.stdout.readline().decode().strip()
        if first != "mounted":
            self.holder.wait(5)
            unavailable(f"mounting a tmpfs in a user namespace is not permitted here: {first!r}")

    def seen(self, relative: str = "") -> Path:
        """A path inside the tmpfs as this process sees it (through the holder's root)."""
        return Path(f"/proc/{self.holder.pid}/root{self.mount_point}") / relative

    def enter(self) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-U", "-m", "--preserve-credentials"]

    def close(self) -> None:
        terminate(self.holder, 5)  # the mount goes with the holder's namespace


@dataclass
class TmpfsServer(ServerProcess):
    """``codeflare server`` with its state directory on the tmpfs (log outside it)."""

    tmpfs: Tmpfs | None = None
    log_path: Path = Path()

    def start(self, timeout: float = 30.0) -> TmpfsServer:
        assert self.tmpfs is not None
        if self.kubeconfig.exists():
            self.kubeconfig.unlink()
        command = [sys.executable, "-m", "codeflare.cli.main", "server", "--state-dir"]
        command += [str(self.tmpfs.mount_point), "--port", str(self.port)]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*self.tmpfs.enter(), *command],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        wait_for(self._serving, timeout, 0.05, what="the server's kubeconfig")
        return self

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Tmpfs]:
    fs = Tmpfs(tmp_path / "state")
    try:
        yield fs
    finally:
        fs.close()


@pytest.fixture
def server(tmpfs: Tmpfs, tmp_path: Path) -> Iterator[TmpfsServer]:
    proc = TmpfsServer(tmpfs.seen(), tmpfs=tmpfs, log_path=tmp_path / "server.log").start()
    try:
        yield proc
    finally:
        proc.stop()


def fill(path: Path) -> None:
    """Write ``path`` until the file system has no byte left."""
    chunk = 1 << 20
    with open(path, "wb", buffering=0) as out:
        while chunk >= 512:
            try:
                out.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                chunk //= 2


def local_status(home: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "codeflare.cli.main", "local", "status", "--home", str(home), "-o", "json"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return dict(json.loads(done.stdout))


def test_a_full_disk_refuses_writes_with_507_and_deletes_still_work(
    server: TmpfsServer, tmpfs: Tmpfs, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(server.kubeconfig, home / "kubeconfig")
    with client(server) as http:
        assert local_status(home)["storage"] == "ok"
        victims = [f"old-{i}" for i in range(5)]
        for name in victims:
            ok(http.post(CMS, json=cm(name, {"k": "x" * 1024})), 201)
        fill(tmpfs.seen("ballast"))
        acknowledged: list[str] = []
        refused = None
        for i in range(200):
            resp = http.post(CMS, json=cm(f"big-{i}", {"k": "x" * (256 * 1024)}))
            if resp.status_code != 201:
                refused = resp
                break
            acknowledged.append(f"big-{i}")
        assert refused is not None, "the full disk never refused a write"
        status = status_of(refused, 507, "InsufficientStorage")
        assert str(tmpfs.mount_point) in status["message"] and "DELETE" in status["message"]

        started = time.monotonic()
        status_of(http.post(CMS, json=cm("small")), 507, "InsufficientStorage")
        refusal = time.monotonic() - started
        assert refusal < 5.0, f"refusing a write took {refusal:.3f} s"  # generous: speed is for benchmarks

        readyz = http.get("/readyz/storage")
        assert readyz.status_code == 503 and "storage full" in readyz.text
        assert str(tmpfs.mount_point) in str(local_status(home)["storage"])

        for name in victims:
            ok(delete(http, f"{CMS}/{name}"))
            status_of(http.get(f"{CMS}/{name}"), 404, "NotFound")
        listed = {o["metadata"]["name"] for o in ok(http.get(CMS))["items"]}
        assert set(acknowledged) - set(victims) <= listed

        tmpfs.seen("ballast").unlink()  # an admin frees space: the server recovers by itself
        ok(http.post(CMS, json=cm("after-recovery")), 201)
        assert http.get("/readyz/storage").status_code == 200
        assert local_status(home)["storage"] == "ok"

    server.restart()
    with client(server) as http:
        names = {o["metadata"]["name"] for o in ok(http.get(CMS))["items"]}
    assert names >= (set(acknowledged) - set(victims)) | {"after-recovery"}
    assert not names & set(victims)
