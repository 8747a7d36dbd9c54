"""Mutual TLS material of one Ray cluster: the per-cluster CA Secret and client certificates.

The operator keeps one certificate authority per RayCluster in the Secret
``<name>-ca-secret-mtls`` labelled ``ray.openshift.ai/cluster-name=<name>`` (keys ``ca.crt`` and
``ca.key``): the name and label are where codeflare-sdk 0.40's ``generate_cert`` looks (it lists
Secrets with that label whose name contains ``<name>-ca-secret-``, and reads ``ca.crt`` and
``tls.key`` or ``ca.key``). Ray's head and workers get server certificates from it (the webhook's
init container on Kubernetes, the node agent locally), and a user who may read that Secret mints
a client certificate for ``ray.init`` with :func:`client_certificate`. Secrets of earlier
versions were named ``ca-secret-<name>`` (:func:`legacy_ca_secret_name`; readers fall back to
it). This module shares the naming and the minting between the operator, the agent and the SDK;
it does no I/O and never talks to the API.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CA_CERT_KEY",
    "CA_KEY_KEY",
    "CLUSTER_NAME_LABEL",
    "ClientCertificate",
    "ca_from_secret",
    "ca_secret_name",
    "client_certificate",
    "legacy_ca_secret_name",
    "new_cluster_ca",
    "wants_tls",
]

CA_CERT_KEY = "ca.crt"
CA_KEY_KEY = "ca.key"
#: The label codeflare-sdk (and OpenShift AI) selects a cluster's CA Secret by.
CLUSTER_NAME_LABEL = "ray.openshift.ai/cluster-name"


@dataclass(frozen=True)
class ClientCertificate:
    """PEM material for ``ray.init`` over mTLS: the cluster CA, a client key and its certificate."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def wants_tls(rc: Mapping[str, Any]) -> bool:
    """Whether a RayCluster's head turns Ray's TLS on (``RAY_USE_TLS`` in a container's env of
    its pod template, as the operator's webhook writes it when mTLS is enabled)."""
    head = ((rc.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
    return any(
        var.get("name") == "RAY_USE_TLS" and str(var.get("value", "")).strip().lower() in ("1", "true")
        for container in (head.get("spec") or {}).get("containers") or []
        for var in container.get("env") or []
    )


def ca_secret_name(cluster_name: str) -> str:
    """Name of the Secret holding a RayCluster's CA (contains ``<name>-ca-secret-``, as
    codeflare-sdk requires; fixed, so a pod template can name it before the cluster exists)."""
    return f"{cluster_name}-ca-secret-mtls"


def legacy_ca_secret_name(cluster_name: str) -> str:
    """The CA Secret's name before codeflare-sdk compatibility (clusters made by earlier versions)."""
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

    Ray's gRPC checks that the peer's chain ends at the cluster CA, and each side presents its
    certificate to the other, so one certificate serves as client and server (a Ray node's too);
    ``hosts`` become the SANs (default: the loopback names, where a port-forwarded or local
    cluster is reached).
    """
    from codeflare.k8s.certs import CertPair, issue

    ca_cert, ca_key = ca_from_secret(secret)
    hosts = hosts or ["127.0.0.1", "localhost"]
    leaf = issue(CertPair(ca_cert, ca_key), common_name, hosts, peer=True, days=days)
    return ClientCertificate(ca_pem=ca_cert, cert_pem=leaf.cert_pem, key_pem=leaf.key_pem)
