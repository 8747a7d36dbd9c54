"""``codeflare local down`` fails, naming the survivor, when a process ``local up`` started cannot be stopped.

Made real with the kernel's own rule: a user cannot signal another user's processes. Local mode is
brought up by user ``nobody`` (with the capabilities to read and run what root installed, never the
one to signal others: ``setpriv``); then its agent is replaced by one started by root (``local up``
is idempotent and starts only what is missing). ``local down`` run by ``nobody`` stops the API
server and the operator, is refused (EPERM) on the agent's process group, says so, exits
non-zero naming the agent, and keeps it in the record; root's ``local down`` then stops it and
nothing of local mode is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from codeflare.local.mode import components
from tests.local.conftest import agent_env
from tests.support.control_plane import wait_for
from tests.support.environment import unavailable

NOBODY = 65534


# nobody, able to read and run root's files (the interpreter lives in root's home) but not to
# signal root's processes: CAP_KILL is not among the capabilities it keeps
_AS_NOBODY = [
    "setpriv",
    f"--reuid={NOBODY}",
    f"--regid={NOBODY}",
    "--clear-groups",
    "--inh-caps=+dac_override,+dac_read_search",
    "--ambient-caps=+dac_override,+dac_read_search",
    "--",
]


def codeflare(
    home: Path, *args: str, nobody: bool = False, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **agent_env(),
        "HOME": str(home.parent / "user-home"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    command = [sys.executable, "-m", "codeflare.cli.main", "local", *args, "--home", str(home)]
    return subprocess.run(
        [*_AS_NOBODY, *command] if nobody else command,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def naming(home: Path) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        if proc.pid != os.getpid() and any(str(home) in arg for arg in proc.info["cmdline"] or []):
            out.append(proc)
    return out


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        unavailable("needs root and setpriv(1): it runs local mode as user nobody and as root side by side")
    probe = subprocess.run(
        [*_AS_NOBODY, sys.executable, "-c", "pass"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        unavailable(f"cannot run Python as nobody with setpriv here: {probe.stderr.strip()}")
    home = tmp_path / "home"
    (tmp_path / "user-home").mkdir()
    try:
        yield home
    finally:
        if (home / "processes.json").exists():
            codeflare(home, "down")
        for proc in naming(home):  # only if the test failed midway; by pid
            proc.kill()


def test_down_exits_non_zero_and_names_the_process_it_could_not_stop(home: Path) -> None:
    up = codeflare(home, "up", nobody=True)
    assert up.returncode == 0, up.stdout + up.stderr
    first = components.load(home / "processes.json")
    assert {psutil.Process(c.pid).uids().real for c in first.values()} == {NOBODY}

    # Root replaces the agent: one process local mode started now runs as a user nobody cannot signal.
    os.kill(first["agent"].pid, signal.SIGTERM)
    wait_for(lambda: not alive(first["agent"].pid), 60, 0.1, what="nobody's agent to stop")
    again = codeflare(home, "up")
    assert again.returncode == 0, again.stdout + again.stderr
    started = components.load(home / "processes.json")
    agent = started["agent"]
    assert psutil.Process(agent.pid).uids().real == 0
    assert {n: started[n].pid for n in ("apiserver", "operator")} == {
        n: first[n].pid for n in ("apiserver", "operator")
    }

    down = codeflare(home, "down", nobody=True)

    assert down.returncode != 0, down.stdout + down.stderr
    assert f"agent (pid {agent.pid})" in down.stderr
    assert f"could not stop agent (pid {agent.pid})" in down.stdout
    assert "operation not permitted" in down.stdout
    for name in ("operator", "apiserver"):
        assert f"stopped {name} (pid {started[name].pid})" in down.stdout
        assert not alive(started[name].pid)
    assert alive(agent.pid)
    assert set(components.load(home / "processes.json")) == {"agent"}, "the survivor must stay recorded"

    final = codeflare(home, "down")
    assert final.returncode == 0, final.stdout + final.stderr
    assert f"stopped agent (pid {agent.pid})" in final.stdout
    assert not alive(agent.pid)
    assert not naming(home), "a process still names the local home"
    assert not (home / "processes.json").exists()
