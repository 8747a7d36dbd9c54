"""List-then-watch caches of one kind, for controllers that decide over cluster-wide state.

An :class:`Informer` lists every object of a kind, reports them, then watches from the list's
resourceVersion; on 410 Gone or a broken stream it lists again and reports only the differences.
``synced`` is set once the first list has been reported, so a controller can wait until its view
is complete before deciding anything (the admission decision must never act on a partial view).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from codeflare.kube import errors
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]
Handler = Callable[[str, Obj, Obj | None], None]  # (ADDED|MODIFIED|DELETED, object, previous)


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class Informer:
    """Keeps ``cache`` equal to the server's objects of ``kind`` and calls ``handler`` on changes."""

    def __init__(self, kube: AsyncKube, kind: Kind, handler: Handler, *, retry_seconds: float = 1.0) -> None:
        self.kube = kube
        self.kind = kind
        self.handler = handler
        self.cache: dict[Key, Obj] = {}
        self.synced = asyncio.Event()
        self._retry = retry_seconds
        self.resource_version = ""

    def _apply(self, event_type: str, obj: Obj) -> None:
        key = key_of(obj)
        previous = self.cache.get(key)
        if event_type == "DELETED":
            if previous is None:
                return
            del self.cache[key]
            self.handler("DELETED", obj, previous)
            return
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if previous is not None and (previous.get("metadata") or {}).get("resourceVersion") == rv:
            return
        self.cache[key] = obj
        self.handler("MODIFIED" if previous is not None else "ADDED", obj, previous)

    async def _relist(self) -> None:
        items, rv = await self.kube.list_with_version(self.kind)
        seen = set()
        for obj in items:
            seen.add(key_of(obj))
            self._apply("ADDED", obj)
        for key in [k for k in self.cache if k not in seen]:
            self._apply("DELETED", self.cache[key])
        self.resource_version = rv
        self.synced.set()

    async def run(self) -> None:
        """Run until cancelled."""
        while True:
            try:
                await self._relist()
                async for event_type, obj in self.kube.watch(
                    self.kind, resource_version=self.resource_version
                ):
                    if event_type == "BOOKMARK":
                        continue
                    self._apply(event_type, obj)
                    self.resource_version = (obj.get("metadata") or {}).get(
                        "resourceVersion", self.resource_version
                    )
            except asyncio.CancelledError:
                raise
            except errors.Gone:
                log.info("%s watch expired; listing again", self.kind.kind)
                continue
            except errors.KubeError as exc:
                log.warning("%s informer: %s; retrying", self.kind.kind, exc)
            except Exception:
                log.exception("%s informer failed; retrying", self.kind.kind)
            await asyncio.sleep(self._retry)
