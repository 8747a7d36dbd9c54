"""What ``local up`` puts into a fresh API server before the operator and agent start.

The CRDs, namespaces ``codeflare-system`` and ``default``, the operator's ServiceAccount and RBAC
(deploy/'s, :mod:`operator_identity`), the operator's configuration tuned for one machine (probe
on a free loopback port, no metrics port, no scale-out, no mTLS or OAuth proxy for host-process
Ray nodes), and one ResourceFlavor, a ClusterQueue sized to this machine and a default LocalQueue
in ``default``. Every step is idempotent: existing objects are left as they are.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Any

from codeflare.api.crds import load_crds
from codeflare.k8s.constants import DEFAULT_QUEUE_ANNOTATION
from codeflare.k8s.types import Obj
from codeflare.kube import config, errors, kinds
from codeflare.kube.client import Kube
from codeflare.local.agent.node_info import cpu_overcommit, detect_node_capacity
from codeflare.local.mode.operator_identity import install_rbac
from codeflare.operator.config import CONFIG_KEY, CONFIGMAP_NAME, OperatorConfig, config_map

OPERATOR_NAMESPACE = "codeflare-system"
FLAVOR = "default-flavor"
CLUSTER_QUEUE = "local-cluster-queue"
LOCAL_QUEUE = "local-queue"


def bootstrap(kubeconfig: Path) -> int:
    """Create what is missing; returns the port of the operator's health probe."""
    kube = Kube(config.from_kubeconfig(kubeconfig), field_manager="codeflare-local")
    try:
        _install_crds(kube)
        for ns in (OPERATOR_NAMESPACE, "default"):
            with contextlib.suppress(errors.AlreadyExists):
                kube.create(kinds.NAMESPACE, {"metadata": {"name": ns}})
        install_rbac(kube)  # the operator's ServiceAccount, ClusterRole, Role and bindings (deploy/'s)
        probe_port = _operator_config(kube)
        for kind, body in queue_objects():
            with contextlib.suppress(errors.AlreadyExists):
                kube.create(kind, body)
        return probe_port
    finally:
        kube.close()


def _install_crds(kube: Kube) -> None:
    for crd in load_crds():
        # Look first: the embedded server answers a duplicate CRD with 422 (plural already
        # served), not 409, so a second `up` would fail on create alone.
        existing = kube.find(kinds.CRD, crd["metadata"]["name"])
        if existing is not None:
            _upgrade_crd(kube, existing, crd)
            continue
        with contextlib.suppress(errors.AlreadyExists):
            kube.create(kinds.CRD, crd)


def _upgrade_crd(kube: Kube, existing: Obj, bundled: Obj) -> None:
    """A state dir of an older release: serve the bundled versions (the server then migrates the
    stored objects to the new storage version). A webhook clientConfig the operator patched in
    is kept, so a running operator's conversion keeps working."""
    def versions(crd: Obj) -> list[tuple[Any, Any]]:
        return [(v.get("name"), v.get("storage")) for v in crd["spec"].get("versions") or []]

    if versions(existing) == versions(bundled):
        return
    spec = dict(bundled["spec"])
    current = existing["spec"].get("conversion") or {}
    if current.get("strategy") == "Webhook" and spec.get("conversion"):
        spec["conversion"] = current
    kube.replace(kinds.CRD, {**existing, "spec": spec})


def _operator_config(kube: Kube) -> int:
    existing = kube.find(kinds.CONFIGMAP, CONFIGMAP_NAME, OPERATOR_NAMESPACE)
    if existing is not None:
        cfg = OperatorConfig.from_yaml(str((existing.get("data") or {}).get(CONFIG_KEY, "")))
        listen = cfg.health.listen
        return listen[1] if listen else 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        probe_port = int(sock.getsockname()[1])
    doc = OperatorConfig.default().to_dict()
    doc["health"]["bindAddress"] = f"127.0.0.1:{probe_port}"
    doc["metrics"]["bindAddress"] = "0"
    doc["queueing"]["backoffTime"] = "2s"
    doc["instascale"]["enabled"] = False
    # Ray nodes are host processes here: no init containers to mint certificates, no OpenShift
    # OAuth proxy; the dashboard is served on 127.0.0.1 only.
    doc["kuberay"]["mTLSEnabled"] = False
    doc["kuberay"]["rayDashboardOAuthEnabled"] = False
    kube.create(kinds.CONFIGMAP, config_map(OPERATOR_NAMESPACE, OperatorConfig.from_dict(doc)))
    return probe_port


def queue_objects() -> list[tuple[Any, Obj]]:
    """The ResourceFlavor, a ClusterQueue holding this machine's capacity, the default LocalQueue."""
    capacity = detect_node_capacity()
    resources = [
        {"name": "cpu", "nominalQuota": str(capacity.cpus * cpu_overcommit())},
        {"name": "memory", "nominalQuota": str(capacity.memory_bytes)},
    ]
    covered = ["cpu", "memory"]
    if capacity.gpus:
        resources.append({"name": "nvidia.com/gpu", "nominalQuota": str(len(capacity.gpus))})
        covered.append("nvidia.com/gpu")
    cluster_queue = {
        "metadata": {"name": CLUSTER_QUEUE},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": covered, "flavors": [{"name": FLAVOR, "resources": resources}]}
            ],
        },
    }
    local_queue = {
        "metadata": {
            "name": LOCAL_QUEUE,
            "namespace": "default",
            "annotations": {DEFAULT_QUEUE_ANNOTATION: "true"},
        },
        "spec": {"clusterQueue": CLUSTER_QUEUE},
    }
    return [
        (kinds.RESOURCE_FLAVOR, {"metadata": {"name": FLAVOR}, "spec": {}}),
        (kinds.CLUSTER_QUEUE, cluster_queue),
        (kinds.LOCAL_QUEUE, local_queue),
    ]
