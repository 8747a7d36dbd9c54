"""Kubernetes Events for the objects the operator acts on (what ``kubectl describe`` shows).

Recording never fails a reconcile: an Event that cannot be written is logged and dropped.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from codeflare.k8s.constants import OPERATOR_NAME
from codeflare.k8s.timestamps import now_rfc3339
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube

log = logging.getLogger(__name__)

COMPONENT = OPERATOR_NAME


class EventRecorder:
    """Writes core/v1 Events about objects."""

    def __init__(self, kube: AsyncKube, component: str = COMPONENT) -> None:
        self.kube = kube
        self.component = component

    async def record(self, obj: dict[str, Any], reason: str, message: str, *, type_: str = "Normal") -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        now = now_rfc3339()
        event = {
            "metadata": {
                "name": f"{meta.get('name', 'object')}.{uuid.uuid4().hex[:12]}",
                "namespace": namespace,
            },
            "involvedObject": {
                "apiVersion": obj.get("apiVersion", ""),
                "kind": obj.get("kind", ""),
                "name": meta.get("name", ""),
                "namespace": meta.get("namespace", ""),
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": reason,
            "message": message[:1024],
            "type": type_,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            await self.kube.create(kinds.EVENT, event, namespace)
        except errors.KubeError as exc:
            log.debug("event %s on %s/%s dropped: %s", reason, namespace, meta.get("name"), exc)
