"""Every manifest builder of ``codeflare.api`` in one place, plus the SDK's "what do I create" choice.

The builders live in one module per kind (:mod:`~codeflare.api.raycluster`,
:mod:`~codeflare.api.rayjob`, :mod:`~codeflare.api.appwrapper`, :mod:`~codeflare.api.kueue`);
this module re-exports them and adds :func:`build_cluster_manifest`, which honours the
configuration's ``appwrapper`` switch. Every builder is pure and validates its output against our
CRDs; none of them talks to a server.
"""

from __future__ import annotations

from typing import Any

from codeflare.api.appwrapper import build_appwrapper
from codeflare.api.kueue import (
    FlavorQuota,
    build_cluster_queue,
    build_local_queue,
    build_resource_flavor,
    build_workload_priority_class,
)
from codeflare.api.raycluster import ClusterSettings, WorkerGroupSettings, build_raycluster
from codeflare.api.rayjob import build_rayjob
from codeflare.api.validation import ManifestError, validate_against_crd

__all__ = [
    "ClusterSettings",
    "FlavorQuota",
    "ManifestError",
    "WorkerGroupSettings",
    "build_appwrapper",
    "build_cluster_manifest",
    "build_cluster_queue",
    "build_local_queue",
    "build_raycluster",
    "build_rayjob",
    "build_resource_flavor",
    "build_workload_priority_class",
    "validate_against_crd",
]


def build_cluster_manifest(config: ClusterSettings, namespace: str) -> dict[str, Any]:
    """The one object to create for ``config``: its RayCluster, or an AppWrapper around it."""
    raycluster = build_raycluster(config, namespace)
    if not config.appwrapper:
        return raycluster
    return build_appwrapper(raycluster, local_queue=config.local_queue, priority=config.priority)
