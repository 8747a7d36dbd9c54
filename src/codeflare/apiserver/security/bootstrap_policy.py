"""Kubernetes' default RBAC policy: the ClusterRoles and bindings a fresh server starts with.

``cluster-admin``, the aggregated ``admin``/``edit``/``view`` roles (with the codeflare, Ray and
Kueue groups added to them as their installations do), the discovery and basic-user roles and
their bindings, each labelled ``kubernetes.io/bootstrapping: rbac-defaults`` and annotated for
auto-update, as kube-apiserver writes them. Data only: the server writes these at startup.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.security.rbac import AUTHN_GROUP, AUTHZ_GROUP, RBAC_GROUP, SUPERUSER_GROUP

BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]


def _view_rules() -> list[dict[str, Any]]:
    return [
        _rule(
            [""],
            [
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "pods/log",
                "pods/status",
                "replicationcontrollers",
                "services",
                "services/status",
                "serviceaccounts",
                "events",
                "resourcequotas",
                "resourcequotas/status",
                "limitranges",
                "namespaces",
                "namespaces/status",
            ],
            _READ,
        ),
        _rule(
            ["apps"],
            [
                "deployments",
                "deployments/scale",
                "deployments/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
                "replicasets",
                "daemonsets",
            ],
            _READ,
        ),
        _rule(["batch"], ["jobs", "jobs/status", "cronjobs", "cronjobs/status"], _READ),
        _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], _READ),
        _rule(["events.k8s.io"], ["events"], _READ),
        _rule(["coordination.k8s.io"], ["leases"], _READ),
        _rule(["ray.io"], ["rayclusters", "rayclusters/status", "rayjobs", "rayjobs/status"], _READ),
        _rule(["workload.codeflare.dev"], ["appwrappers", "appwrappers/status"], _READ),
        _rule(
            ["kueue.x-k8s.io"], ["localqueues", "localqueues/status", "workloads", "workloads/status"], _READ
        ),
    ]


def _edit_rules() -> list[dict[str, Any]]:
    return [
        _rule(
            [""],
            [
                "pods",
                "pods/exec",
                "pods/attach",
                "pods/portforward",
                "services",
                "endpoints",
                "configmaps",
                "secrets",
                "persistentvolumeclaims",
                "serviceaccounts",
                "replicationcontrollers",
            ],
            _WRITE,
        ),
        _rule([""], ["secrets"], _READ),
        _rule([""], ["serviceaccounts/token"], ["create"]),
        _rule(
            ["apps"],
            [
                "deployments",
                "deployments/scale",
                "statefulsets",
                "statefulsets/scale",
                "replicasets",
                "daemonsets",
            ],
            _WRITE,
        ),
        _rule(["batch"], ["jobs", "cronjobs"], _WRITE),
        _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], _WRITE),
        _rule(["coordination.k8s.io"], ["leases"], _WRITE),
        _rule(["ray.io"], ["rayclusters", "rayjobs"], _WRITE),
        _rule(["workload.codeflare.dev"], ["appwrappers"], _WRITE),
    ]


def _admin_rules() -> list[dict[str, Any]]:
    return [
        _rule([RBAC_GROUP], ["roles", "rolebindings"], [*_READ, *_WRITE]),
        _rule([AUTHZ_GROUP], ["localsubjectaccessreviews"], ["create"]),
        _rule(["kueue.x-k8s.io"], ["localqueues"], _WRITE),
    ]


def bootstrap_cluster_roles() -> list[dict[str, Any]]:
    """Kubernetes' user-facing default ClusterRoles, with our CRD groups in admin/edit/view."""

    def role(
        name: str,
        rules: list[dict[str, Any]],
        labels: dict[str, str] | None = None,
        aggregate: list[str] | None = None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE),
        }
        out: dict[str, Any] = {"metadata": meta, "rules": rules}
        if aggregate:
            out["aggregationRule"] = {
                "clusterRoleSelectors": [
                    {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{a}": "true"}}
                    for a in aggregate
                ]
            }
        return out

    discovery_urls = ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/"]
    return [
        role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        role("admin", [], aggregate=["admin", "edit", "view"]),
        role(
            "edit",
            [],
            labels={"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
            aggregate=["edit", "view"],
        ),
        role("view", [], labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, aggregate=["view"]),
        role(
            "system:aggregate-to-admin",
            _admin_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
        ),
        role(
            "system:aggregate-to-edit",
            _edit_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"},
        ),
        role(
            "system:aggregate-to-view",
            _view_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        ),
        role(
            "system:basic-user",
            [
                _rule([AUTHZ_GROUP], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
                _rule([AUTHN_GROUP], ["selfsubjectreviews"], ["create"]),
            ],
        ),
        role("system:discovery", [{"nonResourceURLs": discovery_urls, "verbs": ["get"]}]),
        role(
            "system:public-info-viewer",
            [
                {
                    "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"],
                }
            ],
        ),
    ]


def bootstrap_cluster_role_bindings() -> list[dict[str, Any]]:
    def binding(name: str, role: str, groups: list[str]) -> dict[str, Any]:
        return {
            "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(AUTOUPDATE)},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
        }

    return [
        binding("cluster-admin", "cluster-admin", [SUPERUSER_GROUP]),
        binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        binding("system:discovery", "system:discovery", ["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            ["system:authenticated", "system:unauthenticated"],
        ),
    ]
