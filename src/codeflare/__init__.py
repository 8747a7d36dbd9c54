"""CodeFlare in Python: run distributed ML workloads on shared Kubernetes capacity.

The top-level package stays cheap to import: it names the public SDK entry points and loads
them lazily on first attribute access, so ``import codeflare`` pulls in neither Ray nor the
Kubernetes client stack.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    name: "codeflare.sdk"
    for name in (
        "Client",
        "Cluster",
        "ClusterConfiguration",
        "CodeFlareClusterStatus",
        "RayJob",
        "TokenAuthentication",
        "KubeConfigFileAuthentication",
        "LocalAuthentication",
        "get_cluster",
        "list_all_clusters",
        "list_all_queued",
        "list_local_queues",
        "WorkerGroup",
    )
}
_LAZY["CodeFlareError"] = "codeflare.errors"

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codeflare' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
