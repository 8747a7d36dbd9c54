"""The RayCluster controller's children: what the operator adds next to each RayCluster.

Pure builders (``ingress``, ``networkpolicy``, ``mtls``, ``oauth``) turn a RayCluster manifest
into the manifests of its children; ``controller`` applies them. Names and labels shared by the
builders, the webhooks and the SDK are defined here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeflare.k8s import ownerrefs
from codeflare.k8s.constants import MANAGED_BY_LABEL, OPERATOR_NAME, RAY_CLUSTER_LABEL
from codeflare.k8s.types import Obj

MANAGED_BY = {MANAGED_BY_LABEL: OPERATOR_NAME}
FIELD_MANAGER = "codeflare-raycluster-controller"
DASHBOARD_PORT, CLIENT_PORT, GCS_PORT, METRICS_PORT, OAUTH_PORT = 8265, 10001, 6379, 8080, 8443


def cluster_ref(rc: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a RayCluster manifest."""
    meta = rc.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def head_service_name(name: str) -> str:
    return f"{name}-head-svc"


def dashboard_name(name: str) -> str:
    """Name of the Ingress or Route exposing the dashboard (the SDK looks for it)."""
    return f"ray-dashboard-{name}"


def owner_reference(rc: Mapping[str, Any]) -> Obj:
    """A controlling owner reference to the RayCluster (the API server collects the child with it)."""
    return ownerrefs.owner_reference(rc, api_version="ray.io/v1", kind="RayCluster")


def child_metadata(rc: Mapping[str, Any], name: str, *, owned: bool = True) -> Obj:
    """Metadata of a child: in the cluster's namespace, labelled with it, owned by it."""
    namespace, cluster = cluster_ref(rc)
    meta: Obj = {"name": name, "labels": {RAY_CLUSTER_LABEL: cluster, **MANAGED_BY}}
    if owned:
        meta["namespace"] = namespace
        meta["ownerReferences"] = [owner_reference(rc)]
    return meta
