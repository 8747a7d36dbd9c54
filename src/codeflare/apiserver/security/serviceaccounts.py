"""Service-account tokens: the TokenRequest subresource and the authentication of its tokens.

``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`` issues an opaque random token bound
to that ServiceAccount (its uid), with an expiry. Only a SHA-256 of each token is kept, in
``serviceaccount-tokens.db`` (SQLite) next to the state, so tokens survive restarts and a stolen
state file does not reveal them. A token authenticates as ``system:serviceaccount:<ns>:<name>``
in groups ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and
``system:authenticated`` while it is unexpired and the same ServiceAccount (same uid) exists:
deleting the account revokes its tokens. Tokens are not JWTs; nothing here signs or verifies keys.
The client side (asking for a token) is :mod:`codeflare.kube.tokens`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext, UserInfo
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.schema.field import ErrorType, FieldError
from codeflare.k8s.timestamps import format_rfc3339

log = logging.getLogger(__name__)

DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 2**32  # Kubernetes' upper bound for expirationSeconds
SA_KEY = "core/serviceaccounts"


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        uid,
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"),
    )


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ServiceAccountTokens:
    """Issues and resolves service-account tokens for one store."""

    def __init__(self, db_path: Path | None, store: ObjectStore, clock: Any = time.time) -> None:
        self.store = store
        self.clock = clock
        self._db = sqlite3.connect(
            str(db_path) if db_path else ":memory:", isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS tokens (digest TEXT PRIMARY KEY, ns TEXT NOT NULL, "
            "name TEXT NOT NULL, uid TEXT NOT NULL, expires REAL NOT NULL, audiences TEXT NOT NULL)"
        )
        self._db.execute("DELETE FROM tokens WHERE expires < ?", (self.clock(),))

    def close(self) -> None:
        self._db.close()

    def issue(
        self, namespace: str, name: str, expiration: int = DEFAULT_EXPIRATION, audiences: tuple[str, ...] = ()
    ) -> tuple[str, float]:
        """A new token for an existing ServiceAccount: (token, expiry as a UNIX time)."""
        account = self.store.get(SA_KEY, namespace, name)
        if account is None:
            raise errors.not_found("serviceaccounts", name)
        token = "cfsa_" + secrets.token_urlsafe(32)
        expires = self.clock() + expiration
        self._db.execute(
            "INSERT INTO tokens (digest, ns, name, uid, expires, audiences) VALUES (?, ?, ?, ?, ?, ?)",
            (
                _digest(token),
                namespace,
                name,
                account["metadata"].get("uid", ""),
                expires,
                json.dumps(list(audiences)),
            ),
        )
        log.info("issued a token for serviceaccount %s/%s, valid %ds", namespace, name, expiration)
        return token, expires

    def authenticate(self, token: str) -> UserInfo | None:
        """The service account of ``token``; None when unknown, expired or the account is gone."""
        if not token.startswith("cfsa_"):
            return None
        row = self._db.execute(
            "SELECT ns, name, uid, expires FROM tokens WHERE digest = ?", (_digest(token),)
        ).fetchone()
        if row is None:
            return None
        namespace, name, uid, expires = row
        if expires < self.clock():
            return None
        account = self.store.get(SA_KEY, namespace, name)
        if account is None or account["metadata"].get("uid", "") != uid:
            return None
        return service_account_user(namespace, name, uid)

    # -- the TokenRequest subresource -------------------------------------------------------------
    async def token_request(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        """POST serviceaccounts/<name>/token: validate the TokenRequest and answer it with a token."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON or YAML object")
        if body.get("kind") not in (None, "", "TokenRequest"):
            raise errors.bad_request(
                f"the kind in the data ({body.get('kind')}) does not match the expected kind (TokenRequest)"
            )
        spec = body.get("spec") or {}
        if not isinstance(spec, dict):
            raise _invalid(attrs.name, "spec", "must be an object", spec)
        expiration = spec.get("expirationSeconds", DEFAULT_EXPIRATION)
        if expiration is None:
            expiration = DEFAULT_EXPIRATION
        if not isinstance(expiration, int) or isinstance(expiration, bool):
            raise _invalid(attrs.name, "spec.expirationSeconds", "must be an integer", expiration)
        if expiration < MIN_EXPIRATION:
            raise _invalid(
                attrs.name,
                "spec.expirationSeconds",
                "may not specify a duration less than 10 minutes",
                expiration,
            )
        if expiration > MAX_EXPIRATION:
            raise _invalid(
                attrs.name,
                "spec.expirationSeconds",
                "may not specify a duration larger than 2^32 seconds",
                expiration,
            )
        audiences = spec.get("audiences") or []
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise _invalid(attrs.name, "spec.audiences", "must be a list of strings", audiences)
        if ctx.dry_run:
            token, expires = "", self.clock() + expiration
        else:
            token, expires = self.issue(attrs.namespace, attrs.name, expiration, tuple(audiences))
        meta: dict[str, Any] = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
        return {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {**meta, "name": attrs.name, "namespace": attrs.namespace},
            "spec": {**spec, "expirationSeconds": expiration, "audiences": audiences},
            "status": {"token": token, "expirationTimestamp": format_rfc3339(expires)},
        }


def _invalid(name: str, path: str, detail: str, value: Any) -> errors.ApiError:
    return errors.invalid(
        "TokenRequest",
        name,
        [FieldError(ErrorType.INVALID, path, detail, value)],
        "authentication.k8s.io",
    )
