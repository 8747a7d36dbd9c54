"""Watch responses: a chunked stream of JSON events, with bookmarks, timeouts and 410 Gone.

A watch opens a :class:`~codeflare.apiserver.registry.watch.WatchHub` subscription at the
requested resourceVersion (or lists first with ``sendInitialEvents``, ending the initial events
with an annotated BOOKMARK when bookmarks are allowed), then writes each matching change as
``{"type", "object"}`` lines - objects, or one-row Tables when asked - until ``timeoutSeconds``
(30 minutes by default) or the client goes away. Bookmarks, when allowed, go out every
``bookmark_interval`` seconds. As kube-apiserver's watch cache does, a resourceVersion too old
to resume from is answered in-stream with a 410 ERROR event, and a watch-list
(``sendInitialEvents``) at a version the store does not reach within 3 seconds with a 504
"Too large resource version" ERROR event; a plain watch from a version not reached yet waits
for the changes after it. An event that cannot be shown (its CRD conversion failed) ends the
stream with that error as an ERROR event. Which changes match is the hub's business.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

from codeflare.apiserver import errors
from codeflare.apiserver.endpoints import tables
from codeflare.apiserver.endpoints.list_options import ListOptions
from codeflare.apiserver.endpoints.request import JSON
from codeflare.apiserver.registry.listing import parse_resource_version
from codeflare.apiserver.registry.objects import ObjectAPI
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.registry.watch import Watcher, WatchFilter, WatchHub
from codeflare.apiserver.storage.codec import dumps_bytes

DEFAULT_WATCH_TIMEOUT = 1800.0


class _Encoder:
    """Renders one watch's events: objects as served, or Tables (column headers only once)."""

    def __init__(self, api: ObjectAPI, rt: ResourceType, as_table: bool, include: str) -> None:
        self.api, self.rt, self.as_table, self.include = api, rt, as_table, include
        self.first = True

    def event(self, event_type: str, obj: dict[str, Any]) -> bytes:
        shown = self.api.present(self.rt, obj)
        if self.as_table and event_type in ("ADDED", "MODIFIED", "DELETED"):
            rv = shown["metadata"].get("resourceVersion", "")
            shown = tables.table(self.rt, [shown], rv, self.include, with_columns=self.first)
            self.first = False
        return dumps_bytes({"type": event_type, "object": shown}) + b"\n"

    def bookmark(self, extra: dict[str, Any] | None = None) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(self.api.store.resource_version)}
        if extra:
            meta["annotations"] = extra
        obj = {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        return dumps_bytes({"type": "BOOKMARK", "object": obj}) + b"\n"


async def _start(
    hub: WatchHub, flt: WatchFilter, opts: ListOptions
) -> tuple[Watcher, list[tuple[str, dict[str, Any]]]]:
    """Open the watch ``opts`` ask for; 400 for a malformed version, 410/504 as ERROR events."""
    since = parse_resource_version(opts.resource_version)
    current = hub.store_version
    if opts.send_initial_events:
        await hub.ensure_version(since)
        return hub.open(flt, None)
    if opts.send_initial_events is False:
        return hub.open(flt, since or current)
    return hub.open(flt, since or None)


async def _error_event(request: web.Request, err: errors.ApiError) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": JSON})
    await resp.prepare(request)
    await resp.write(dumps_bytes({"type": "ERROR", "object": err.status()}) + b"\n")
    return resp


async def serve_watch(
    request: web.Request,
    api: ObjectAPI,
    hub: WatchHub,
    rt: ResourceType,
    namespace: str | None,
    name: str,
    selectors: tuple[LabelSelector | None, FieldSelector | None],
    opts: ListOptions,
    bookmark_interval: float,
) -> web.StreamResponse:
    """Stream the changes of ``rt`` (in ``namespace``, of ``name`` when given) to the client."""
    labels, fields = selectors
    encoder = _Encoder(
        api,
        rt,
        tables.wants_table(request.headers.get("Accept", "")),
        request.query.get("includeObject", "Metadata"),
    )
    flt = WatchFilter(rt.key, namespace, labels, fields, name or None)
    try:
        watcher, initial = await _start(hub, flt, opts)
    except errors.ApiError as err:
        if err.code not in (410, 504):
            raise
        return await _error_event(request, err)
    resp = web.StreamResponse(status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache"})
    resp.enable_chunked_encoding()
    try:
        await resp.prepare(request)
        for event_type, obj in initial:
            await resp.write(encoder.event(event_type, obj))
        del initial
        if opts.send_initial_events and opts.allow_watch_bookmarks:
            await resp.write(encoder.bookmark({"k8s.io/initial-events-end": "true"}))
        limit = opts.timeout_seconds if opts.timeout_seconds is not None else DEFAULT_WATCH_TIMEOUT
        await _follow(
            resp, watcher, encoder, limit, bookmark_interval if opts.allow_watch_bookmarks else None
        )
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await resp.write_eof()
    except errors.ApiError as err:  # an event that could not be shown (its conversion failed)
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await resp.write(dumps_bytes({"type": "ERROR", "object": err.status()}) + b"\n")
            await resp.write_eof()
    except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
        pass
    finally:
        hub.close(watcher)
    return resp


async def _follow(
    resp: web.StreamResponse, watcher: Watcher, encoder: _Encoder, limit: float, bookmark_every: float | None
) -> None:
    """Write the watcher's changes until ``limit`` seconds pass or the hub ends the watch."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    next_bookmark = loop.time() + (bookmark_every or 0.0)
    while True:
        now = loop.time()
        if now >= deadline:
            return
        wait = deadline - now
        if bookmark_every is not None:
            wait = min(wait, max(0.0, next_bookmark - now))
        try:
            change = await asyncio.wait_for(watcher.queue.queue.get(), timeout=wait)
        except TimeoutError:
            if bookmark_every is not None and loop.time() >= next_bookmark:
                await resp.write(encoder.bookmark())
                next_bookmark = loop.time() + bookmark_every
            continue
        if change is None:
            return
        event = watcher.translate(change)
        if event is not None:
            await resp.write(encoder.event(*event))
