"""List-then-watch caches of one kind, for controllers that decide over cluster-wide state.

An :class:`Informer` lists every object of a kind, reports them, then watches from the list's
resourceVersion; on 410 Gone or a broken stream it lists again and reports only the differences.
``synced`` is set once the first list has been reported, so a controller can wait until its view
is complete before deciding anything (the admission decision must never act on a partial view).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping

from codeflare.k8s.types import Obj
from codeflare.kube import errors
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind

log = logging.getLogger(__name__)

Key = tuple[str, str]
Handler = Callable[[str, Obj, Obj | None], None]  # (ADDED|MODIFIED|DELETED, object, previous)


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def is_older(obj: Obj, than: Obj) -> bool:
    """Whether ``obj`` is an older version than ``than`` (integer resourceVersions, as ours and
    Kubernetes' are in practice; an opaque one counts as not older, trusting the watch)."""
    try:
        return int(obj["metadata"]["resourceVersion"]) < int(than["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return False


class Informer:
    """Keeps ``cache`` equal to the server's objects of ``kind`` and calls its handlers on changes.

    ``namespaced`` holds the same objects grouped by namespace, for per-namespace selections.
    """

    def __init__(
        self, kube: AsyncKube, kind: Kind, handler: Handler | None = None, *, retry_seconds: float = 1.0
    ) -> None:
        self.kube = kube
        self.kind = kind
        self.handlers: list[Handler] = [handler] if handler is not None else []
        self.cache: dict[Key, Obj] = {}
        self.namespaced: dict[str, dict[Key, Obj]] = {}
        self.synced = asyncio.Event()
        self._retry = retry_seconds
        self.resource_version = ""

    def add_handler(self, handler: Handler) -> None:
        """Also call ``handler``; objects already cached are reported to it as ADDED first."""
        self.handlers.append(handler)
        for obj in list(self.cache.values()):
            handler("ADDED", obj, None)

    def select(self, namespace: str, labels: dict[str, str]) -> list[Obj]:
        """Cached objects in ``namespace`` carrying every label of ``labels``."""
        out = []
        for obj in (self.namespaced.get(namespace) or {}).values():
            have = (obj.get("metadata") or {}).get("labels") or {}
            if all(have.get(k) == v for k, v in labels.items()):
                out.append(obj)
        return out

    def _notify(self, event_type: str, obj: Obj, previous: Obj | None) -> None:
        for handler in self.handlers:
            handler(event_type, obj, previous)

    def _apply(self, event_type: str, obj: Obj) -> None:
        key = key_of(obj)
        previous = self.cache.get(key)
        if event_type == "DELETED":
            if previous is None:
                return
            del self.cache[key]
            in_namespace = self.namespaced.get(key[0])
            if in_namespace is not None:
                in_namespace.pop(key, None)
                if not in_namespace:
                    del self.namespaced[key[0]]
            self._notify("DELETED", obj, previous)
            return
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if previous is not None and (previous.get("metadata") or {}).get("resourceVersion") == rv:
            return
        self.cache[key] = obj
        self.namespaced.setdefault(key[0], {})[key] = obj
        self._notify("MODIFIED" if previous is not None else "ADDED", obj, previous)

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


class SharedInformers:
    """One informer per kind for every controller of a process (one watch per kind, not per user).

    Controllers :meth:`subscribe` while they are set up; :meth:`run` runs every informer asked
    for, also ones asked for after it started.
    """

    def __init__(self, kube: AsyncKube) -> None:
        self.kube = kube
        self.informers: dict[Kind, Informer] = {}
        self._added = asyncio.Event()

    def get(self, kind: Kind) -> Informer:
        informer = self.informers.get(kind)
        if informer is None:
            informer = self.informers[kind] = Informer(self.kube, kind)
            self._added.set()
        return informer

    def subscribe(self, kind: Kind, handler: Handler) -> Informer:
        informer = self.get(kind)
        informer.add_handler(handler)
        return informer

    async def run(self) -> None:
        """Run every informer until cancelled."""
        tasks: dict[Kind, asyncio.Task[None]] = {}
        try:
            while True:
                self._added.clear()
                for kind, informer in list(self.informers.items()):
                    if kind not in tasks:
                        tasks[kind] = asyncio.create_task(informer.run(), name=f"informer-{kind.plural}")
                await self._added.wait()
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)


class OwnWrites:
    """A controller's own writes, laid over its informer caches until the watch reports them.

    Without it, the pass right after a write may read the older copy from the cache and act on it
    again. An entry goes once the cache holds that version or a newer one, once the object is
    reported deleted (:meth:`seen`, from the informer handler), or after ``ttl`` seconds (an object
    created and deleted while the watch was relisting is never reported).
    """

    def __init__(self, ttl: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[tuple[Kind, Key], tuple[float, Obj]] = {}

    def remember(self, kind: Kind, obj: Obj | None) -> None:
        if obj is not None:
            self._entries[(kind, key_of(obj))] = (self._clock(), obj)

    def seen(self, kind: Kind, event: str, obj: Obj) -> None:
        """The informer reported ``obj``: forget our write of it once that has caught up."""
        key = (kind, key_of(obj))
        entry = self._entries.get(key)
        if entry is not None and (event == "DELETED" or not is_older(obj, entry[1])):
            del self._entries[key]

    def get(self, kind: Kind, key: Key, cached: Obj | None) -> Obj | None:
        """Our write of ``key`` where it is newer than ``cached`` (the informer's copy), else ``cached``."""
        entry = self._entries.get((kind, key))
        if entry is None:
            return cached
        if self._clock() - entry[0] >= self._ttl or (cached is not None and not is_older(cached, entry[1])):
            del self._entries[(kind, key)]
            return cached
        return entry[1]

    def overlay(self, kind: Kind, cache: Mapping[Key, Obj]) -> dict[Key, Obj]:
        """A copy of ``cache`` with our newer writes of ``kind`` laid over it."""
        out = dict(cache)
        for written_kind, key in [k for k in self._entries if k[0] == kind]:
            obj = self.get(written_kind, key, out.get(key))
            if obj is not None:
                out[key] = obj
        return out
