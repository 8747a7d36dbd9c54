"""Kubernetes Events for the objects the operator acts on (what ``kubectl describe`` shows).

Recording never fails nor delays a reconcile: :meth:`EventRecorder.record` queues the Event and
returns; a few background senders create them, and under pressure (a full backlog) new Events
are dropped first, as client-go's event broadcaster drops what its full channel cannot take. An
Event that cannot be written is logged and dropped. There is no aggregation of repeats.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from typing import Any

from codeflare.k8s.constants import OPERATOR_NAME
from codeflare.k8s.timestamps import now_rfc3339
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube

log = logging.getLogger(__name__)

COMPONENT = OPERATOR_NAME
SENDERS = 8  # Event creates in flight at once
BACKLOG = 512  # Events waiting to be sent; beyond it new ones are dropped


class EventRecorder:
    """Writes core/v1 Events about objects, off the caller's path."""

    def __init__(
        self, kube: AsyncKube, component: str = COMPONENT, senders: int = SENDERS, backlog: int = BACKLOG
    ) -> None:
        self.kube = kube
        self.component = component
        self._senders_max = senders
        self._backlog_max = backlog
        self._backlog: deque[dict[str, Any]] = deque()
        self._senders: set[asyncio.Task[None]] = set()

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
        self._post(event)

    def _post(self, event: dict[str, Any]) -> None:
        if len(self._backlog) >= self._backlog_max:
            name = event["involvedObject"]["name"]
            log.debug("event %s on %s dropped: backlog full", event["reason"], name)
            return
        self._backlog.append(event)
        if len(self._senders) < self._senders_max:
            task = asyncio.get_running_loop().create_task(self._send())
            self._senders.add(task)
            task.add_done_callback(self._senders.discard)

    async def _send(self) -> None:
        while self._backlog:
            event = self._backlog.popleft()
            namespace = event["metadata"]["namespace"]
            try:
                await self.kube.create(kinds.EVENT, event, namespace)
            except errors.KubeError as exc:
                name = event["involvedObject"]["name"]
                log.debug("event %s on %s/%s dropped: %s", event["reason"], namespace, name, exc)
