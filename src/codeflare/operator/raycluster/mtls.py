"""mTLS between Ray nodes and clients: the per-cluster CA Secret and what pods need to use it.

The controller creates ``<name>-ca-secret-mtls`` once (never regenerating it, clients hold
certificates from it), labelled ``ray.openshift.ai/cluster-name`` as codeflare-sdk
expects. The webhook adds to every Ray pod template an init container that signs
a serving certificate for the pod with that CA, the two volumes involved, and Ray's TLS
environment variables on the Ray container. Naming and minting shared with the SDK are in
:mod:`codeflare.api.mtls`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from codeflare.api.mtls import CLUSTER_NAME_LABEL, ca_secret_name, new_cluster_ca
from codeflare.k8s.types import Obj
from codeflare.operator.raycluster import child_metadata, cluster_ref

INIT_CONTAINER = "create-cert"
CA_VOLUME, CERT_VOLUME = "ca-vol", "server-cert"
CA_MOUNT, CERT_MOUNT = "/home/ray/workspace/ca", "/home/ray/workspace/tls"

_SIGN_SCRIPT = f"""set -e
cd {CERT_MOUNT}
openssl req -nodes -newkey rsa:2048 -keyout tls.key -out tls.csr -subj "/CN=$POD_NAME"
printf 'subjectAltName=IP:%s,IP:127.0.0.1,DNS:localhost,DNS:%s\\n' "$POD_IP" "$POD_NAME" > san.ext
openssl x509 -req -in tls.csr -CA {CA_MOUNT}/ca.crt -CAkey {CA_MOUNT}/ca.key -CAcreateserial \\
  -out tls.crt -days 365 -extfile san.ext
cp {CA_MOUNT}/ca.crt ca.crt
"""


def tls_env() -> list[Obj]:
    """Ray's TLS settings (the same names the SDK sets for ``ray.init``)."""
    return [
        {"name": "RAY_USE_TLS", "value": "1"},
        {"name": "RAY_TLS_SERVER_CERT", "value": f"{CERT_MOUNT}/tls.crt"},
        {"name": "RAY_TLS_SERVER_KEY", "value": f"{CERT_MOUNT}/tls.key"},
        {"name": "RAY_TLS_CA_CERT", "value": f"{CERT_MOUNT}/ca.crt"},
    ]


def volume_mounts() -> list[Obj]:
    return [{"name": CERT_VOLUME, "mountPath": CERT_MOUNT}]


def init_container(image: str) -> Obj:
    """Signs the pod's serving certificate with the cluster CA before Ray starts."""
    pod_field = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    return {
        "name": INIT_CONTAINER,
        "image": image,
        "command": ["sh", "-c", _SIGN_SCRIPT],
        "env": pod_field,
        "volumeMounts": [
            {"name": CA_VOLUME, "mountPath": CA_MOUNT, "readOnly": True},
            {"name": CERT_VOLUME, "mountPath": CERT_MOUNT},
        ],
    }


def volumes(cluster_name: str) -> list[Obj]:
    return [
        {"name": CA_VOLUME, "secret": {"secretName": ca_secret_name(cluster_name)}},
        {"name": CERT_VOLUME, "emptyDir": {}},
    ]


def ca_secret(rc: Mapping[str, Any]) -> Obj:
    """A new CA Secret for the cluster (create it only when none exists)."""
    namespace, name = cluster_ref(rc)
    data = new_cluster_ca(name, namespace)
    metadata = child_metadata(rc, ca_secret_name(name))
    metadata["labels"][CLUSTER_NAME_LABEL] = name
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "Opaque",
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }
