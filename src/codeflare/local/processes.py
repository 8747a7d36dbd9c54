"""Start, watch and stop the host processes that run Ray nodes, by pid and process group only.

Each node runs as ``ray start --block`` in a new session, so it leads its own process group and
every process Ray spawns for it (gcs_server, raylet, dashboard, agents, workers) inherits that
group. A :class:`ProcessHandle` records pid, kernel start time and pgid; it serialises to JSON so
a restarted agent can re-adopt the node, and the start time makes every check safe against pid
reuse. Stopping signals the group, then also any process whose command line names the node's own
temp dir (in case Ray ever moves one out of the group), and never anything found by name alone.
This module knows nothing about Ray's protocol or readiness; that is :mod:`cluster_runner`'s job.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

logger = logging.getLogger(__name__)

#: Two start times closer than this are the same process (psutil rounds to clock ticks).
_START_TIME_TOLERANCE_S = 0.05

# Popen objects of the processes this interpreter started, so their exit codes can be reaped.
# Keyed by (pid, start time): it mirrors the kernel's parent/child relation, nothing more.
_children: dict[tuple[int, float], subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ProcessHandle:
    """Enough to find one started process again, even from another agent process."""

    pid: int
    pgid: int
    start_time: float
    argv: list[str]
    log_path: str
    temp_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    log_offset: int = 0  # where this process's output starts in ``log_path`` (it is appended to)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ProcessHandle:
        data = json.loads(text)
        return cls(
            pid=int(data["pid"]),
            pgid=int(data["pgid"]),
            start_time=float(data["start_time"]),
            argv=[str(a) for a in data["argv"]],
            log_path=str(data["log_path"]),
            temp_dir=data.get("temp_dir"),
            extra=dict(data.get("extra") or {}),
            log_offset=int(data.get("log_offset") or 0),
        )


def output_contains(handle: ProcessHandle, text: str) -> bool:
    """Whether this process (not an earlier one logging to the same file) has printed ``text``."""
    try:
        with open(handle.log_path, "rb") as log:
            log.seek(handle.log_offset)
            return text.encode() in log.read()
    except OSError:
        return False


def start_process(
    argv: Sequence[str],
    env: Mapping[str, str],
    log_path: Path,
    *,
    temp_dir: str | None = None,
    cwd: Path | None = None,
    extra: Mapping[str, Any] | None = None,
) -> ProcessHandle:
    """Start ``argv`` as the leader of a new session, stdout and stderr appended to ``log_path``.

    ``temp_dir`` is the directory only this process tree uses (Ray's ``--temp-dir``); ``stop``
    uses it to find processes that left the group.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        offset = log.tell()
        popen = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    try:
        start_time = psutil.Process(popen.pid).create_time()
    except psutil.NoSuchProcess:
        # It died before we could look: keep the Popen so its exit code can still be read.
        start_time = 0.0
    handle = ProcessHandle(
        pid=popen.pid,
        pgid=popen.pid,
        start_time=start_time,
        argv=list(argv),
        log_path=str(log_path),
        temp_dir=temp_dir,
        extra=dict(extra or {}),
        log_offset=offset,
    )
    _children[(handle.pid, handle.start_time)] = popen
    logger.info("started pid %d (log %s): %s", popen.pid, log_path, " ".join(argv[:4]))
    return handle


def is_alive(handle: ProcessHandle) -> bool:
    """True only if the pid exists, is not a zombie, and started when the handle says."""
    popen = _children.get((handle.pid, handle.start_time))
    if popen is not None and popen.poll() is not None:
        return False
    proc = _same_process(handle.pid, handle.start_time)
    if proc is None:
        return False
    try:
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def exit_code(handle: ProcessHandle) -> int | None:
    """The exit status of a dead process (negative: killed by that signal); None if unknown.

    Exact for processes this interpreter started. For adopted ones (started by an earlier agent)
    the kernel gives the status to their parent only, so this returns None; callers report
    "exited, status unknown".
    """
    popen = _children.get((handle.pid, handle.start_time))
    if popen is None:
        return None
    if popen.poll() is None and not is_alive(handle):
        # A multi-threaded leader shows as a zombie before its other threads are gone, and
        # only then can it be waited for: give the kernel a moment.
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=2.0)
    return popen.returncode


def stop(handle: ProcessHandle, grace: float = 5.0) -> None:
    """SIGTERM the node's process group (and stragglers), SIGKILL after ``grace`` seconds.

    Returns once every process of the node is gone (zombies of other parents count as gone).
    Safe to call on a dead or already-stopped handle.
    """
    members = node_processes(handle)
    if not members and not is_alive(handle):
        _reap(handle)
        return
    logger.info(
        "stopping pid %d (group %d, %d processes), grace %.1fs", handle.pid, handle.pgid, len(members), grace
    )
    _signal_all(handle, members, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(handle)
        if not _any_running(members) and not _group_exists(handle.pgid, handle):
            break
        time.sleep(0.1)
    else:
        for _ in range(3):
            members = _merge(members, node_processes(handle))
            _signal_all(handle, members, signal.SIGKILL)
            wait_gone(members, timeout=5.0)
            _reap(handle)
            if not _group_exists(handle.pgid, handle):
                break
    _reap(handle)
    leftovers = [p.pid for p in members if _running(p)]
    if leftovers:
        logger.error("processes %s of pid %d survived SIGKILL", leftovers, handle.pid)


def node_processes(handle: ProcessHandle) -> list[psutil.Process]:
    """Every live process belonging to the node: the leader, its descendants, its group, and any
    process whose command line names the node's temp dir. Only this user's processes."""
    found: dict[int, psutil.Process] = {}
    leader = _same_process(handle.pid, handle.start_time)
    if leader is not None:
        found[leader.pid] = leader
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in leader.children(recursive=True):
                found[child.pid] = child
    uid = os.getuid()
    group_is_ours = _group_is_ours(handle)
    for proc in psutil.process_iter(["pid", "uids", "cmdline"]):
        if proc.pid in found or proc.pid == os.getpid():
            continue
        try:
            uids = proc.info["uids"]
            if uids is None or uids.real != uid:
                continue
            in_group = group_is_ours and _pgid(proc.pid) == handle.pgid
            cmdline = proc.info["cmdline"] or []
            names_dir = bool(handle.temp_dir) and _names_dir(cmdline, handle.temp_dir or "")
            if in_group or names_dir:
                found[proc.pid] = proc
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return [p for p in found.values() if _running(p)]


def wait_gone(procs: Iterable[psutil.Process], timeout: float) -> bool:
    """Wait until none of ``procs`` runs; True if they all went in time."""
    deadline = time.monotonic() + timeout
    remaining = list(procs)
    while remaining and time.monotonic() < deadline:
        remaining = [p for p in remaining if _running(p)]
        if remaining:
            time.sleep(0.05)
    return not [p for p in remaining if _running(p)]


# -- internals ---------------------------------------------------------------------------------


def _same_process(pid: int, start_time: float) -> psutil.Process | None:
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - start_time) > _START_TIME_TOLERANCE_S:
            return None
        return proc
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _running(proc: psutil.Process) -> bool:
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _any_running(procs: Iterable[psutil.Process]) -> bool:
    return any(_running(p) for p in procs)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _group_is_ours(handle: ProcessHandle) -> bool:
    """Whether processes in group ``handle.pgid`` are this node's.

    Linux never hands out a pid still used as some process's group id, so the group is ours
    unless a *different* process now holds the leader's pid (then the old group had emptied).
    """
    try:
        proc = psutil.Process(handle.pgid)
        return abs(proc.create_time() - handle.start_time) <= _START_TIME_TOLERANCE_S
    except psutil.NoSuchProcess:
        return True
    except psutil.AccessDenied:
        return False


def _group_exists(pgid: int, handle: ProcessHandle) -> bool:
    """Whether a live (non-zombie) process of this node's group remains."""
    if not _group_is_ours(handle):
        return False
    return any(_pgid(proc.pid) == pgid and _running(proc) for proc in psutil.process_iter(["pid"]))


def _names_dir(cmdline: Sequence[str], directory: str) -> bool:
    directory = directory.rstrip("/")
    for arg in cmdline:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value == directory or value.startswith(directory + "/"):
            return True
    return False


def _signal_all(handle: ProcessHandle, members: Iterable[psutil.Process], sig: signal.Signals) -> None:
    if _group_exists(handle.pgid, handle):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(handle.pgid, sig)
    for proc in members:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.send_signal(sig)  # psutil refuses if the pid was reused since we saw it


def _merge(a: list[psutil.Process], b: list[psutil.Process]) -> list[psutil.Process]:
    seen = {p.pid: p for p in a}
    for p in b:
        seen.setdefault(p.pid, p)
    return list(seen.values())


def _reap(handle: ProcessHandle) -> None:
    popen = _children.get((handle.pid, handle.start_time))
    if popen is not None:
        popen.poll()


def process_start_time(pid: int) -> float | None:
    """The start time of ``pid`` as recorded by the kernel (None when it does not exist)."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def pid_matches(pid: int, start_time: float) -> bool:
    """Whether ``pid`` still is the process that started at ``start_time`` (and is not a zombie)."""
    proc = _same_process(pid, start_time)
    return proc is not None and _running(proc)
