"""The resource kinds this project reads or writes, named once.

A :class:`Kind` is a group/version/kind/plural plus scope; it knows its API paths and builds the
lightkube generic resource class it needs on demand (cached per Kind). No I/O.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    """One resource type of the Kubernetes API."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def lightkube(self) -> Any:
        """The lightkube generic resource class for this kind."""
        return _resource_class(self)

    def at_version(self, version: str) -> Kind:
        """The same resource at another version of its group (e.g. Kueue's v1beta1)."""
        return Kind(self.group, version, self.kind, self.plural, self.namespaced)

    def ref(self, name: str, namespace: str | None = None) -> str:
        """``kind/namespace/name`` for logs and messages."""
        return f"{self.kind}/{namespace}/{name}" if namespace else f"{self.kind}/{name}"


@functools.cache
def _resource_class(kind: Kind) -> Any:
    from lightkube import generic_resource

    factory = (
        generic_resource.create_namespaced_resource
        if kind.namespaced
        else generic_resource.create_global_resource
    )
    return factory(kind.group, kind.version, kind.kind, kind.plural)


NAMESPACE = Kind("", "v1", "Namespace", "namespaces", False)
POD = Kind("", "v1", "Pod", "pods")
NODE = Kind("", "v1", "Node", "nodes", False)
SERVICE = Kind("", "v1", "Service", "services")
CONFIGMAP = Kind("", "v1", "ConfigMap", "configmaps")
SECRET = Kind("", "v1", "Secret", "secrets")
EVENT = Kind("", "v1", "Event", "events")
SERVICE_ACCOUNT = Kind("", "v1", "ServiceAccount", "serviceaccounts")
LEASE = Kind("coordination.k8s.io", "v1", "Lease", "leases")
JOB = Kind("batch", "v1", "Job", "jobs")
DEPLOYMENT = Kind("apps", "v1", "Deployment", "deployments")
STATEFULSET = Kind("apps", "v1", "StatefulSet", "statefulsets")
INGRESS = Kind("networking.k8s.io", "v1", "Ingress", "ingresses")
NETWORK_POLICY = Kind("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies")
PRIORITY_CLASS = Kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False)
CRD = Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)

RAYCLUSTER = Kind("ray.io", "v1", "RayCluster", "rayclusters")
RAYJOB = Kind("ray.io", "v1", "RayJob", "rayjobs")
APPWRAPPER = Kind("workload.codeflare.dev", "v1beta2", "AppWrapper", "appwrappers")
# Kueue's kinds at v1beta2, the version Kueue stores since 0.16 (v1beta1 is deprecated; the SDK
# falls back to it on Kueue 0.13-0.15 with Kind.at_version, see codeflare.sdk.client).
WORKLOAD = Kind("kueue.x-k8s.io", "v1beta2", "Workload", "workloads")
CLUSTER_QUEUE = Kind("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues", False)
LOCAL_QUEUE = Kind("kueue.x-k8s.io", "v1beta2", "LocalQueue", "localqueues")
RESOURCE_FLAVOR = Kind("kueue.x-k8s.io", "v1beta2", "ResourceFlavor", "resourceflavors", False)
WORKLOAD_PRIORITY_CLASS = Kind(
    "kueue.x-k8s.io", "v1beta2", "WorkloadPriorityClass", "workloadpriorityclasses", False
)
KUEUE_KINDS = (WORKLOAD, CLUSTER_QUEUE, LOCAL_QUEUE, RESOURCE_FLAVOR, WORKLOAD_PRIORITY_CLASS)
# Kueue's hierarchical cohorts (0.17+): the same schema at v1beta1 and v1beta2, no conversion webhook
COHORT = Kind("kueue.x-k8s.io", "v1beta2", "Cohort", "cohorts", False)
MACHINE_SET = Kind("machine.openshift.io", "v1beta1", "MachineSet", "machinesets")
ROUTE = Kind("route.openshift.io", "v1", "Route", "routes")
MACHINE_DEPLOYMENT = Kind("cluster.x-k8s.io", "v1beta1", "MachineDeployment", "machinedeployments")
FEASIBILITY_CHECK = Kind("forecast.codeflare.dev", "v1alpha1", "FeasibilityCheck", "feasibilitychecks")
"""Served by the operator (codeflare.operator.forecast_api): a create-only review, never stored."""

BY_API_KIND: dict[tuple[str, str], Kind] = {
    (k.api_version, k.kind): k
    for k in (
        NAMESPACE,
        POD,
        NODE,
        SERVICE,
        CONFIGMAP,
        SECRET,
        EVENT,
        SERVICE_ACCOUNT,
        LEASE,
        JOB,
        DEPLOYMENT,
        STATEFULSET,
        INGRESS,
        NETWORK_POLICY,
        PRIORITY_CLASS,
        CRD,
        RAYCLUSTER,
        RAYJOB,
        APPWRAPPER,
        WORKLOAD,
        CLUSTER_QUEUE,
        LOCAL_QUEUE,
        RESOURCE_FLAVOR,
        WORKLOAD_PRIORITY_CLASS,
        COHORT,
        MACHINE_SET,
        MACHINE_DEPLOYMENT,
    )
}


def kind_of(obj: dict[str, Any]) -> Kind | None:
    """The known Kind of a manifest, by apiVersion and kind."""
    return BY_API_KIND.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))))
