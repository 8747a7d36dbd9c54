"""Start and stop ``codeflare`` commands as child processes, the way every test harness here does.

Each child runs ``python -m codeflare.cli.main ...`` in its own session (so a test can SIGKILL it
without touching the test process), unbuffered, with stdout and stderr appended to a log file.
Stopping is SIGTERM, a grace period, then SIGKILL; only the child's own pid is signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def spawn_cli(
    args: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen[bytes]:
    """``codeflare ARGS`` in a new session, output appended to ``log_path``; ``env`` adds variables."""
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child process
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "codeflare.cli.main", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            **popen,
        )
    finally:
        log.close()


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """SIGTERM ``proc`` if it still runs and wait up to ``timeout`` s, then SIGKILL; its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return proc.returncode


class ChildProcess:
    """``running`` and ``kill`` for a harness that keeps its child in ``proc``."""

    proc: subprocess.Popen[bytes] | None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the child alone and reap it (nothing if it is not running)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
