"""The CodeFlare SDK: describe, queue, run and inspect Ray clusters and jobs.

Names follow codeflare-sdk where they exist. Importing this package is cheap: Ray, rich and the
Kubernetes client are loaded only when a call needs them.
"""

from __future__ import annotations

from codeflare.errors import CodeFlareError, MissingDependency, WaitTimeout
from codeflare.sdk.admin import (
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
    create_priority_class,
    create_resource_flavor,
)
from codeflare.sdk.auth import (
    InClusterAuthentication,
    KubeConfigFileAuthentication,
    LocalAuthentication,
    TokenAuthentication,
)
from codeflare.sdk.client import Client
from codeflare.sdk.cluster import Cluster, get_cluster, list_all_clusters, list_all_queued, list_local_queues
from codeflare.sdk.cohorts import build_cohort, create_cohort
from codeflare.sdk.config import ClusterConfiguration, ConfigurationError, WorkerGroup
from codeflare.sdk.job import RayJob, RayJobStatus
from codeflare.sdk.status import CodeFlareClusterStatus, RayClusterInfo, RayClusterStatus

__all__ = [
    "Client",
    "Cluster",
    "ClusterConfiguration",
    "CodeFlareClusterStatus",
    "CodeFlareError",
    "ConfigurationError",
    "FlavorQuota",
    "InClusterAuthentication",
    "KubeConfigFileAuthentication",
    "LocalAuthentication",
    "MissingDependency",
    "RayClusterInfo",
    "RayClusterStatus",
    "RayJob",
    "RayJobStatus",
    "TokenAuthentication",
    "WaitTimeout",
    "WorkerGroup",
    "build_cohort",
    "create_cluster_queue",
    "create_cohort",
    "create_local_queue",
    "create_priority_class",
    "create_resource_flavor",
    "get_cluster",
    "list_all_clusters",
    "list_all_queued",
    "list_local_queues",
]
