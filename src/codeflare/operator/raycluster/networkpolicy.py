"""NetworkPolicies that confine a RayCluster: workers hear only their own cluster, the head
only its own cluster plus the ports users need.

Workers: ingress only from pods labelled ``ray.io/cluster=<name>``. Head: from its own pods on
every port; from anywhere to the dashboard (8265) and the Ray client (10001), plus the OAuth
proxy (8443) when it is injected; metrics (8080) only from monitoring namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeflare.k8s.constants import RAY_CLUSTER_LABEL, RAY_NODE_TYPE_LABEL
from codeflare.k8s.types import Obj
from codeflare.operator.raycluster import (
    CLIENT_PORT,
    DASHBOARD_PORT,
    METRICS_PORT,
    OAUTH_PORT,
    child_metadata,
    cluster_ref,
)

MONITORING_NAMESPACES = ("openshift-monitoring", "prometheus", "monitoring")


def workers_policy_name(name: str) -> str:
    return f"{name}-workers"


def head_policy_name(name: str) -> str:
    return f"{name}-head"


def _tcp(*ports: int) -> list[Obj]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def _own_pods(name: str) -> Obj:
    """The peer that selects every pod of cluster ``name`` (head and workers)."""
    return {"podSelector": {"matchLabels": {RAY_CLUSTER_LABEL: name}}}


def _ingress_policy(rc: Mapping[str, Any], policy_name: str, node_type: str, ingress: list[Obj]) -> Obj:
    """A NetworkPolicy named ``policy_name`` admitting only ``ingress`` to ``rc``'s ``node_type`` pods."""
    _, name = cluster_ref(rc)
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": child_metadata(rc, policy_name),
        "spec": {
            "podSelector": {"matchLabels": {RAY_CLUSTER_LABEL: name, RAY_NODE_TYPE_LABEL: node_type}},
            "policyTypes": ["Ingress"],
            "ingress": ingress,
        },
    }


def workers_policy(rc: Mapping[str, Any]) -> Obj:
    _, name = cluster_ref(rc)
    return _ingress_policy(rc, workers_policy_name(name), "worker", [{"from": [_own_pods(name)]}])


def head_policy(rc: Mapping[str, Any], oauth: bool = False) -> Obj:
    _, name = cluster_ref(rc)
    public = [DASHBOARD_PORT, CLIENT_PORT] + ([OAUTH_PORT] if oauth else [])
    monitoring = {
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "In",
                    "values": list(MONITORING_NAMESPACES),
                }
            ]
        }
    }
    ingress = [
        {"from": [_own_pods(name)]},
        {"ports": _tcp(*public)},
        {"from": [monitoring], "ports": _tcp(METRICS_PORT)},
    ]
    return _ingress_policy(rc, head_policy_name(name), "head", ingress)
