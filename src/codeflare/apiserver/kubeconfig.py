"""The kubeconfig the server writes for its clients: kubectl, the ``kubernetes`` client, lightkube.

One cluster, one bearer-token user, one context (``codeflare-local``), the CA inline; written
privately (0600) because it holds the admin credential. Reading kubeconfigs is the client
layer's (:mod:`codeflare.kube.config`).
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from codeflare.k8s.files import write_private

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
    write_private(path, text)
