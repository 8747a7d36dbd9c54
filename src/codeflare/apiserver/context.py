"""Who is asking and how: the per-request context threaded through the object API.

Kept apart from HTTP so that in-process callers (garbage collection, namespace finalization)
use the same code paths as clients, with the system identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity, as TokenReview and SubjectAccessReview report it."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


SYSTEM_USER = UserInfo("system:apiserver", "", ("system:masters", "system:authenticated"))


@dataclass
class RequestContext:
    """Options of one write (or read): identity, dry run, field manager and validation."""

    user: UserInfo = SYSTEM_USER
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"  # Strict | Warn | Ignore
    user_agent: str = ""
    warnings: list[str] = field(default_factory=list)

    def manager(self, default: str = "unknown") -> str:
        if self.field_manager:
            return self.field_manager
        if self.user_agent:
            return self.user_agent.split("/", 1)[0]
        return default
