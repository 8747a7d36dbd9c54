"""Who is asking, what for, and how: the identity, attributes and options of one request.

Kept apart from HTTP so that in-process callers (garbage collection, namespace finalization)
use the same code paths as clients, with the system identity, and so that authorization, the
review endpoints and admission speak of a request in the same terms as the endpoints that parse it.
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


@dataclass
class RequestAttributes:
    """What a request does, in the terms RBAC and admission speak (also what a review asks about)."""

    verb: str
    path: str = ""
    resource_request: bool = True
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


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
    duplicate_fields: list[tuple[str, str]] = field(default_factory=list)  # (path, message), from decoding

    def manager(self, default: str = "unknown") -> str:
        if self.field_manager:
            return self.field_manager
        if self.user_agent:
            return self.user_agent.split("/", 1)[0]
        return default
