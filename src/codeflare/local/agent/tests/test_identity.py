"""Process identity that a wall-clock step cannot fool, checked against real processes.

- ``/proc/<pid>/stat`` is parsed after the last ``)``: a process whose name holds spaces and
  parentheses still yields its real ppid, group and start tick.
- The clock stepped as the kernel shows it (``/proc/stat``'s boot time moved, which is what moves
  psutil's create time): the recorded identity still matches, an old create-time-only record is
  in doubt rather than "another process", and the liveness check the agent uses says alive.
- A record checked from another time namespace (``unshare --time``) matches too.
- Pid reuse, a reboot, another program under the pid, a zombie and a vanished pid are told apart;
  a replaced executable (an upgrade) is still the same process.
- Without /proc, the psutil fallback compares create times within a tolerance, and a step makes
  the process in doubt, never another one.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from codeflare.local.agent import identity, processes
from codeflare.local.agent.identity import ProcessIdentity, ProcFS, Verdict

# Sets its kernel name (comm, at most 15 bytes) to one full of spaces and parentheses, then waits.
_ODD_NAME = """
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"x) 1 (y) z", 0, 0, 0)
print("named", flush=True)
time.sleep(600)
"""


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(list(argv), start_new_session=True, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_stat_is_parsed_after_the_last_parenthesis(spawn: Callable[..., subprocess.Popen[bytes]]) -> None:
    proc = spawn(sys.executable, "-c", _ODD_NAME, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"named\n"
    stat = ProcFS().stat(proc.pid)

    assert stat is not None
    assert stat.comm == "x) 1 (y) z"
    assert stat.ppid == os.getpid()
    assert stat.pgrp == stat.session == proc.pid  # its own session
    # the same start tick psutil derives its (monotonic) start from
    ticks_per_second = ProcFS().ticks_per_second
    assert stat.start_ticks == round(
        psutil.Process(proc.pid)._proc.create_time(monotonic=True) * ticks_per_second
    )
    assert identity.verify(identity.capture(proc.pid)).running


def _stepped_proc(root: Path, pid: int, step: int) -> ProcFS:
    """A procfs view in which the wall clock was stepped by ``step`` seconds: the kernel's boot
    time in ``stat`` moves by that much (as after ``date -s``), everything else is the real /proc."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            line = f"btime {int(line.split()[1]) + step}"
        lines.append(line)
    (root / "stat").write_text("\n".join(lines) + "\n")
    for name in ("self", "sys", str(pid)):
        (root / name).symlink_to(f"/proc/{name}")
    return ProcFS(root)


@pytest.mark.parametrize("step", [2, -3600, 86400])
def test_identity_holds_when_the_clock_is_stepped(
    spawn: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    step: int,
) -> None:
    proc = spawn("sleep", "600")
    recorded = identity.capture(proc.pid)
    created = psutil.Process(proc.pid).create_time()
    legacy = ProcessIdentity.legacy(proc.pid, created)
    stepped = _stepped_proc(tmp_path / "proc", proc.pid, step)
    monkeypatch.setattr(psutil, "PROCFS_PATH", str(stepped.root))

    # The step is real to psutil: the old check (create time within 0.05 s) would call it another process.
    assert abs(psutil.Process(proc.pid).create_time() - created - step) < 0.05
    assert identity.verify(recorded, stepped).running
    doubt = identity.verify(legacy, stepped)
    assert doubt.verdict is Verdict.IN_DOUBT and "older version" in doubt.reason

    # The agent's liveness check, reading the stepped view: alive, never restarted.
    monkeypatch.setattr(identity, "PROCFS", stepped)
    handle = processes.ProcessHandle(
        proc.pid, proc.pid, created, ["sleep", "600"], "/dev/null", identity=recorded
    )
    assert processes.is_alive(handle)
    assert processes.is_alive(dataclasses.replace(handle, identity=None))  # old record: in doubt, alive


def test_a_record_made_in_another_time_namespace_matches(
    spawn: Callable[..., subprocess.Popen[bytes]],
) -> None:
    if shutil.which("unshare") is None:
        _unavailable("needs unshare(1)")
    probe = subprocess.run(
        ["unshare", "--time", "--boottime", "86400", "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        _unavailable(f"time namespaces are not available here: {probe.stderr.decode().strip()}")
    proc = spawn("sleep", "600")
    recorded = identity.capture(proc.pid)
    code = (
        "import json, sys; from codeflare.local.agent import identity; "
        "fs = identity.ProcFS(); pid = int(sys.argv[1]); "
        "print(json.dumps([fs.stat(pid).start_ticks, identity.capture(pid).to_dict()]))"
    )
    inside = subprocess.run(
        ["unshare", "--time", "--boottime", "86400", sys.executable, "-c", code, str(proc.pid)],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    raw_inside, seen_inside = json.loads(inside.stdout)
    assert raw_inside == ProcFS().stat(proc.pid).start_ticks + 86400 * ProcFS().ticks_per_second  # type: ignore[union-attr]
    assert ProcessIdentity.from_dict(seen_inside) == recorded


def test_gone_other_and_zombie_are_told_apart(spawn: Callable[..., subprocess.Popen[bytes]]) -> None:
    proc = spawn("sleep", "600")
    recorded = identity.capture(proc.pid)
    assert recorded.exact and recorded.cmdline == ("sleep", "600") and recorded.exe

    earlier = dataclasses.replace(recorded, start_ticks=(recorded.start_ticks or 0) - 1)
    assert identity.verify(earlier).verdict is Verdict.OTHER  # the pid was reused
    rebooted = dataclasses.replace(recorded, boot_id="00000000-0000-0000-0000-000000000000")
    assert identity.verify(rebooted).verdict is Verdict.OTHER
    renamed = dataclasses.replace(recorded, cmdline=("sleep", "601"))
    assert identity.verify(renamed).verdict is Verdict.OTHER

    os.kill(proc.pid, signal.SIGKILL)
    _wait_for(lambda: identity.verify(recorded).zombie)  # dead, not yet reaped by us
    zombie = identity.verify(recorded)
    assert zombie.verdict is Verdict.SAME and not zombie.running
    proc.wait(10)
    assert identity.verify(recorded).verdict is Verdict.GONE


def test_a_replaced_executable_is_still_the_same_process(
    spawn: Callable[..., subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    binary = tmp_path / "sleeper"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    proc = spawn(str(binary), "600")
    recorded = identity.capture(proc.pid)
    binary.unlink()  # as an upgrade replaces it on disk
    assert os.readlink(f"/proc/{proc.pid}/exe").endswith("(deleted)")
    assert identity.verify(recorded).running


def test_without_proc_the_fallback_never_turns_a_step_into_another_process(
    spawn: Callable[..., subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    no_proc = ProcFS(tmp_path / "no-proc")
    proc = spawn("sleep", "600")
    recorded = identity.capture(proc.pid, no_proc)
    assert not recorded.exact and recorded.create_time and recorded.cmdline == ("sleep", "600")

    assert identity.verify(recorded, no_proc).running
    stepped = dataclasses.replace(recorded, create_time=(recorded.create_time or 0) + 2)
    doubt = identity.verify(stepped, no_proc)
    assert doubt.verdict is Verdict.IN_DOUBT and "stepped" in doubt.reason
    other = dataclasses.replace(recorded, cmdline=("sleep", "601"))
    assert identity.verify(other, no_proc).verdict is Verdict.OTHER
    proc.kill()
    proc.wait(10)
    assert identity.verify(recorded, no_proc).verdict is Verdict.GONE


def test_records_round_trip() -> None:
    recorded = identity.capture(os.getpid())
    assert ProcessIdentity.from_dict(recorded.to_dict()) == recorded
    legacy = processes.ProcessHandle.from_dict(
        {"pid": 1, "pgid": 1, "start_time": 12.5, "argv": ["x"], "log_path": "/dev/null"}
    )
    assert legacy.identity is None and legacy.recorded == ProcessIdentity.legacy(1, 12.5)


def _unavailable(reason: str) -> None:
    """Skip where the machine lacks ``reason``'s piece; under CI (which must have it) fail."""
    (pytest.fail if os.environ.get("CI") else pytest.skip)(reason)
