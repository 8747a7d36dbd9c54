"""Watch fan-out: turns committed changes into the events each watcher should see.

A watcher names a resource, optionally a namespace and label/field selectors, and where to start
(nothing: current state as synthetic ADDED events, then live; a resourceVersion: every change
after it - one the store has not reached yet included, as kube-apiserver's watch cache accepts
it -, or 410 Gone when it is older than the retained history). Objects moving into or out of a
watcher's selector are reported as ADDED or DELETED, as Kubernetes does. Readers that need the
store to reach a version first wait on :meth:`WatchHub.wait_for_version`. No HTTP here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.registry.listing import FRESHNESS_WAIT_SECONDS, TOO_LARGE_RETRY_SECONDS
from codeflare.apiserver.registry.resources import CRD_KEY, crd_storage_key
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.storage.store import ADDED, DELETED, MODIFIED, Change, ObjectStore, WatchQueue


@dataclass
class WatchFilter:
    """Which objects a watcher sees."""

    key: str
    namespace: str | None = None
    labels: LabelSelector | None = None
    fields: FieldSelector | None = None
    name: str | None = None

    def matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace", "") != self.namespace:
            return False
        if self.name is not None and meta.get("name") != self.name:
            return False
        if self.labels is not None and not self.labels.matches(meta.get("labels") or {}):
            return False
        return self.fields is None or self.fields.matches(obj)


@dataclass(eq=False)  # identity equality and hash: watchers live in sets
class Watcher:
    """One open watch: its filter and its queue of pending events."""

    filter: WatchFilter
    queue: WatchQueue = field(default_factory=WatchQueue)
    closed: bool = False
    after: int = 0  # changes up to this version are not this watch's (it started from a later one)

    def offer(self, change: Change) -> None:
        if change.key == self.filter.key and not self.closed and change.rv > self.after:
            self.queue.push(change)

    def translate(self, change: Change) -> tuple[str, dict[str, Any]] | None:
        """The (type, object) this watcher sees for ``change``, or None."""
        now_in = self.filter.matches(change.obj) if change.type != DELETED else False
        was_in = self.filter.matches(change.old) if change.old is not None else False
        if change.type == DELETED:
            return (DELETED, change.obj) if self.filter.matches(change.obj) else None
        if change.type == ADDED:
            return (ADDED, change.obj) if now_in else None
        if now_in and was_in:
            return (MODIFIED, change.obj)
        if now_in:
            return (ADDED, change.obj)
        if was_in:
            return (DELETED, change.obj)
        return None


class WatchHub:
    """Registers watchers and feeds them every committed change of their resource."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._watchers: dict[str, set[Watcher]] = {}
        self._version_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._unsubscribe: Callable[[], None] = store.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        for watcher in list(self._watchers.get(change.key, ())):
            watcher.offer(change)
        if self._version_waiters:
            waiting = []
            for rv, future in self._version_waiters:
                if change.rv >= rv:
                    if not future.done():
                        future.set_result(None)
                else:
                    waiting.append((rv, future))
            self._version_waiters = waiting
        if change.key == CRD_KEY and change.type == DELETED:
            # The CRD is gone (after its objects): watches of its resource end, as they do when
            # kube-apiserver stops serving a deleted CRD's resource.
            self.close_key(crd_storage_key(change.obj))

    @property
    def store_version(self) -> int:
        """The store's current resourceVersion."""
        return self._store.resource_version

    @property
    def count(self) -> int:
        return sum(len(v) for v in self._watchers.values())

    async def wait_for_version(self, rv: int, timeout: float) -> bool:
        """Whether the store reaches version ``rv`` within ``timeout`` seconds."""
        if self._store.resource_version >= rv:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (rv, future)
        self._version_waiters.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return self._store.resource_version >= rv
        finally:
            with contextlib.suppress(ValueError):
                self._version_waiters.remove(entry)
        return True

    async def ensure_version(self, minimum: int) -> None:
        """Wait (up to 3 s, as kube-apiserver's watch cache) for the store to reach ``minimum``;
        504 "Too large resource version" when it does not."""
        if not await self.wait_for_version(minimum, FRESHNESS_WAIT_SECONDS):
            raise errors.too_large_resource_version(minimum, self.store_version, TOO_LARGE_RETRY_SECONDS)

    def open(
        self, flt: WatchFilter, since: int | None, *, initial_state: bool = False
    ) -> tuple[Watcher, list[tuple[str, dict[str, Any]]]]:
        """Start a watch; returns the watcher and the events to send before live ones.

        ``since`` None (or ``initial_state``): the current state as ADDED events first; else
        every change after version ``since`` (410 when older than the retained history; a
        version not reached yet waits for the changes after it). Registration and the initial
        snapshot happen without yielding to the event loop, so no change can fall between them.
        """
        watcher = Watcher(flt)
        initial: list[tuple[str, dict[str, Any]]] = []
        if since is None or initial_state:
            for obj in self._store.iter(flt.key, flt.namespace):
                if flt.matches(obj):
                    initial.append((ADDED, obj))
        else:
            if since < self._store.oldest_resumable:
                raise errors.gone(f"too old resource version: {since} ({self._store.oldest_resumable + 1})")
            watcher.after = since
            for change in self._store.changes_since(since):
                if change.key != flt.key:
                    continue
                event = watcher.translate(change)
                if event is not None:
                    initial.append(event)
        self._watchers.setdefault(flt.key, set()).add(watcher)
        return watcher, initial

    def close(self, watcher: Watcher) -> None:
        watcher.closed = True
        key = watcher.filter.key
        bucket = self._watchers.get(key)
        if bucket is not None:
            bucket.discard(watcher)
            if not bucket:
                del self._watchers[key]

    def close_key(self, key: str) -> None:
        """End every watch on ``key`` (its CRD was deleted)."""
        for watcher in list(self._watchers.get(key, ())):
            watcher.closed = True
            watcher.queue.queue.put_nowait(None)
        self._watchers.pop(key, None)
