"""Start, watch and stop the host processes that run Ray nodes, by pid and process group only.

Each node runs as ``ray start --block`` in a new session, so it leads its own process group and
every process Ray spawns for it (gcs_server, raylet, dashboard, agents, workers) inherits that
group. A :class:`ProcessHandle` records pid, pgid and the kernel's identity of the leader
(:mod:`identity`: start ticks since boot, executable, command line), so every check is safe
against pid reuse and blind to wall-clock steps; it serialises to JSON so a restarted agent can
re-adopt the node. A node is dead only when that is proven (its pid is gone, is a zombie, or
holds another process); a leader in doubt (an old record) is settled by its command line naming
the node's own temp dir, and otherwise counts as alive, so doubt never restarts a cluster.
Stopping signals the group (only when it is provably the node's), then any process whose command
line names the node's temp dir (in case Ray ever moves one out of the group), never anything
found by name alone. This module knows nothing about Ray's protocol: see :mod:`cluster_runner`.
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
from typing import Any, Literal

import psutil

from codeflare.local.agent import identity
from codeflare.local.agent.identity import Check, ProcessIdentity, Verdict

logger = logging.getLogger(__name__)

InDoubt = Literal["spare", "stop"]

# Popen objects of the processes this interpreter started, so their exit codes can be reaped.
# Keyed by pid and checked against the identity: it mirrors the kernel's parent/child relation.
_children: dict[int, tuple[ProcessIdentity, subprocess.Popen[bytes]]] = {}
_doubts_logged: set[tuple[int, str]] = set()


@dataclass(frozen=True)
class ProcessHandle:
    """Enough to find one started process again, even from another agent process.

    ``start_time`` is the wall-clock start, for display (a Pod's ``startedAt``) and ordering only;
    ``identity`` is what every liveness check compares. Records of older versions carry no
    identity: they are read with :meth:`ProcessIdentity.legacy` (in doubt while the pid lives).
    """

    pid: int
    pgid: int
    start_time: float
    argv: list[str]
    log_path: str
    temp_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    log_offset: int = 0  # where this process's output starts in ``log_path`` (it is appended to)
    identity: ProcessIdentity | None = None

    @property
    def recorded(self) -> ProcessIdentity:
        return self.identity or ProcessIdentity.legacy(self.pid, self.start_time)

    @property
    def start_order(self) -> tuple[int, float]:
        """Sorts handles by start, by the kernel's ticks where known (clock steps do not reorder)."""
        return (self.recorded.start_ticks or 0, self.start_time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessHandle:
        recorded = data.get("identity")
        return cls(
            pid=int(data["pid"]),
            pgid=int(data["pgid"]),
            start_time=float(data["start_time"]),
            argv=[str(a) for a in data["argv"]],
            log_path=str(data["log_path"]),
            temp_dir=data.get("temp_dir"),
            extra=dict(data.get("extra") or {}),
            log_offset=int(data.get("log_offset") or 0),
            identity=None if not recorded else ProcessIdentity.from_dict(recorded),
        )

    @classmethod
    def from_json(cls, text: str) -> ProcessHandle:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class StopResult:
    """What :func:`stop` did: the pids it saw go, and those still running afterwards."""

    stopped: tuple[int, ...] = ()
    survivors: tuple[int, ...] = ()
    refused: bool = False  # the kernel refused a signal (EPERM)


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
        started = time.time()
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
    # Popen returns once the child has exec'd: executable and command line are final now. If it
    # already died, the identity holds the pid only and the kept Popen still reads its exit code.
    recorded = identity.capture(popen.pid)
    handle = ProcessHandle(
        pid=popen.pid,
        pgid=popen.pid,
        start_time=started,
        argv=list(argv),
        log_path=str(log_path),
        temp_dir=temp_dir,
        extra=dict(extra or {}),
        log_offset=offset,
        identity=recorded,
    )
    _children[popen.pid] = (recorded, popen)
    logger.info("started pid %d (log %s): %s", popen.pid, log_path, " ".join(argv[:4]))
    return handle


def check(handle: ProcessHandle) -> Check:
    """The verdict on the node's leader, with doubt settled by its temp dir where there is one
    (a Ray node's leader always names it on its command line: naming it proves the node, not
    naming it proves another process)."""
    popen = _child(handle)
    if popen is not None and popen.poll() is not None:
        return Check(Verdict.GONE, f"pid {handle.pid} exited with code {popen.returncode}")
    verdict = identity.verify(handle.recorded)
    if verdict.verdict is not Verdict.IN_DOUBT or not handle.temp_dir:
        return verdict
    cmdline = identity.current_cmdline(handle.pid)
    if cmdline is None or not cmdline:
        return verdict
    if identity.names_path(cmdline, handle.temp_dir):
        return Check(Verdict.SAME, f"pid {handle.pid} names the node's temp dir", zombie=verdict.zombie)
    return Check(Verdict.OTHER, f"pid {handle.pid} does not name the node's temp dir")


def is_alive(handle: ProcessHandle) -> bool:
    """False only when the node's leader is proven gone (exited, a zombie, or its pid reused).

    A leader in doubt counts as alive (and the doubt is logged once): the agent must never
    restart, nor stop, a process because it could not tell whether it is its own.
    """
    verdict = check(handle)
    if verdict.verdict is Verdict.IN_DOUBT:
        key = (handle.pid, verdict.reason)
        if key not in _doubts_logged:
            _doubts_logged.add(key)
            logger.warning(
                "pid %d: identity in doubt (%s); treating it as running", handle.pid, verdict.reason
            )
        return not verdict.zombie
    if verdict.verdict is Verdict.OTHER:
        key = (handle.pid, verdict.reason)
        if key not in _doubts_logged:
            _doubts_logged.add(key)
            logger.warning("pid %d is no longer the recorded process: %s", handle.pid, verdict.reason)
    return verdict.running


def exit_code(handle: ProcessHandle) -> int | None:
    """The exit status of a dead process (negative: killed by that signal); None if unknown.

    Exact for processes this interpreter started. For adopted ones (started by an earlier agent)
    the kernel gives the status to their parent only, so this returns None; callers report
    "exited, status unknown".
    """
    popen = _child(handle)
    if popen is None:
        return None
    if popen.poll() is None and not is_alive(handle):
        # A multi-threaded leader shows as a zombie before its other threads are gone, and
        # only then can it be waited for: give the kernel a moment.
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=2.0)
    return popen.returncode


def stop(handle: ProcessHandle, grace: float = 5.0, *, in_doubt: InDoubt = "spare") -> StopResult:
    """SIGTERM the node's process group (and stragglers), SIGKILL after ``grace`` seconds.

    The group is signalled only when it is provably the node's (its leader is the recorded
    process, or no process holds the leader's pid: Linux never reuses a pid that still names a
    group). ``in_doubt="stop"`` also signals it when the leader is in doubt: ``local down``
    stops what ``local up`` started, whatever the clock did. Returns once every process of the
    node is gone or has survived SIGKILL (zombies of other parents count as gone); safe to call
    on a dead or already-stopped handle.
    """
    leader = check(handle)
    group_ours = leader.verdict in (Verdict.SAME, Verdict.GONE) or (
        leader.verdict is Verdict.IN_DOUBT and in_doubt == "stop"
    )
    members = _members(handle, leader, group_ours)
    if not members:
        _reap(handle)
        return StopResult()
    logger.info(
        "stopping pid %d (group %d, %d processes), grace %.1fs", handle.pid, handle.pgid, len(members), grace
    )
    refused = _signal_all(handle.pgid, group_ours, members, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(handle)
        if not _any_running(members) and not _group_exists(handle.pgid, group_ours):
            break
        time.sleep(0.1)
    else:
        for _ in range(3):
            members = merge(members, _members(handle, check(handle), group_ours))
            refused = _signal_all(handle.pgid, group_ours, members, signal.SIGKILL) or refused
            wait_gone(members, timeout=5.0)
            _reap(handle)
            if not _group_exists(handle.pgid, group_ours):
                break
    _reap(handle)
    survivors = tuple(p.pid for p in members if _running(p))
    if survivors:
        logger.error("processes %s of pid %d survived SIGKILL", list(survivors), handle.pid)
    stopped = tuple(p.pid for p in members if p.pid not in survivors)
    return StopResult(stopped=stopped, survivors=survivors, refused=refused)


def node_processes(handle: ProcessHandle) -> list[psutil.Process]:
    """Every live process belonging to the node: the leader, its descendants, its group, and any
    process whose command line names the node's temp dir. Only this user's processes."""
    leader = check(handle)
    return _members(handle, leader, leader.verdict in (Verdict.SAME, Verdict.GONE))


def group_processes(pgid: int) -> list[psutil.Process]:
    """The live (non-zombie) processes of process group ``pgid``, whoever owns them."""
    out = []
    for proc in psutil.process_iter(["pid"]):
        if _pgid(proc.pid) == pgid and _running(proc):
            out.append(proc)
    return out


def wait_gone(procs: Iterable[psutil.Process], timeout: float) -> bool:
    """Wait until none of ``procs`` runs; True if they all went in time."""
    deadline = time.monotonic() + timeout
    remaining = list(procs)
    while remaining and time.monotonic() < deadline:
        remaining = [p for p in remaining if _running(p)]
        if remaining:
            time.sleep(0.05)
    return not [p for p in remaining if _running(p)]


def running(proc: psutil.Process) -> bool:
    """Whether ``proc`` (a psutil handle, itself safe against pid reuse) runs and is no zombie."""
    return _running(proc)


# -- internals ---------------------------------------------------------------------------------


def _child(handle: ProcessHandle) -> subprocess.Popen[bytes] | None:
    entry = _children.get(handle.pid)
    if entry is None or entry[0] != handle.recorded:
        return None
    return entry[1]


def _members(handle: ProcessHandle, leader: Check, group_ours: bool) -> list[psutil.Process]:
    found: dict[int, psutil.Process] = {}
    if leader.verdict is Verdict.SAME and not leader.zombie:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc = psutil.Process(handle.pid)
            found[proc.pid] = proc
            for child in proc.children(recursive=True):
                found[child.pid] = child
    uid = os.getuid()
    for proc in psutil.process_iter(["pid", "uids", "cmdline"]):
        if proc.pid in found or proc.pid == os.getpid():
            continue
        try:
            in_group = group_ours and _pgid(proc.pid) == handle.pgid
            uids = proc.info["uids"]
            mine = uids is not None and uids.real == uid
            names_dir = (
                mine
                and bool(handle.temp_dir)
                and identity.names_path(proc.info["cmdline"] or [], handle.temp_dir or "")
            )
            if in_group or names_dir:
                found[proc.pid] = proc
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return [p for p in found.values() if _running(p)]


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


def _group_exists(pgid: int, group_ours: bool) -> bool:
    """Whether a live (non-zombie) process of this node's group remains."""
    return group_ours and bool(group_processes(pgid))


def _signal_all(pgid: int, group_ours: bool, members: Iterable[psutil.Process], sig: signal.Signals) -> bool:
    """Signal the group (when ours) and each member; True if the kernel refused any of it."""
    refused = False
    if _group_exists(pgid, group_ours):
        try:
            os.killpg(pgid, sig)
        except PermissionError:
            refused = True
        except ProcessLookupError:
            pass
    for proc in members:
        try:
            proc.send_signal(sig)  # psutil refuses if the pid was reused since we saw it
        except psutil.AccessDenied:
            refused = True
        except psutil.NoSuchProcess:
            continue
    return refused


def merge(a: list[psutil.Process], b: list[psutil.Process]) -> list[psutil.Process]:
    """``a`` and the processes of ``b`` not in it (by pid; ``a``'s handles win)."""
    seen = {p.pid: p for p in a}
    for p in b:
        seen.setdefault(p.pid, p)
    return list(seen.values())


def _reap(handle: ProcessHandle) -> None:
    popen = _child(handle)
    if popen is not None:
        popen.poll()
