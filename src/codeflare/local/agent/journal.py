"""The agent's journal: which Ray clusters it runs, kept in its home, one JSON file per cluster.

The RayCluster's state annotation says which processes a cluster has, but a cluster deleted (and
forced out) while the agent was down has no object left to read it from; the journal, keyed by
the RayCluster's uid, covers that case, and ``local down`` reads it to stop Ray nodes an agent
that died left behind. Files are private (0600) and replaced atomically; nothing here starts or
stops a process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeflare.k8s.files import write_private


class ClusterJournal:
    """``<home>/clusters/<uid>.json`` for every cluster whose processes this agent started."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, uid: str) -> Path:
        return self.directory / f"{uid}.json"

    def write(self, uid: str, state: dict[str, Any]) -> None:
        write_private(self.path(uid), json.dumps(state))

    def read(self, uid: str) -> str | None:
        try:
            return self.path(uid).read_text()
        except FileNotFoundError:
            return None

    def remove(self, uid: str) -> None:
        self.path(uid).unlink(missing_ok=True)

    def uids(self) -> list[str]:
        return sorted(path.stem for path in self.directory.glob("*.json"))
