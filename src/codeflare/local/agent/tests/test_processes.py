"""Process handles: pid-reuse safe liveness, JSON round trip, whole-group stop, exit codes."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from pathlib import Path

import psutil
import pytest

from codeflare.local.agent import processes
from codeflare.local.agent.processes import ProcessHandle

# A leader that spawns a child in its group and a child that escapes into its own session but
# names the node's temp dir on its command line (as a Ray process would).
_TREE = """
import subprocess, sys, time
tmp = sys.argv[1]
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "--temp-dir=" + tmp],
                 start_new_session=True)
time.sleep(600)
"""


@pytest.fixture()
def started(tmp_path: Path):  # type: ignore[no-untyped-def]
    handles: list[ProcessHandle] = []

    def start(*argv: str, temp_dir: str | None = None) -> ProcessHandle:
        handle = processes.start_process(list(argv), dict(os.environ), tmp_path / "p.log", temp_dir=temp_dir)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        processes.stop(handle, grace=0.5)


def _wait_for(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_handle_round_trip_readopts_and_reused_pid_is_not_adopted(started) -> None:  # type: ignore[no-untyped-def]
    handle = started("sleep", "600")
    assert processes.is_alive(handle)
    assert handle.pgid == os.getpgid(handle.pid) == handle.pid

    reloaded = ProcessHandle.from_json(handle.to_json())
    assert reloaded == handle and processes.is_alive(reloaded)

    # the same pid recorded with another kernel start tick: a different (earlier) process
    assert reloaded.identity is not None and reloaded.identity.start_ticks is not None
    earlier = dataclasses.replace(reloaded.identity, start_ticks=reloaded.identity.start_ticks - 1)
    impostor = dataclasses.replace(reloaded, identity=earlier)
    assert not processes.is_alive(impostor)
    processes.stop(impostor, grace=0.5)  # must not touch the real process
    assert processes.is_alive(handle)


def test_stop_kills_the_group_and_escaped_processes(started, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    temp_dir = str(tmp_path / "node-tmp")
    handle = started(sys.executable, "-c", _TREE, temp_dir, temp_dir=temp_dir)
    _wait_for(lambda: len(processes.node_processes(handle)) == 3)
    members = processes.node_processes(handle)
    escaped = [p for p in members if os.getpgid(p.pid) != handle.pgid]
    assert len(escaped) == 1  # found through the temp dir on its command line, not the group

    processes.stop(handle, grace=2.0)

    assert not processes.is_alive(handle)
    assert not [p for p in members if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert processes.exit_code(handle) == -signal.SIGTERM


def test_exit_code_of_a_killed_process(started) -> None:  # type: ignore[no-untyped-def]
    handle = started("sleep", "600")
    os.kill(handle.pid, signal.SIGKILL)
    _wait_for(lambda: not processes.is_alive(handle))
    assert processes.exit_code(handle) == -signal.SIGKILL


def test_exit_code_of_an_adopted_process_is_unknown(started) -> None:  # type: ignore[no-untyped-def]
    handle = started("sh", "-c", "exit 3")
    _wait_for(lambda: not processes.is_alive(handle))
    assert processes.exit_code(handle) == 3
    assert handle.identity is not None and handle.identity.start_ticks is not None
    later = dataclasses.replace(handle.identity, start_ticks=handle.identity.start_ticks + 1)
    stranger = dataclasses.replace(handle, identity=later)
    assert processes.exit_code(stranger) is None
