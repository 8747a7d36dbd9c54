"""The agent's writes to a RayCluster: status, its own annotations, its finalizer.

Each write is skipped when it would not change what this agent last wrote (status is compared
without its timestamps), so a cluster reconciled every quarter second costs API writes only when
something changed. A cluster deleted meanwhile (404) is not an error. Status is written as a
merge patch in which a missing ``state`` clears it. Nothing here decides what to write.
"""

from __future__ import annotations

import contextlib
import json

from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION, LOCAL_FINALIZER, LOCAL_PROCESSES_ANNOTATION
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.local.agent.cluster_runner import LocalRayCluster


class RayClusterWrites:
    """Writes status, annotations and the finalizer of RayClusters, without repeating itself."""

    def __init__(self, kube: AsyncKube) -> None:
        self.kube = kube
        self._written: dict[tuple[str, str, str], object] = {}

    async def status(self, rc: Obj, status: Obj) -> None:
        meta = rc["metadata"]
        key = ("status", meta.get("namespace", ""), meta["name"])
        comparable = {k: v for k, v in status.items() if k != "lastUpdateTime"}
        comparable["conditions"] = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions", [])
        ]
        if self._written.get(key) == comparable:
            return
        body = {"status": {**status, **({"state": None} if "state" not in status else {})}}
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(kinds.RAYCLUSTER, meta["name"], body, meta.get("namespace"), status=True)
            self._written[key] = comparable

    async def annotations(self, rc: Obj, runtime: LocalRayCluster) -> None:
        """Record the processes' state (for re-adoption) and the dashboard URL on the object."""
        meta = rc["metadata"]
        annotations = {
            LOCAL_PROCESSES_ANNOTATION: json.dumps(runtime.to_state(), sort_keys=True),
            DASHBOARD_URL_ANNOTATION: runtime.dashboard_url,
        }
        key = ("annotations", meta.get("namespace", ""), meta["name"])
        if self._written.get(key) == annotations:
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"annotations": annotations}},
                meta.get("namespace"),
            )
            self._written[key] = annotations

    async def clear_annotations(self, rc: Obj) -> None:
        meta = rc["metadata"]
        present = set(meta.get("annotations") or {}) & {LOCAL_PROCESSES_ANNOTATION, DASHBOARD_URL_ANNOTATION}
        self._written.pop(("annotations", meta.get("namespace", ""), meta["name"]), None)
        if not present:
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"annotations": dict.fromkeys(present)}},
                meta.get("namespace"),
            )

    async def add_finalizer(self, rc: Obj) -> None:
        meta = rc["metadata"]
        await self.kube.patch(
            kinds.RAYCLUSTER,
            meta["name"],
            {
                "metadata": {
                    "finalizers": [*(meta.get("finalizers") or []), LOCAL_FINALIZER],
                    "resourceVersion": meta.get("resourceVersion"),
                }
            },
            meta.get("namespace"),
        )

    async def drop_finalizer(self, rc: Obj) -> None:
        meta = rc["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != LOCAL_FINALIZER]
        if finalizers == list(meta.get("finalizers") or []):
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}},
                meta.get("namespace"),
            )
