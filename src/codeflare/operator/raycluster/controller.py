"""The RayCluster controller: keeps each RayCluster's children in place.

It reads RayClusters from the operator's shared informer (the same watch every other controller
uses) and reconciles each one through a work queue: server-side apply (field manager
``codeflare-raycluster-controller``) of the two NetworkPolicies, the dashboard Ingress
(Kubernetes, with ``ingressDomain``) or Route (OpenShift, detected once from whether
``route.openshift.io`` is served), the OAuth proxy's objects (OpenShift with
``rayDashboardOAuthEnabled``), and the CA Secret, created once when mTLS is on. Namespaced children
carry an owner reference and are collected by the API server with the cluster; only cluster-scoped
children (the OAuth proxy's ClusterRoleBinding) need the finalizer, so on plain Kubernetes none is
added. What the children are is decided by the builders (:mod:`ingress`, :mod:`networkpolicy`,
:mod:`mtls`, :mod:`oauth`) and :meth:`RayClusterChildren.desired`; this module only writes them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from codeflare.k8s.constants import RAYCLUSTER_FINALIZER
from codeflare.k8s.types import Obj
from codeflare.k8s.workqueue import ReconcileQueue
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind
from codeflare.operator.context import OperatorContext
from codeflare.operator.raycluster import FIELD_MANAGER, cluster_ref, ingress, mtls, networkpolicy, oauth
from codeflare.operator.webhooks.controller import serves_routes

log = logging.getLogger(__name__)

CONTROLLER = "raycluster"
Key = tuple[str, str]  # namespace, name
CLUSTER_ROLE_BINDING = Kind(
    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False
)
_KIND_OF = {
    "NetworkPolicy": kinds.NETWORK_POLICY,
    "Ingress": kinds.INGRESS,
    "Route": kinds.ROUTE,
    "ServiceAccount": kinds.SERVICE_ACCOUNT,
    "Service": kinds.SERVICE,
    "Secret": kinds.SECRET,
    "ClusterRoleBinding": CLUSTER_ROLE_BINDING,
}


class RayClusterChildren:
    """Applies and cleans up the children of RayClusters for one operator."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.kube: AsyncKube = ctx.kube
        self._openshift: bool | None = None
        self._handled: dict[str, int] = {}  # uid -> generation applied (an optimisation only)

    async def openshift(self) -> bool:
        if self._openshift is None:
            self._openshift = await serves_routes(self.kube, self.ctx.namespace)
            log.info("RayCluster children: %s", "OpenShift (Routes)" if self._openshift else "Kubernetes")
        return self._openshift

    def desired(self, rc: Obj, openshift: bool) -> tuple[list[Obj], list[Obj]]:
        """(applied every time, created once) namespaced children of ``rc``."""
        kuberay = self.ctx.config.kuberay
        use_oauth = openshift and kuberay.ray_dashboard_oauth_enabled
        applied = [networkpolicy.workers_policy(rc), networkpolicy.head_policy(rc, oauth=use_oauth)]
        created_once: list[Obj] = []
        if openshift:
            applied.append(ingress.dashboard_route(rc, oauth=use_oauth))
        elif kuberay.ingress_domain:
            applied.append(ingress.dashboard_ingress(rc, kuberay.ingress_domain))
        if use_oauth:
            applied += oauth.children(rc)
            created_once.append(oauth.cookie_secret(rc))
        if kuberay.mtls_enabled:
            created_once.append(mtls.ca_secret(rc))
        return applied, created_once

    def forget(self, rc: Obj) -> None:
        """``rc`` is gone: drop what was remembered about it."""
        self._handled.pop(str((rc.get("metadata") or {}).get("uid", "")), None)

    async def reconcile(self, rc: Obj) -> None:
        namespace, name = cluster_ref(rc)
        meta = rc.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            await self.finalize(rc)
            return
        uid, generation = str(meta.get("uid", "")), int(meta.get("generation") or 0)
        if self._handled.get(uid) == generation:
            return
        openshift = await self.openshift()
        use_oauth = openshift and self.ctx.config.kuberay.ray_dashboard_oauth_enabled
        if use_oauth and RAYCLUSTER_FINALIZER not in (meta.get("finalizers") or []):
            await self.kube.update(kinds.RAYCLUSTER, name, namespace, _with_finalizer)
        applied, created_once = self.desired(rc, openshift)
        for child in applied:
            await self.kube.apply(_KIND_OF[child["kind"]], child, field_manager=FIELD_MANAGER)
        for child in created_once:
            # create without reading first: the operator needs no get (read) access to Secrets
            kind, child_name = _KIND_OF[child["kind"]], child["metadata"]["name"]
            try:
                await self.kube.create(kind, child)
                log.info("RayCluster %s/%s: created %s %s", namespace, name, child["kind"], child_name)
            except errors.AlreadyExists:
                pass
        if use_oauth:
            await self.kube.apply(
                CLUSTER_ROLE_BINDING, oauth.cluster_role_binding(rc), field_manager=FIELD_MANAGER
            )
        self._handled[uid] = generation
        log.debug("RayCluster %s/%s: %d children in place", namespace, name, len(applied) + len(created_once))

    async def finalize(self, rc: Obj) -> None:
        """Delete the cluster-scoped children, then release the finalizer."""
        namespace, name = cluster_ref(rc)
        self.forget(rc)
        if RAYCLUSTER_FINALIZER not in ((rc.get("metadata") or {}).get("finalizers") or []):
            return
        await self.kube.delete(CLUSTER_ROLE_BINDING, oauth.cluster_role_binding_name(name, namespace))
        await self.kube.update(kinds.RAYCLUSTER, name, namespace, _without_finalizer)
        log.info("RayCluster %s/%s: cluster-scoped children deleted, finalizer released", namespace, name)


def _with_finalizer(rc: Obj) -> Obj | None:
    finalizers = list((rc.get("metadata") or {}).get("finalizers") or [])
    if RAYCLUSTER_FINALIZER in finalizers or (rc.get("metadata") or {}).get("deletionTimestamp"):
        return None
    rc["metadata"]["finalizers"] = [*finalizers, RAYCLUSTER_FINALIZER]
    return rc


def _without_finalizer(rc: Obj) -> Obj | None:
    finalizers = list((rc.get("metadata") or {}).get("finalizers") or [])
    if RAYCLUSTER_FINALIZER not in finalizers:
        return None
    rc["metadata"]["finalizers"] = [f for f in finalizers if f != RAYCLUSTER_FINALIZER]
    return rc


class RayClusterController:
    """RayCluster events from the shared informer, reconciled one key at a time by a work queue.

    A failed reconcile is retried with backoff by the queue (from the informer's newest copy);
    the work done is counted in ``codeflare_reconcile_total{controller="raycluster"}`` and its
    progress over the watch in ``codeflare_caught_up_resource_version``.
    """

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.children = RayClusterChildren(ctx)
        self.progress = ctx.metrics.watch_progress(CONTROLLER)
        self.queue: ReconcileQueue[Key] = ReconcileQueue(
            self._reconcile_key, expected_errors=(errors.KubeError,), name="raycluster reconcile"
        )
        ctx.metrics.count_reconciles(CONTROLLER, self.queue)
        self.informer = ctx.informers.subscribe(kinds.RAYCLUSTER, self._on_raycluster)

    def _on_raycluster(self, event: str, obj: Obj, old: Obj | None) -> None:
        if event == "DELETED":
            self.children.forget(obj)
            self.progress.seen(kinds.RAYCLUSTER.kind, obj)
            return
        key = cluster_ref(obj)
        self.progress.seen(kinds.RAYCLUSTER.kind, obj, key)
        self.queue.add(key)

    async def run(self) -> None:
        """Reconcile once the RayCluster cache is complete."""
        await self.informer.synced.wait()
        self.ctx.mark_ready(CONTROLLER)
        await self.queue.run()

    async def _reconcile_key(self, key: Key) -> float | None:
        self.progress.start(key)
        done = False
        try:
            rc = self.informer.cache.get(key)
            if rc is not None:
                await self.children.reconcile(rc)
            done = True
        finally:
            self.progress.finish(key, done)
        return None


def register(ctx: OperatorContext) -> list[Awaitable[Any]]:
    """Set the RayCluster controller up on ``ctx``'s informers; returns its reconcile loop."""
    ctx.mark_ready(CONTROLLER, False)
    return [RayClusterController(ctx).run()]
