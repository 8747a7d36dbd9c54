"""The RayCluster controller: keeps each RayCluster's children in place.

For every RayCluster event it server-side applies (field manager
``codeflare-raycluster-controller``) the two NetworkPolicies, the dashboard Ingress (Kubernetes,
with ``ingressDomain``) or Route (OpenShift, detected once from whether ``route.openshift.io`` is
served), the OAuth proxy's objects (OpenShift with ``rayDashboardOAuthEnabled``), and creates the
CA Secret once when mTLS is on. Namespaced children carry an owner reference and are collected
by the API server with the cluster; only cluster-scoped children (the OAuth proxy's
ClusterRoleBinding) need the finalizer, so on plain Kubernetes none is added.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind
from codeflare.operator.context import OperatorContext
from codeflare.operator.raycluster import FIELD_MANAGER, Obj, cluster_ref, ingress, mtls, networkpolicy, oauth
from codeflare.operator.webhooks.controller import serves_routes

log = logging.getLogger(__name__)

FINALIZER = "codeflare.dev/raycluster-cluster-scoped-children"
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
        if use_oauth and FINALIZER not in (meta.get("finalizers") or []):
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
        self._handled.pop(str((rc.get("metadata") or {}).get("uid", "")), None)
        if FINALIZER not in ((rc.get("metadata") or {}).get("finalizers") or []):
            return
        await self.kube.delete(CLUSTER_ROLE_BINDING, oauth.cluster_role_binding_name(name, namespace))
        await self.kube.update(kinds.RAYCLUSTER, name, namespace, _without_finalizer)
        log.info("RayCluster %s/%s: cluster-scoped children deleted, finalizer released", namespace, name)


def _with_finalizer(rc: Obj) -> Obj | None:
    finalizers = list((rc.get("metadata") or {}).get("finalizers") or [])
    if FINALIZER in finalizers or (rc.get("metadata") or {}).get("deletionTimestamp"):
        return None
    rc["metadata"]["finalizers"] = [*finalizers, FINALIZER]
    return rc


def _without_finalizer(rc: Obj) -> Obj | None:
    finalizers = list((rc.get("metadata") or {}).get("finalizers") or [])
    if FINALIZER not in finalizers:
        return None
    rc["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
    return rc


async def _with_retries(children: RayClusterChildren, rc: Obj, attempts: int = 5) -> None:
    namespace, name = cluster_ref(rc)
    for attempt in range(attempts):
        try:
            await children.reconcile(rc)
            return
        except errors.KubeError as exc:
            if attempt == attempts - 1:
                log.error("RayCluster %s/%s: children not reconciled: %s", namespace, name, exc)
                return
            log.warning("RayCluster %s/%s: %s; retrying", namespace, name, exc)
            await asyncio.sleep(min(0.5 * 2**attempt, 5.0))
            fresh = await children.kube.find(kinds.RAYCLUSTER, name, namespace)
            if fresh is None:
                return
            rc = fresh


def register(ctx: OperatorContext, registry: Any) -> list[Any]:
    """Register the RayCluster event handler on ``registry``; no background work."""
    import kopf

    children = RayClusterChildren(ctx)

    @kopf.on.event(
        kinds.RAYCLUSTER.group,
        kinds.RAYCLUSTER.version,
        kinds.RAYCLUSTER.plural,
        registry=registry,
        id="raycluster-children",
    )
    async def raycluster_changed(body: Any, type: str, **_: Any) -> None:
        if type == "DELETED":
            return
        await _with_retries(children, dict(body))

    ctx.mark_ready("raycluster")
    return []
