"""The dashboard's HTTP server (aiohttp): pages, the live event streams, actions, job logs.

Each page is rendered whole once, then kept current by a server-sent-event stream
(``/events/<view>``): the stream waits for the store's next version, renders the view again and
sends it only when it changed (so 1,000 idle workloads cost nothing), plus the banner. Actions
are POSTs checked by :mod:`.security` and carried out with the user's credentials
(:mod:`.actions`); their answer, a 403 included, is shown as the server gave it. :func:`serve`
runs it all until cancelled. No view logic here (see :mod:`.work`, :mod:`.queues`, :mod:`.nodes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from codeflare.dashboard import pages, queue_pages
from codeflare.dashboard.actions import UnknownAction, perform
from codeflare.dashboard.logs import job_output
from codeflare.dashboard.nodes import nodes_view
from codeflare.dashboard.queues import queues_view
from codeflare.dashboard.security import HEADERS, Guard
from codeflare.dashboard.snapshot import Snapshot
from codeflare.dashboard.store import Store
from codeflare.dashboard.work import WorkRow, find_row, work_rows
from codeflare.kube.client import AsyncKube

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
HEARTBEAT_S = 15.0
ENDED = ("Succeeded", "Failed", "Stopped")
COALESCE_S = 0.05  # a burst of watch events becomes one render
STORE: web.AppKey[Store] = web.AppKey("store", Store)
KUBE: web.AppKey[AsyncKube] = web.AppKey("kube", AsyncKube)
GUARD: web.AppKey[Guard] = web.AppKey("guard", Guard)
RENDERED: web.AppKey[Rendered] = web.AppKey("rendered")


def _in_namespace(snapshot: Snapshot, namespace: str) -> Snapshot:
    if not namespace:
        return snapshot
    objects = {
        kind: [o for o in objs if (o.get("metadata") or {}).get("namespace") in (namespace, None, "")]
        for kind, objs in snapshot.objects.items()
    }
    return Snapshot(objects, snapshot.forbidden, snapshot.now)


def _work(store: Store, namespace: str) -> str:
    snap = _in_namespace(store.snapshot(), namespace)
    refused = [k for k, nss in snap.forbidden.items() if k in ("RayCluster", "RayJob", "AppWrapper") and nss]
    notes = [f"{k}s in {', '.join(sorted(n or 'the cluster' for n in store.forbidden[k]))}" for k in refused]
    return pages.work_view(work_rows(snap), snap.now, notes, store.permissions)


def _queues(store: Store, namespace: str) -> str:
    snap = _in_namespace(store.snapshot(), namespace)
    return queue_pages.queues_view(queues_view(snap), store.history, snap.now)


def _nodes(store: Store, namespace: str) -> str:
    return pages.nodes_view(nodes_view(store.snapshot()))


VIEWS: dict[str, tuple[str, Callable[[Store, str], str]]] = {
    "work": ("My work", _work),
    "queues": ("Queues", _queues),
    "nodes": ("Nodes", _nodes),
}


@dataclass
class Rendered:
    """Views rendered at one store version: every stream showing the same view shares one render."""

    version: int = -1
    html: dict[tuple[str, str], str] = field(default_factory=dict)

    def view(self, store: Store, view: str, namespace: str) -> str:
        if self.version != store.version:
            self.version, self.html = store.version, {}
        key = (view, namespace)
        if key not in self.html:
            self.html[key] = VIEWS[view][1](store, namespace)
        return self.html[key]


def _banner(store: Store) -> str:
    return pages.banner(store.health.problems)


async def _page(request: web.Request, *, view: str) -> web.Response:
    store, guard = request.app[STORE], request.app[GUARD]
    namespace = request.query.get("namespace", "")
    title, render = VIEWS[view]
    body = pages.layout(view, title, render(store, namespace), _banner(store), guard.csrf, namespace)
    return web.Response(text=body, content_type="text/html")


@dataclass
class EventStream:
    """One browser's server-sent-event stream."""

    response: web.StreamResponse

    @classmethod
    async def open(cls, request: web.Request) -> EventStream:
        response = web.StreamResponse(headers={**HEADERS, "Content-Type": "text/event-stream"})
        await response.prepare(request)
        return cls(response)

    async def send(self, event: str, data: str) -> None:
        lines = "".join(f"data: {line}\n" for line in data.split("\n"))
        await self.response.write(f"event: {event}\n{lines}\n".encode())

    async def ping(self) -> None:
        await self.response.write(b": ping\n\n")


async def _events(request: web.Request) -> web.StreamResponse:
    store = request.app[STORE]
    view = request.match_info["view"]
    if view not in VIEWS and view != "banner":
        raise web.HTTPNotFound(text=f"no view {view!r}; views are {', '.join(VIEWS)} and banner")
    namespace = request.query.get("namespace", "")
    stream = await EventStream.open(request)
    sent: dict[str, str] = {}
    version = -1
    with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
        while True:
            seen = await store.changed(version, HEARTBEAT_S)
            if seen == version:
                await stream.ping()
                continue
            await asyncio.sleep(COALESCE_S)
            version = store.version
            fresh = {"banner": _banner(store)}
            if view in VIEWS:
                fresh["view"] = request.app[RENDERED].view(store, view, namespace)
            for event, html in fresh.items():
                if sent.get(event) != html:
                    await stream.send(event, html)
                    sent[event] = html
    return stream.response


async def _action(request: web.Request) -> web.Response:
    info = request.match_info
    try:
        outcome = await perform(
            request.app[KUBE], info["action"], info["kind"], info["namespace"], info["name"]
        )
    except UnknownAction as exc:
        return web.Response(status=400, text=pages.outcome(False, 400, str(exc)), content_type="text/html")
    log.info(
        "dashboard action %s %s/%s/%s: %s",
        info["action"],
        info["kind"],
        info["namespace"],
        info["name"],
        outcome.code,
    )
    # 200 even for a refusal: htmx swaps only successful answers; data-code carries the server's
    return web.Response(
        text=pages.outcome(outcome.ok, outcome.code, outcome.message), content_type="text/html"
    )


async def _log_page(request: web.Request) -> web.Response:
    ns, name = request.match_info["namespace"], request.match_info["name"]
    return web.Response(text=pages.log_page(ns, name, request.app[GUARD].csrf), content_type="text/html")


async def _log_stream(request: web.Request) -> web.StreamResponse:
    store, kube = request.app[STORE], request.app[KUBE]
    ns, name = request.match_info["namespace"], request.match_info["name"]
    stream = await EventStream.open(request)
    with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
        row = await _job_to_follow(store, ns, name)
        if row is None:
            await stream.send("end", pages.e(f"RayJob {ns}/{name} not found (or not readable by you)"))
        else:
            async for chunk in job_output(kube, ns, name, row.dashboard, row.job_id, row.cluster):
                await stream.send("output", pages.e(chunk))
            await stream.send("end", "[end of output]")
        while True:  # keep the stream open: a closed one would make the browser reconnect and resend
            await asyncio.sleep(HEARTBEAT_S)
            await stream.ping()
    return stream.response


async def _job_to_follow(store: Store, namespace: str, name: str) -> WorkRow | None:
    """The RayJob's row once its output can be read (running with a job id, or ended); None when
    the user cannot see such a job."""
    version = -1
    while True:
        row = find_row(work_rows(store.snapshot()), "RayJob", namespace, name)
        if row is None and store.synced.is_set():
            return None
        if row is not None and ((row.job_id and row.dashboard) or row.state in ENDED):
            return row
        version = await store.changed(version, HEARTBEAT_S)


async def _healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok\n")


def create_app(store: Store, kube: AsyncKube, guard: Guard) -> web.Application:
    app = web.Application(middlewares=[guard.middleware])
    app[STORE], app[KUBE], app[GUARD], app[RENDERED] = store, kube, guard, Rendered()
    for view, path in (("work", "/"), ("queues", "/queues"), ("nodes", "/nodes")):
        app.router.add_get(path, functools.partial(_page, view=view))
    app.router.add_get("/events/{view}", _events)
    app.router.add_post("/actions/{action}/{kind}/{namespace}/{name}", _action)
    app.router.add_get("/logs/{namespace}/{name}", _log_page)
    app.router.add_get("/logs/{namespace}/{name}/stream", _log_stream)
    app.router.add_get("/healthz", _healthz)
    app.router.add_static("/static", STATIC, show_index=False, follow_symlinks=False)
    return app


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8686
    token: str | None = None
    namespaces: tuple[str, ...] = ()
    operator_health: str = ""


def url_of(settings: Settings, port: int, guard: Guard) -> str:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{port}/" + (f"?token={guard.token}" if guard.token else "")


async def serve(kube: AsyncKube, settings: Settings, started: Callable[[str], None] | None = None) -> None:
    """Run the dashboard until cancelled; ``started`` gets its URL once it listens."""
    namespaces = settings.namespaces or (kube.namespace,)
    store = Store(kube, namespaces, operator_health=settings.operator_health)
    guard = Guard.for_host(settings.host, settings.token)
    runner = web.AppRunner(create_app(store, kube, guard), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    watching = asyncio.create_task(store.run(), name="dashboard-store")
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        port = settings.port or _bound_port(runner)
        if started is not None:
            started(url_of(settings, port, guard))
        await watching
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        await runner.cleanup()


def _bound_port(runner: web.AppRunner) -> int:
    for address in runner.addresses:
        return int(address[1])
    return 0
