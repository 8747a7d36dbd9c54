"""What ``local down`` does with the processes ``local up`` recorded, on real processes.

- A component is stopped by its process group: a child that ignores SIGTERM goes with SIGKILL.
- A record of an older version (pid and create time only) is read: the process is ours when its
  command line names the home (stopped), another one's when it does not (left alone).
- ``LocalMode.down`` stops every recorded component, says what it stopped, removes the record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from codeflare.local.agent.identity import Verdict
from codeflare.local.mode import LocalMode, components

# Leads a group with a child that ignores SIGTERM (as a stuck server might), both named by argv.
_CHILD = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
_STUBBORN = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {_CHILD!r}, *sys.argv[1:]])
time.sleep(600)
"""


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    yield home
    # last resort for a failed test: whatever still names the home, by pid
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(home) in arg for arg in proc.info["cmdline"] or []) and proc.pid != os.getpid():
            proc.kill()


def _python(home: Path, name: str, code: str = "import time; time.sleep(600)") -> components.Component:
    return components.spawn(
        name,
        [sys.executable, "-c", code, "--home", str(home)],
        home / "logs" / f"{name}.log",
        dict(os.environ),
    )


def _wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_component_is_stopped_with_its_whole_group(home: Path) -> None:
    comp = _python(home, "server", _STUBBORN)
    _wait_for(lambda: len(components.processes.group_processes(comp.pgid)) == 2)
    members = [p.pid for p in components.processes.group_processes(comp.pgid)]
    assert comp.pgid == comp.pid and components.running(comp, home)

    result = components.stop(comp, home, timeout=1.0)

    assert result.ok and sorted(result.stopped) == sorted(members)
    assert not [pid for pid in members if _alive(pid)]
    assert components.check(comp, home).verdict in (Verdict.GONE, Verdict.SAME)


def test_old_records_are_settled_by_the_home_on_the_command_line(home: Path, tmp_path: Path) -> None:
    ours = _python(home, "agent")
    stranger = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        old = {
            "agent": {"name": "agent", "pid": ours.pid, "start_time": 1.0, "log": ours.log},
            "operator": {"name": "operator", "pid": stranger.pid, "start_time": 2.0, "log": ""},
        }
        record = home / "processes.json"
        record.write_text(json.dumps(old))
        loaded = components.load(record)
        assert loaded["agent"].pgid == ours.pid and not loaded["agent"].identity.exact

        assert components.check(loaded["agent"], home).verdict is Verdict.SAME
        upgraded = components.upgraded(loaded["agent"], home)  # as `local up` re-records it
        assert (
            upgraded.identity == ours.identity
            and components.upgraded(loaded["operator"], home) == loaded["operator"]
        )
        assert components.check(loaded["operator"], home).verdict is Verdict.OTHER
        left_alone = components.stop(loaded["operator"], home, timeout=1.0)
        assert left_alone.ok and not left_alone.stopped and "pid reused" in left_alone.note
        assert stranger.poll() is None, "a process that is not ours was signalled"

        stopped = components.stop(loaded["agent"], home, timeout=5.0)
        assert stopped.ok and stopped.stopped == (ours.pid,)
    finally:
        stranger.kill()
        stranger.wait(10)


def test_down_stops_every_recorded_component_and_reports_it(home: Path) -> None:
    started = {name: _python(home, name) for name in ("apiserver", "operator", "agent")}
    mode = LocalMode(home)
    components.save(mode.record, started)
    assert oct(mode.record.stat().st_mode & 0o777) == "0o600"
    assert all(c["running"] for c in mode.status()["components"].values())

    report = mode.down(timeout=5.0)

    assert report.ok, report.lines()
    assert [r.what for r in report.stopped] == [
        f"{n} (pid {started[n].pid})" for n in ("agent", "operator", "apiserver")
    ]
    assert not [c for c in started.values() if _alive(c.pid)]
    assert not mode.record.exists()
    assert all(line.startswith("stopped ") for line in report.lines())
    again = mode.down()
    assert again.ok and again.results == []
