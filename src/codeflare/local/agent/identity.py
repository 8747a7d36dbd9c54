"""Which process a pid is, decided from the kernel's own record and never from the wall clock.

A pid is reused once its process is gone, so a record needs more than the pid. psutil's
``create_time()`` is no such thing: it adds the boot time of ``/proc/stat`` (wall clock minus time
since boot) to the kernel's start ticks, and so moves whenever the clock is stepped (NTP, a VM
snapshot restore, suspend/resume). A :class:`ProcessIdentity` is what the kernel keeps instead:
the start time in clock ticks since boot (``/proc/<pid>/stat`` field 22, read after the *last*
``)`` because the command name may hold spaces and parentheses), made independent of the reader's
time namespace, the boot it belongs to (``/proc/sys/kernel/random/boot_id``), the executable and
the command line. It is captured right after the process is started and compared exactly
(:func:`verify`), giving one of four verdicts: the same process (perhaps a zombie), gone, another
process, or in doubt.

Fallback where there is no ``/proc`` (macOS, the BSDs): psutil's create time with a tolerance,
logged once as such; a create time outside the tolerance with the same executable and command line
is *in doubt*, never *another process*, so a clock step cannot turn one of ours into a stranger.
Records written by older versions, which hold a create time only, are read the same way: in doubt
while their pid lives (see :meth:`ProcessIdentity.legacy`); callers settle such doubt with
evidence of their own (a Ray node's temp dir, local mode's home on the command line) or act on it
conservatively. This module only reads; it never sends a signal.
"""

from __future__ import annotations

import enum
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: Two wall-clock create times closer than this are the same process (fallback and old records).
CREATE_TIME_TOLERANCE_S = 0.05
_DELETED = " (deleted)"


class Verdict(enum.Enum):
    """What a pid holds now, compared with a recorded identity."""

    SAME = "same"  # proven to be the recorded process (``Check.zombie``: it has exited, unreaped)
    GONE = "gone"  # no process holds the pid
    OTHER = "other"  # proven to be another process (the recorded one is gone, its pid reused)
    IN_DOUBT = "in doubt"  # cannot be told apart (old record, no /proc, unreadable details)


@dataclass(frozen=True)
class Check:
    """The verdict on one recorded process, and why (for logs and reports)."""

    verdict: Verdict
    reason: str
    zombie: bool = False

    @property
    def running(self) -> bool:
        """Proven to be the recorded process, and not a zombie."""
        return self.verdict is Verdict.SAME and not self.zombie


@dataclass(frozen=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` we use."""

    pid: int
    comm: str
    state: str
    ppid: int
    pgrp: int
    session: int
    start_ticks: int  # field 22, clock ticks since boot as the reader's time namespace sees it


def parse_stat(text: str) -> ProcStat:
    """Parse one ``/proc/<pid>/stat`` line. ``comm`` (field 2) is in parentheses and may contain
    spaces and ``)``, so the fixed fields are counted from the last ``)`` on."""
    open_paren, close_paren = text.index("("), text.rindex(")")
    rest = text[close_paren + 1 :].split()
    # rest[0] is field 3 (state); field N is rest[N - 3]
    return ProcStat(
        pid=int(text[:open_paren]),
        comm=text[open_paren + 1 : close_paren],
        state=rest[0],
        ppid=int(rest[1]),
        pgrp=int(rest[2]),
        session=int(rest[3]),
        start_ticks=int(rest[19]),
    )


class ProcFS:
    """Reads the kernel's process table from a procfs mount (``/proc``; another root in tests)."""

    def __init__(self, root: str | Path = "/proc") -> None:
        self.root = Path(root)
        self.ticks_per_second = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def available(self) -> bool:
        return (self.root / "self" / "stat").is_file()

    def stat(self, pid: int) -> ProcStat | None:
        """None when no process holds ``pid``."""
        try:
            return parse_stat((self.root / str(pid) / "stat").read_text(errors="replace"))
        except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
            return None

    def exe(self, pid: int) -> str | None:
        """The executable's path (None: unreadable, e.g. another user's process, or a zombie)."""
        try:
            path = os.readlink(self.root / str(pid) / "exe")
        except OSError:
            return None
        # still the same program when its file was replaced on disk (an upgrade) after the start
        return path[: -len(_DELETED)] if path.endswith(_DELETED) else path

    def cmdline(self, pid: int) -> tuple[str, ...] | None:
        try:
            raw = (self.root / str(pid) / "cmdline").read_bytes()
        except OSError:
            return None
        return tuple(part.decode(errors="surrogateescape") for part in raw.split(b"\0")[:-1])

    def boot_id(self) -> str | None:
        try:
            return (self.root / "sys" / "kernel" / "random" / "boot_id").read_text().strip() or None
        except OSError:
            return None

    def boottime_offset_ticks(self) -> int:
        """How far the reader's time namespace shifts ``CLOCK_BOOTTIME`` (and so field 22)."""
        try:
            lines = (self.root / "self" / "timens_offsets").read_text().splitlines()
        except OSError:
            return 0
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[0] in ("boottime", "7"):
                return int(parts[1]) * self.ticks_per_second + int(parts[2]) * self.ticks_per_second // 10**9
        return 0

    def start_ticks(self, stat: ProcStat) -> int:
        """Field 22 with the reader's time-namespace offset taken out: the same number from
        every namespace (a record made in one is checked from another)."""
        return stat.start_ticks - self.boottime_offset_ticks()


#: The process table every check reads unless told otherwise.
PROCFS = ProcFS()


@dataclass(frozen=True)
class ProcessIdentity:
    """One process as recorded at its start: exact kernel facts, or a create time (fallback)."""

    pid: int
    start_ticks: int | None = None
    boot_id: str | None = None
    exe: str | None = None
    cmdline: tuple[str, ...] | None = None
    create_time: float | None = None  # wall-clock seconds: fallback and old records only

    @property
    def exact(self) -> bool:
        """Recorded from the kernel's start ticks (comparable without the wall clock)."""
        return self.start_ticks is not None

    @classmethod
    def legacy(cls, pid: int, create_time: float) -> ProcessIdentity:
        """A record of an older version: pid and wall-clock create time only. While its pid
        lives, :func:`verify` calls it in doubt (a clock step or a reuse look the same)."""
        return cls(pid=pid, create_time=create_time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessIdentity:
        cmdline = data.get("cmdline")
        ticks = data.get("start_ticks")
        created = data.get("create_time")
        return cls(
            pid=int(data["pid"]),
            start_ticks=None if ticks is None else int(ticks),
            boot_id=data.get("boot_id"),
            exe=data.get("exe"),
            cmdline=None if cmdline is None else tuple(str(a) for a in cmdline),
            create_time=None if created is None else float(created),
        )


def capture(pid: int, procfs: ProcFS | None = None) -> ProcessIdentity:
    """The identity of ``pid`` now (call it right after starting the process: ``Popen`` returns
    once the child has exec'd, so the executable and command line are the final ones)."""
    fs = procfs or PROCFS
    if fs.available():
        stat = fs.stat(pid)
        if stat is None:
            return ProcessIdentity(pid=pid)  # already gone: later checks say gone or in doubt
        return ProcessIdentity(
            pid=pid,
            start_ticks=fs.start_ticks(stat),
            boot_id=fs.boot_id(),
            exe=fs.exe(pid),
            cmdline=_settled_cmdline(fs, pid),
        )
    _warn_fallback()
    return _capture_with_psutil(pid)


def _settled_cmdline(fs: ProcFS, pid: int, timeout: float = 1.0) -> tuple[str, ...] | None:
    """The command line once exec has finished writing it. The kernel closes the close-on-exec
    pipe ``Popen`` waits on before it copies the new argv, so for an instant the command line
    of a just-started process reads empty; a started program's never is. None if it stays empty
    (the process ended meanwhile): then it is not compared."""
    deadline = time.monotonic() + timeout
    while True:
        cmdline = fs.cmdline(pid)
        if cmdline:
            return cmdline
        stat = fs.stat(pid)
        if stat is None or stat.state in ("Z", "X") or time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def verify(recorded: ProcessIdentity, procfs: ProcFS | None = None) -> Check:
    """Compare what holds ``recorded.pid`` now with the record."""
    fs = procfs or PROCFS
    if fs.available():
        return _verify_proc(recorded, fs)
    _warn_fallback()
    return _verify_psutil(recorded)


def names_path(cmdline: Sequence[str], directory: str) -> bool:
    """Whether a command line names ``directory`` or a path below it (``--opt=path`` included)."""
    directory = directory.rstrip("/")
    for arg in cmdline:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value == directory or value.startswith(directory + "/"):
            return True
    return False


def current_cmdline(pid: int, procfs: ProcFS | None = None) -> tuple[str, ...] | None:
    """The command line ``pid`` has now (None: gone or unreadable)."""
    fs = procfs or PROCFS
    if fs.available():
        return fs.cmdline(pid)
    try:
        import psutil

        return tuple(psutil.Process(pid).cmdline())
    except Exception:
        return None


# -- internals ---------------------------------------------------------------------------------


def _verify_proc(recorded: ProcessIdentity, fs: ProcFS) -> Check:
    stat = fs.stat(recorded.pid)
    if stat is None:
        return Check(Verdict.GONE, f"no process has pid {recorded.pid}")
    zombie = stat.state in ("Z", "X")
    if not recorded.exact:
        return _verify_create_time(recorded, zombie)
    boot = fs.boot_id()
    if recorded.boot_id and boot and recorded.boot_id != boot:
        return Check(Verdict.OTHER, f"pid {recorded.pid} was recorded before the host rebooted")
    ticks = fs.start_ticks(stat)
    if ticks != recorded.start_ticks:
        return Check(
            Verdict.OTHER,
            f"pid {recorded.pid} started at tick {ticks}, the recorded process at {recorded.start_ticks}",
        )
    if zombie:
        return Check(Verdict.SAME, f"pid {recorded.pid} has exited (zombie)", zombie=True)
    exe, cmdline = fs.exe(recorded.pid), fs.cmdline(recorded.pid)
    if recorded.exe is not None and exe is None:
        return Check(Verdict.IN_DOUBT, f"the executable of pid {recorded.pid} cannot be read")
    if recorded.exe is not None and exe != recorded.exe:
        return Check(Verdict.OTHER, f"pid {recorded.pid} now runs {exe}, not {recorded.exe}")
    if recorded.cmdline is not None and cmdline != recorded.cmdline:
        return Check(Verdict.OTHER, f"pid {recorded.pid} now has another command line")
    return Check(Verdict.SAME, f"pid {recorded.pid}: same start tick, executable and command line")


def _verify_create_time(recorded: ProcessIdentity, zombie: bool) -> Check:
    """An old record (create time only) whose pid lives: in doubt, whatever the clock says."""
    import psutil

    try:
        now = psutil.Process(recorded.pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return Check(Verdict.IN_DOUBT, f"pid {recorded.pid}: old record, process unreadable")
    if recorded.create_time is None:
        return Check(Verdict.IN_DOUBT, f"pid {recorded.pid}: the record has no start time")
    drift = now - recorded.create_time
    return Check(
        Verdict.IN_DOUBT,
        f"pid {recorded.pid}: recorded by an older version (create time only, now {drift:+.2f} s off)",
        zombie=zombie,
    )


def _capture_with_psutil(pid: int) -> ProcessIdentity:
    import psutil

    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            created = proc.create_time()
            try:
                exe: str | None = proc.exe() or None
                cmdline: tuple[str, ...] | None = tuple(proc.cmdline())
            except psutil.AccessDenied:
                exe, cmdline = None, None
    except psutil.NoSuchProcess:
        return ProcessIdentity(pid=pid)
    # an empty command line is one exec has not written yet (see _settled_cmdline): not compared
    return ProcessIdentity(pid=pid, exe=exe, cmdline=cmdline or None, create_time=created)


def _verify_psutil(recorded: ProcessIdentity) -> Check:
    """Without /proc: executable and command line exactly, create time within the tolerance."""
    import psutil

    try:
        proc = psutil.Process(recorded.pid)
        created = proc.create_time()
        zombie = proc.status() == psutil.STATUS_ZOMBIE
        exe = None if zombie else proc.exe() or None
        cmdline = None if zombie else tuple(proc.cmdline())
    except psutil.NoSuchProcess:
        return Check(Verdict.GONE, f"no process has pid {recorded.pid}")
    except psutil.AccessDenied:
        return Check(Verdict.IN_DOUBT, f"pid {recorded.pid} cannot be read")
    if recorded.create_time is None:
        return Check(Verdict.IN_DOUBT, f"pid {recorded.pid}: the record has no create time")
    if not zombie and recorded.exe is not None and exe != recorded.exe:
        return Check(Verdict.OTHER, f"pid {recorded.pid} now runs {exe}, not {recorded.exe}")
    if not zombie and recorded.cmdline is not None and cmdline != recorded.cmdline:
        return Check(Verdict.OTHER, f"pid {recorded.pid} now has another command line")
    drift = created - recorded.create_time
    if abs(drift) > CREATE_TIME_TOLERANCE_S:
        return Check(
            Verdict.IN_DOUBT,
            f"pid {recorded.pid}: create time {drift:+.2f} s off (the clock may have been stepped)",
            zombie=zombie,
        )
    return Check(Verdict.SAME, f"pid {recorded.pid}: same create time (no /proc: wall clock)", zombie=zombie)


_fallback_logged = False


def _warn_fallback() -> None:
    global _fallback_logged
    if not _fallback_logged:
        _fallback_logged = True
        logger.warning(
            "no /proc on this host: process identity falls back to psutil's create time "
            "(within %.2f s), which a clock step can put in doubt",
            CREATE_TIME_TOLERANCE_S,
        )
