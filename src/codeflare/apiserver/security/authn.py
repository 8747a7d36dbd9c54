"""Bearer-token authentication for the embedded API server.

An admin token is generated at first start and kept (mode 0600) in the state directory; more
users come from a static tokens file in Kubernetes' CSV format
(``token,user,uid,"group1,group2"``). Resolvers (service-account tokens) are consulted for the rest. A request
without a valid token is anonymous; the HTTP layer answers 401 for anything but public paths.
"""

from __future__ import annotations

import csv
import io
import logging
import secrets
from collections.abc import Callable
from pathlib import Path

from codeflare.apiserver.context import UserInfo
from codeflare.k8s.files import write_private

log = logging.getLogger(__name__)

ADMIN_USER = UserInfo("admin", "admin", ("system:masters", "system:authenticated"))
ANONYMOUS = UserInfo("system:anonymous", "", ("system:unauthenticated",))


def load_or_create_admin_token(state_dir: Path) -> str:
    """The admin token of this state directory, created on first use."""
    path = state_dir / "admin.token"
    if path.exists():
        token = path.read_text().strip()
        if token:
            return token
    token = secrets.token_urlsafe(32)
    write_private(path, token + "\n")
    return token


def parse_tokens_file(text: str) -> dict[str, UserInfo]:
    """Parse Kubernetes' static token file format; malformed lines raise ValueError naming the line."""
    users: dict[str, UserInfo] = {}
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or (row[0].startswith("#")):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise ValueError(f'tokens file line {lineno}: expected token,user[,uid[,"groups"]]')
        token, user = row[0].strip(), row[1].strip()
        uid = row[2].strip() if len(row) > 2 else ""
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        users[token] = UserInfo(user, uid, (*groups, "system:authenticated"))
    return users


class TokenAuthenticator:
    """Maps bearer tokens to users."""

    def __init__(self, admin_token: str, users: dict[str, UserInfo] | None = None) -> None:
        self._users: dict[str, UserInfo] = {admin_token: ADMIN_USER}
        self._users.update(users or {})
        self._resolvers: list[Callable[[str], UserInfo | None]] = []

    def add_resolver(self, resolver: Callable[[str], UserInfo | None]) -> None:
        """Consult ``resolver`` (token -> user or None) for tokens that are not static."""
        self._resolvers.append(resolver)

    def add(self, token: str, user: UserInfo) -> None:
        self._users[token] = user

    def remove(self, token: str) -> None:
        self._users.pop(token, None)

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """The user of an ``Authorization: Bearer <token>`` header; None when invalid or absent."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        user = self._users.get(token.strip())
        if user is None:
            # compare anyway to keep timing independent of which prefix matched
            secrets.compare_digest(token, token)
            for resolver in self._resolvers:
                user = resolver(token.strip())
                if user is not None:
                    break
        return user
