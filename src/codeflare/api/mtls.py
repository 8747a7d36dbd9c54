"""Mutual TLS material of one Ray cluster: the per-cluster CA Secret and client certificates.

The operator keeps one certificate authority per RayCluster in the Secret ``ca-secret-<name>``
(keys ``ca.crt`` and ``ca.key``); Ray's head and workers get server certificates from it, and a
user who may read that Secret mints a client certificate for ``ray.init`` with
:func:`client_certificate`. This module shares the naming and the minting between the operator
and the SDK; it does no I/O and never talks to the API.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CA_CERT_KEY",
    "CA_KEY_KEY",
    "ClientCertificate",
    "ca_from_secret",
    "ca_secret_name",
    "client_certificate",
    "new_cluster_ca",
]

CA_CERT_KEY = "ca.crt"
CA_KEY_KEY = "ca.key"


@dataclass(frozen=True)
class ClientCertificate:
    """PEM material for ``ray.init`` over mTLS: the cluster CA, a client key and its certificate."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def ca_secret_name(cluster_name: str) -> str:
    """Name of the Secret holding a RayCluster's CA."""
    return f"ca-secret-{cluster_name}"


def new_cluster_ca(cluster_name: str, namespace: str) -> dict[str, bytes]:
    """A fresh CA for one cluster, as the Secret's ``data`` before base64 encoding."""
    from codeflare.k8s.certs import new_ca

    ca = new_ca(f"ray-{cluster_name}.{namespace}-ca")
    return {CA_CERT_KEY: ca.cert_pem, CA_KEY_KEY: ca.key_pem}


def ca_from_secret(secret: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """(cert PEM, key PEM) of the CA stored in a Secret manifest; ValueError when incomplete."""
    data = secret.get("data") or {}
    missing = [key for key in (CA_CERT_KEY, CA_KEY_KEY) if not data.get(key)]
    if missing:
        name = (secret.get("metadata") or {}).get("name", "?")
        raise ValueError(f"Secret {name} lacks {', '.join(missing)}")
    return base64.b64decode(data[CA_CERT_KEY]), base64.b64decode(data[CA_KEY_KEY])


def client_certificate(
    secret: Mapping[str, Any], common_name: str = "ray-client", hosts: list[str] | None = None, days: int = 30
) -> ClientCertificate:
    """Mint a certificate signed by the cluster CA in ``secret``, usable as Ray's TLS identity.

    Ray's gRPC checks that the peer's chain ends at the cluster CA; ``hosts`` become the SANs
    (default: the loopback names, where a port-forwarded or local cluster is reached).
    """
    from codeflare.k8s.certs import CertPair, issue

    ca_cert, ca_key = ca_from_secret(secret)
    leaf = issue(CertPair(ca_cert, ca_key), common_name, hosts or ["127.0.0.1", "localhost"], client=True,
                 days=days)
    return ClientCertificate(ca_pem=ca_cert, cert_pem=leaf.cert_pem, key_pem=leaf.key_pem)
