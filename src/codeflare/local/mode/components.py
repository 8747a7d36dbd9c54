"""The processes ``local up`` starts (API server, operator, agent): their record, checks and stop.

Each component starts as the leader of a session of its own, so its process group is exactly
what it and its children are (the agent's Ray nodes have groups of their own, recorded in its
journal). The record (``<home>/processes.json``) keeps pid, pgid, the log and the kernel's
identity of the leader (:mod:`codeflare.local.agent.identity`); a record written by an older
version (pid and create time only; it too started each component in its own session, so its
pgid is its pid) is in doubt while the pid lives, and so is any record on a host without
``/proc`` after a clock step. Doubt is settled by the leader's command line, which always names
the local-mode home (``up`` then records the proven process exactly); where it cannot be read,
the component counts as running and ``down`` still stops the group ``up`` created. :func:`stop`
signals process groups only, never a name.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codeflare.k8s.files import write_private
from codeflare.local.agent import identity, processes
from codeflare.local.agent.identity import Check, ProcessIdentity, Verdict

log = logging.getLogger(__name__)

KILL_WAIT_S = 5.0


@dataclass(frozen=True)
class Component:
    """One started control-plane process."""

    name: str
    pid: int
    pgid: int
    log: str
    identity: ProcessIdentity

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Component:
        pid = int(data["pid"])
        recorded = data.get("identity")
        if recorded:
            ident = ProcessIdentity.from_dict(recorded)
        else:  # an older version's record: pid, create time, log
            ident = ProcessIdentity.legacy(pid, float(data.get("start_time") or 0.0))
        return cls(
            name=str(data["name"]),
            pid=pid,
            pgid=int(data.get("pgid") or pid),
            log=str(data.get("log") or ""),
            identity=ident,
        )


@dataclass(frozen=True)
class Stopped:
    """What stopping one started thing (a component, a Ray node) came to."""

    what: str  # "agent (pid 12)", "Ray node head of cluster demo (pid 34)"
    stopped: tuple[int, ...] = ()  # pids that were running and are gone now
    survivors: tuple[int, ...] = ()  # pids still running
    note: str = ""  # why it was not signalled, or why the kernel refused

    @property
    def ok(self) -> bool:
        return not self.survivors


@dataclass
class DownReport:
    """Everything ``local down`` stopped, found already stopped, or could not stop."""

    results: list[Stopped] = field(default_factory=list)

    @property
    def stopped(self) -> list[Stopped]:
        return [r for r in self.results if r.stopped and r.ok]

    @property
    def survivors(self) -> list[Stopped]:
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        return not self.survivors

    def lines(self) -> list[str]:
        out = []
        for result in self.results:
            if not result.ok:
                pids = ", ".join(str(p) for p in result.survivors)
                out.append(f"could not stop {result.what}: still running (pids {pids}){_note(result)}")
            elif result.stopped:
                out.append(f"stopped {result.what} ({len(result.stopped)} processes){_note(result)}")
            else:
                out.append(f"{result.what} was not running{_note(result)}")
        return out


def _note(result: Stopped) -> str:
    return f"; {result.note}" if result.note else ""


def load(path: Path) -> dict[str, Component]:
    """The recorded components (an unreadable record reads as none)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    out: dict[str, Component] = {}
    for name, entry in data.items():
        with contextlib.suppress(KeyError, TypeError, ValueError):
            out[name] = Component.from_dict({"name": name, **entry})
    return out


def save(path: Path, components: Mapping[str, Component]) -> None:
    """Write the record (mode 0600, replaced atomically: a reader never sees half of it)."""
    write_private(path, json.dumps({name: comp.to_dict() for name, comp in components.items()}, indent=2))


def spawn(name: str, argv: Sequence[str], log_path: Path, env: Mapping[str, str]) -> Component:
    """Start ``argv`` as the leader of a new session, output appended to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=dict(env),
        )
    # Popen returns once the child has exec'd: this is the identity of the program itself.
    return Component(name, proc.pid, proc.pid, str(log_path), identity.capture(proc.pid))


def check(comp: Component, home: Path) -> Check:
    """The verdict on the component's leader; doubt is settled by its command line naming ``home``."""
    verdict = identity.verify(comp.identity)
    if verdict.verdict is not Verdict.IN_DOUBT:
        return verdict
    cmdline = identity.current_cmdline(comp.pid)
    if not cmdline:
        return verdict
    if identity.names_path(cmdline, str(home)):
        return Check(Verdict.SAME, f"{verdict.reason}; its command line names {home}", zombie=verdict.zombie)
    return Check(Verdict.OTHER, f"{verdict.reason}; its command line does not name {home}")


def running(comp: Component, home: Path) -> bool:
    """Whether the component runs; one in doubt counts as running (``up`` must not start a second)."""
    verdict = check(comp, home)
    if verdict.verdict is Verdict.IN_DOUBT:
        log.warning(
            "%s (pid %d): identity in doubt (%s); counting it as running", comp.name, comp.pid, verdict.reason
        )
    return verdict.verdict in (Verdict.SAME, Verdict.IN_DOUBT) and not verdict.zombie


def upgraded(comp: Component, home: Path) -> Component:
    """The component with an exact identity, when its record is an old one (create time only)
    and its command line proves it ours; otherwise as it is."""
    if comp.identity.exact or check(comp, home).verdict is not Verdict.SAME:
        return comp
    return replace(comp, identity=identity.capture(comp.pid))


def stop(comp: Component, home: Path, timeout: float) -> Stopped:
    """SIGTERM the component's process group, wait up to ``timeout`` s, then SIGKILL it.

    The group is the one ``up`` created. It is left alone only when its leader's pid is proven to
    hold another process (then no process of ours can be in that group any more: Linux does not
    reuse a pid that still names a group); a leader in doubt does not stop it.
    """
    what = f"{comp.name} (pid {comp.pid})"
    verdict = check(comp, home)
    if verdict.verdict is Verdict.OTHER:
        return Stopped(what, note=f"pid reused ({verdict.reason})")
    members = processes.group_processes(comp.pgid)
    if not members:
        return Stopped(what)
    note = "identity in doubt; stopped by its process group" if verdict.verdict is Verdict.IN_DOUBT else ""
    refused = _killpg(comp.pgid, signal.SIGTERM)
    # refused: no member got it (EPERM means none could be signalled), so waiting is pointless
    if refused or not processes.wait_gone(members, timeout):
        members = processes.merge(members, processes.group_processes(comp.pgid))
        kill_refused = _killpg(comp.pgid, signal.SIGKILL)
        refused = refused or kill_refused
        if not kill_refused:
            processes.wait_gone(members, KILL_WAIT_S)
    members = processes.merge(members, processes.group_processes(comp.pgid))
    survivors = tuple(p.pid for p in members if processes.running(p))
    if refused:
        note = "; ".join(n for n in (note, "the kernel refused the signal (operation not permitted)") if n)
    stopped = tuple(p.pid for p in members if p.pid not in survivors)
    return Stopped(what, stopped=stopped, survivors=survivors, note=note)


def _killpg(pgid: int, sig: signal.Signals) -> bool:
    """Signal a process group; True if the kernel refused (EPERM)."""
    try:
        os.killpg(pgid, sig)
    except PermissionError:
        return True
    except ProcessLookupError:
        pass
    return False
