"""Runs a real ``codeflare server`` process for tests, on a free loopback port.

The server runs as a separate process (as users run it), so tests talk to it over real HTTPS
with real clients and can restart it or kill it with SIGKILL.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.support.child_process import spawn_cli, terminate
from tests.support.polling import wait_for


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """One embedded API server process bound to ``state_dir``."""

    state_dir: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / "kubeconfig"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.state_dir / "admin.token").read_text().strip()

    @property
    def ca_file(self) -> Path:
        return self.state_dir / "ca.crt"

    def start(self, timeout: float = 30.0) -> ServerProcess:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.kubeconfig.exists():
            self.kubeconfig.unlink()
        self.proc = spawn_cli(
            ["server", "--state-dir", str(self.state_dir), "--port", str(self.port), *self.extra_args],
            self.state_dir / "server.log",
        )
        wait_for(self._serving, timeout, 0.05, what="the server's kubeconfig")
        return self

    def _serving(self) -> bool:
        """Whether the server wrote a complete kubeconfig; raises if the process has exited."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
        try:
            return bool(yaml.safe_load(self.kubeconfig.read_text())["clusters"][0]["cluster"]["server"])
        except (OSError, TypeError, KeyError, IndexError, yaml.YAMLError):
            return False

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc, 10)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL: no chance to flush or close anything."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def restart(self) -> ServerProcess:
        self.stop()
        return self.start()

    def log_tail(self, lines: int = 40) -> str:
        path = self.state_dir / "server.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def serving_with_tokens(state_dir: Path, tokens: str, *extra_args: str) -> Iterator[ServerProcess]:
    """A started server whose users come from ``tokens`` (a static tokens CSV); stopped on exit."""
    tokens_file = state_dir / "tokens.csv"
    state_dir.mkdir(parents=True, exist_ok=True)
    tokens_file.write_text(tokens)
    server = ServerProcess(state_dir, extra_args=["--tokens-file", str(tokens_file), *extra_args]).start()
    try:
        yield server
    finally:
        server.stop()
