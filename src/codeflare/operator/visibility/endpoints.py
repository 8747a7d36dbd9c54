"""Kueue's pending-workloads endpoints (v1beta2 and v1beta1, the same shape), as one registrar.

``GET .../clusterqueues/{name}/pendingworkloads`` and
``GET .../namespaces/{namespace}/localqueues/{name}/pendingworkloads`` answer a
``PendingWorkloadsSummary`` (:mod:`pending`) in the order a :class:`PendingSource` gives, after
:class:`~codeflare.operator.visibility.access.AccessReviewer` allowed the user. An unknown queue is
404 as Kueue answers it (``clusterqueue.visibility.kueue.x-k8s.io "x" not found``), a bad
``limit``/``offset`` 400. Nothing here reads the API.
"""

from __future__ import annotations

from typing import Protocol

from aiohttp import web

from codeflare.k8s.types import Obj
from codeflare.operator.visibility import pending
from codeflare.operator.visibility.access import AccessReviewer
from codeflare.operator.visibility.server import ApiStatus, Handler, Registrar, RemoteUser, Routes

VERSIONS = ("v1beta2", "v1beta1")


class PendingSource(Protocol):
    """What the endpoints read: the engine's queue order and the cached Workloads."""

    def order(self, cluster_queue: str) -> list[str] | None:
        """Pending workload keys of a ClusterQueue in queue order; None: no such ClusterQueue."""

    def cluster_queue_of(self, namespace: str, local_queue: str) -> str | None:
        """The ClusterQueue a LocalQueue points at; None: no such LocalQueue."""

    def workload(self, key: str) -> Obj | None: ...

    def priority(self, key: str) -> int: ...


def not_found(kind: str, name: str) -> ApiStatus:
    return ApiStatus(404, "NotFound", f'{kind}.{pending.GROUP} "{name}" not found',
                     {"name": name, "group": pending.GROUP, "kind": kind})  # fmt: skip


def options(request: web.Request) -> pending.PageOptions:
    try:
        return pending.PageOptions.from_query(request.query)
    except pending.OptionError as exc:
        raise ApiStatus(400, "BadRequest", str(exc)) from exc


def pending_workloads_routes(source: PendingSource, access: AccessReviewer) -> Registrar:
    """The registrar of both endpoints in every version of :data:`VERSIONS`."""

    def register(routes: Routes) -> None:
        for version in VERSIONS:
            routes.get(version, "/clusterqueues/{name}/pendingworkloads", _cluster_queue(version),
                       pending.discovery_entries("clusterqueues", "ClusterQueue", False))  # fmt: skip
            routes.get(version, "/namespaces/{namespace}/localqueues/{name}/pendingworkloads",
                       _local_queue(version),
                       pending.discovery_entries("localqueues", "LocalQueue", True))  # fmt: skip

    def _cluster_queue(version: str) -> Handler:
        async def handle(request: web.Request, user: RemoteUser) -> web.StreamResponse:
            name = request.match_info["name"]
            page = options(request)
            await access.require_cluster_queue(user, version, name)
            order = source.order(name)
            if order is None:
                raise not_found("clusterqueue", name)
            items = pending.cluster_queue_items(order, source.workload, source.priority, page)
            return web.json_response(pending.summary(version, items))

        return handle

    def _local_queue(version: str) -> Handler:
        async def handle(request: web.Request, user: RemoteUser) -> web.StreamResponse:
            namespace, name = request.match_info["namespace"], request.match_info["name"]
            page = options(request)
            await access.require_local_queue(user, version, namespace, name)
            cluster_queue = source.cluster_queue_of(namespace, name)
            if cluster_queue is None:
                raise not_found("localqueue", name)
            order = source.order(cluster_queue) or []
            lq = (namespace, name)
            items = pending.local_queue_items(order, source.workload, source.priority, lq, page)
            return web.json_response(pending.summary(version, items))

        return handle

    return register
