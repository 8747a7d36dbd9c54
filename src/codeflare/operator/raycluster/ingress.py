"""How the Ray dashboard is reached from outside: an Ingress on Kubernetes, a Route on OpenShift.

The Ingress exists only when ``kuberay.ingressDomain`` is set; its host is
``<name>-<namespace>.<ingressDomain>``. The Route lets OpenShift pick the host; with the OAuth
proxy it points at the proxy's Service (re-encrypting TLS), otherwise at the head Service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeflare.k8s.types import Obj
from codeflare.operator.raycluster import (
    DASHBOARD_PORT,
    child_metadata,
    cluster_ref,
    dashboard_name,
    head_service_name,
)
from codeflare.operator.raycluster.oauth import oauth_service_name


def dashboard_host(name: str, namespace: str, ingress_domain: str) -> str:
    return f"{name}-{namespace}.{ingress_domain}"


def dashboard_ingress(rc: Mapping[str, Any], ingress_domain: str) -> Obj:
    """The Ingress routing ``<name>-<namespace>.<domain>`` to the head's dashboard port."""
    namespace, name = cluster_ref(rc)
    backend = {"service": {"name": head_service_name(name), "port": {"number": DASHBOARD_PORT}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": child_metadata(rc, dashboard_name(name)),
        "spec": {
            "rules": [
                {
                    "host": dashboard_host(name, namespace, ingress_domain),
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                }
            ]
        },
    }


def dashboard_route(rc: Mapping[str, Any], oauth: bool) -> Obj:
    """The OpenShift Route to the dashboard (through the OAuth proxy when it is injected)."""
    _, name = cluster_ref(rc)
    if oauth:
        target, port, tls = oauth_service_name(name), "oauth-proxy", {"termination": "reencrypt"}
    else:
        target, port, tls = head_service_name(name), "dashboard", {"termination": "edge"}
    return {
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": child_metadata(rc, dashboard_name(name)),
        "spec": {
            "to": {"kind": "Service", "name": target},
            "port": {"targetPort": port},
            "tls": {**tls, "insecureEdgeTerminationPolicy": "Redirect"},
        },
    }
