"""The OpenShift OAuth proxy in front of the Ray dashboard: sidecar, its volumes, its objects.

The webhook injects :func:`sidecar` into the head pod with :func:`volumes` and the service
account :func:`service_account_name`; the controller creates that ServiceAccount, the proxy's
Service (whose serving certificate OpenShift writes into the TLS Secret), the cookie Secret and a
ClusterRoleBinding to ``system:auth-delegator`` (cluster-scoped: the reason for a finalizer).
OpenShift only; nothing here is used on plain Kubernetes.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping
from typing import Any

from codeflare.k8s.constants import RAY_CLUSTER_LABEL, RAY_NODE_TYPE_LABEL
from codeflare.k8s.types import Obj
from codeflare.operator.raycluster import (
    DASHBOARD_PORT,
    OAUTH_PORT,
    child_metadata,
    cluster_ref,
    dashboard_name,
)

CONTAINER_NAME = "oauth-proxy"
IMAGE = "registry.redhat.io/openshift4/ose-oauth-proxy:latest"
TLS_VOLUME = "proxy-tls-secret"
TLS_MOUNT = "/etc/tls/private"


def service_account_name(name: str) -> str:
    return f"{name}-oauth-proxy"


def oauth_service_name(name: str) -> str:
    return f"{name}-oauth"


def tls_secret_name(name: str) -> str:
    return f"{name}-proxy-tls-secret"


def cookie_secret_name(name: str) -> str:
    return f"{name}-oauth-config"


def cluster_role_binding_name(name: str, namespace: str) -> str:
    return f"{name}-{namespace}-auth-delegator"


def sidecar(name: str, namespace: str) -> Obj:
    """The proxy container: OpenShift login in front of the dashboard on port 8443."""
    return {
        "name": CONTAINER_NAME,
        "image": IMAGE,
        "args": [
            f"--https-address=:{OAUTH_PORT}",
            "--provider=openshift",
            f"--openshift-service-account={service_account_name(name)}",
            f"--upstream=http://localhost:{DASHBOARD_PORT}",
            f"--tls-cert={TLS_MOUNT}/tls.crt",
            f"--tls-key={TLS_MOUNT}/tls.key",
            "--cookie-secret=$(COOKIE_SECRET)",
            f'--openshift-delegate-urls={{"/":{{"resource":"pods","namespace":"{namespace}","verb":"get"}}}}',
        ],
        "env": [
            {
                "name": "COOKIE_SECRET",
                "valueFrom": {"secretKeyRef": {"name": cookie_secret_name(name), "key": "cookie_secret"}},
            }
        ],
        "ports": [{"name": CONTAINER_NAME, "containerPort": OAUTH_PORT}],
        "volumeMounts": [{"name": TLS_VOLUME, "mountPath": TLS_MOUNT, "readOnly": True}],
    }


def volumes(name: str) -> list[Obj]:
    return [{"name": TLS_VOLUME, "secret": {"secretName": tls_secret_name(name)}}]


def children(rc: Mapping[str, Any]) -> list[Obj]:
    """Namespaced objects the proxy needs (ServiceAccount, Service, cookie Secret)."""
    _, name = cluster_ref(rc)
    account: Obj = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": child_metadata(rc, service_account_name(name)),
    }
    account["metadata"]["annotations"] = {
        "serviceaccounts.openshift.io/oauth-redirectreference.first": (
            '{"kind":"OAuthRedirectReference","apiVersion":"v1",'
            f'"reference":{{"kind":"Route","name":"{dashboard_name(name)}"}}}}'
        )
    }
    service: Obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": child_metadata(rc, oauth_service_name(name)),
        "spec": {
            "selector": {RAY_CLUSTER_LABEL: name, RAY_NODE_TYPE_LABEL: "head"},
            "ports": [{"name": CONTAINER_NAME, "port": OAUTH_PORT, "targetPort": OAUTH_PORT}],
        },
    }
    service["metadata"]["annotations"] = {
        "service.beta.openshift.io/serving-cert-secret-name": tls_secret_name(name)
    }
    return [account, service]


def cookie_secret(rc: Mapping[str, Any]) -> Obj:
    """The proxy's cookie Secret (random, created once and then left alone)."""
    _, name = cluster_ref(rc)
    value = base64.b64encode(secrets.token_bytes(16)).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": child_metadata(rc, cookie_secret_name(name)),
        "type": "Opaque",
        "data": {"cookie_secret": base64.b64encode(value.encode()).decode()},
    }


def cluster_role_binding(rc: Mapping[str, Any]) -> Obj:
    """Lets the proxy's service account delegate authentication (cluster-scoped, not owned)."""
    namespace, name = cluster_ref(rc)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": child_metadata(rc, cluster_role_binding_name(name, namespace), owned=False),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        "subjects": [{"kind": "ServiceAccount", "name": service_account_name(name), "namespace": namespace}],
    }
