"""What a RayCluster's nodes authenticate with: its Ray token and, with mTLS, its CA.

The token is random per cluster and lives in the Secret ``<name>-ray-token``
(:mod:`codeflare.api.ray_auth`), created here on first need and owned by the RayCluster, so a
restarted agent finds the same token for the nodes it re-adopts and the Secret goes with the
cluster. mTLS is on for a cluster when its head's pod template asks Ray for it
(``RAY_USE_TLS``, which the operator's webhook writes when ``mTLSEnabled``); the CA is then read
from the Secret the operator creates (:mod:`codeflare.api.mtls`), and the node certificates are
minted from it by :mod:`cluster_runner`. Nothing here starts a process or logs a secret.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from codeflare.api import ray_auth
from codeflare.api.mtls import ca_from_secret, ca_secret_name, legacy_ca_secret_name, wants_tls
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube

if TYPE_CHECKING:
    from codeflare.k8s.certs import CertPair

log = logging.getLogger(__name__)

class CredentialsPending(RuntimeError):
    """The cluster wants mTLS but its CA Secret does not exist yet (the operator makes it)."""


class ClusterCredentials:
    """Reads and creates the credentials Secrets of RayClusters."""

    def __init__(self, kube: AsyncKube) -> None:
        self.kube = kube

    async def token(self, rc: Obj) -> str:
        """The cluster's Ray token, its Secret created when there is none (or it holds none)."""
        meta = rc["metadata"]
        name, namespace = ray_auth.token_secret_name(meta["name"]), meta.get("namespace")
        existing = await self.kube.find(kinds.SECRET, name, namespace)
        token = ray_auth.token_from_secret(existing) if existing is not None else None
        if token:
            return token
        token = ray_auth.new_token()
        body = ray_auth.token_secret(rc, token)
        if existing is None:
            try:
                await self.kube.create(kinds.SECRET, body)
            except errors.AlreadyExists:  # another writer won: use theirs
                return await self.token(rc)
        else:
            await self.kube.patch(kinds.SECRET, name, {"data": body["data"]}, namespace)
        log.info("RayCluster %s/%s: created its Ray token Secret %s", namespace, meta["name"], name)
        return token

    async def tls_ca(self, rc: Obj) -> CertPair | None:
        """The cluster CA when the cluster wants mTLS, else None; :class:`CredentialsPending`
        while the CA Secret is missing, ValueError when it lacks the CA."""
        if not wants_tls(rc):
            return None
        from codeflare.k8s.certs import CertPair

        meta = rc["metadata"]
        namespace = meta.get("namespace")
        for name in (ca_secret_name(meta["name"]), legacy_ca_secret_name(meta["name"])):
            secret = await self.kube.find(kinds.SECRET, name, namespace)
            if secret is not None:
                cert, key = ca_from_secret(secret)
                return CertPair(cert, key)
        raise CredentialsPending(
            f"RayCluster {namespace}/{meta['name']} asks for mTLS (RAY_USE_TLS) but its CA Secret "
            f"{ca_secret_name(meta['name'])} does not exist yet"
        )
