"""Writes the kubeconfig that kubectl, the ``kubernetes`` client and lightkube use to reach us."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

CONTEXT = "codeflare-local"


def render(
    server: str, token: str, ca_pem: bytes | None, namespace: str = "default", user: str = "admin"
) -> str:
    """A one-context kubeconfig for ``server`` authenticating with a bearer token."""
    cluster: dict[str, object] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user, "namespace": namespace}}
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write(path: Path, text: str) -> None:
    """Write atomically with mode 0600 (it holds a credential)."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
