"""The dashboard's test harness: a real ``codeflare dashboard`` process and a real headless Chromium.

:class:`DashboardProcess` runs the dashboard as users run it (a child process with a kubeconfig)
and waits for the URL it writes; :func:`user_kubeconfig` writes a kubeconfig for a token user
(RBAC tests). :func:`chromium` finds Debian's Chromium (``scripts/setup`` installs it; Playwright
never downloads a browser): where it is missing the test is skipped, and fails under CI
(:func:`tests.support.environment.unavailable`). Screenshots go to ``build/screenshots/``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.support.apiserver import ServerProcess, free_port
from tests.support.child_process import spawn_cli, terminate
from tests.support.environment import unavailable
from tests.support.polling import wait_for

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium() -> str:
    """The system Chromium's path (skip locally, fail under CI, when there is none)."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    unavailable("no system Chromium (scripts/setup installs Debian's 'chromium' package)")


def user_kubeconfig(server: ServerProcess, token: str, namespace: str, path: Path) -> Path:
    """A copy of the server's kubeconfig that authenticates with ``token`` in ``namespace``."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    for entry in config["users"]:
        entry["user"] = {"token": token}
    for entry in config["contexts"]:
        entry["context"]["namespace"] = namespace
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass
class DashboardProcess:
    kubeconfig: Path
    workdir: Path
    extra_args: list[str] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url_file(self) -> Path:
        return self.workdir / "dashboard.url"

    @property
    def log_path(self) -> Path:
        return self.workdir / "dashboard.log"

    @property
    def url(self) -> str:
        return self.url_file.read_text().strip()

    def start(self, timeout: float = 30.0) -> DashboardProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.url_file.unlink(missing_ok=True)
        args = ["dashboard", "--kubeconfig", str(self.kubeconfig), "--port", str(self.port)]
        self.proc = spawn_cli([*args, "--url-file", str(self.url_file), *self.extra_args], self.log_path)
        wait_for(self._listening, timeout, what="the dashboard's URL file")
        return self

    def _listening(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"dashboard exited with {self.proc.returncode}:\n{self.log()}")
        return self.url_file.exists()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc, 10)
        self.proc = None
