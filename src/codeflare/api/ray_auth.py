"""A Ray cluster's authentication token: the Secret that holds it and the headers that carry it.

Ray (2.5x and later) authenticates every gRPC and dashboard call with one shared token when
``RAY_AUTH_MODE=token``. Local mode gives each RayCluster its own random token, kept in the Secret
``<name>-ray-token`` (key ``token``, owned by the RayCluster so it goes with it): whoever may read
that Secret (RBAC on Secrets in the cluster's namespace, as for the CA Secret) may use the
cluster. The node agent creates it; the SDK reads it to talk to the dashboard. This module names
and builds, it does no I/O.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping
from typing import Any

from codeflare.k8s.constants import RAY_CLUSTER_LABEL
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.types import Obj

__all__ = [
    "TOKEN_KEY",
    "bearer_headers",
    "new_token",
    "token_from_secret",
    "token_secret",
    "token_secret_name",
]

TOKEN_KEY = "token"


def token_secret_name(cluster_name: str) -> str:
    return f"{cluster_name}-ray-token"


def new_token() -> str:
    """256 random bits, hex (the form ``ray get-auth-token --generate`` writes)."""
    return secrets.token_hex(32)


def token_secret(rc: Mapping[str, Any], token: str) -> Obj:
    """The token Secret of RayCluster ``rc``, owned by it."""
    meta = rc.get("metadata") or {}
    name = str(meta.get("name"))
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": token_secret_name(name),
            "namespace": meta.get("namespace"),
            "labels": {RAY_CLUSTER_LABEL: name},
            "ownerReferences": [owner_reference(rc, api_version="ray.io/v1", kind="RayCluster")],
        },
        "type": "Opaque",
        "data": {TOKEN_KEY: base64.b64encode(token.encode()).decode()},
    }


def token_from_secret(secret: Mapping[str, Any]) -> str | None:
    """The token in a Secret manifest, None when it holds none."""
    raw = (secret.get("data") or {}).get(TOKEN_KEY)
    if not raw:
        return None
    try:
        return base64.b64decode(raw).decode().strip() or None
    except (ValueError, UnicodeDecodeError):
        return None


def bearer_headers(token: str | None) -> dict[str, str]:
    """The header Ray's dashboard and Jobs API accept the token in (empty without a token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}
