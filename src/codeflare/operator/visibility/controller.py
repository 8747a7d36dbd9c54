"""Runs the visibility API inside the operator: trust, serve, register, report ready.

:func:`register` (called with the queueing controller's state, since the answers are the engine's
queue order) returns one background coroutine that reads the front proxy's CA from
``kube-system/extension-apiserver-authentication``, makes a CA and serving certificate (for
127.0.0.1 and the Service's DNS name; kept for the process's life, not rotated), serves
:class:`~codeflare.operator.visibility.server.AggregatedServer` with the pending-workloads
registrar, applies the Service ``codeflare-operator-visibility`` (with the loopback port the
embedded API server resolves, :data:`~codeflare.k8s.constants.LOOPBACK_PORT_ANNOTATION`; with
``webhook.service`` set, on a real cluster, it listens on that Service's visibility port instead
and applies no Service) and the APIServices ``v1beta2``/``v1beta1.visibility.kueue.x-k8s.io``
carrying the CA bundle, and only then marks ``visibility`` ready. With ``queueing.enabled: false``
it is not started (a real Kueue serves this group). Other features add their routes by passing
registrars as ``extra``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Sequence
from typing import Any

from codeflare.k8s import certs
from codeflare.k8s.constants import LOOPBACK_PORT_ANNOTATION, MANAGED_BY_LABEL, OPERATOR_NAME
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.operator.config import WebhookConfig
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing.feeder import QueueingState
from codeflare.operator.visibility.access import AccessReviewer
from codeflare.operator.visibility.endpoints import VERSIONS, pending_workloads_routes
from codeflare.operator.visibility.pending import GROUP
from codeflare.operator.visibility.server import AggregatedServer, FrontProxyTrust, Registrar
from codeflare.operator.webhooks.clientconfig import Server, client_config, listen_port, service_hosts

log = logging.getLogger(__name__)

READY_COMPONENT = "visibility"
SERVICE_NAME = "codeflare-operator-visibility"
FIELD_MANAGER = "codeflare-visibility"
AUTH_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")
APISERVICE = Kind("apiregistration.k8s.io", "v1", "APIService", "apiservices", False)


class EngineSource:
    """The :class:`~codeflare.operator.visibility.endpoints.PendingSource` of the queueing state."""

    def __init__(self, state: QueueingState) -> None:
        self.state = state

    def order(self, cluster_queue: str) -> list[str] | None:
        return self.state.engine.pending_order(cluster_queue)

    def cluster_queue_of(self, namespace: str, local_queue: str) -> str | None:
        lq = self.state.informers[kinds.LOCAL_QUEUE].cache.get((namespace, local_queue))
        return None if lq is None else str((lq.get("spec") or {}).get("clusterQueue", ""))

    def workload(self, key: str) -> Obj | None:
        return self.state.workload_obj(key)

    def priority(self, key: str) -> int:
        workload = self.state.engine.workload(key)
        return workload.priority if workload is not None else 0


def service(namespace: str, port: int) -> Obj:
    """The Service the APIServices name; its loopback annotation is how the embedded API server
    reaches a process on this host (a real cluster routes it to the operator's pod instead)."""
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": namespace,
                     "labels": {MANAGED_BY_LABEL: OPERATOR_NAME},
                     "annotations": {LOOPBACK_PORT_ANNOTATION: str(port)}},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port, "protocol": "TCP"}]},
    }  # fmt: skip


def api_service_reference(settings: WebhookConfig, namespace: str, server: Server, local_name: str) -> Obj:
    """An APIService's ``spec.service``: ``webhook.service`` (a real cluster), else the Service
    ``local_name`` the operator applies with its loopback port (local mode)."""
    if settings.service is None:
        return {"name": local_name, "namespace": namespace, "port": 443}
    return dict(client_config(settings, namespace, server)["service"])


def api_services(namespace: str, ca_bundle: bytes, settings: WebhookConfig | None = None) -> list[Obj]:
    """One APIService per served version, as Kueue's config/components/visibility declares them
    (groupPriorityMinimum and versionPriority 100), but verified with our CA instead of
    ``insecureSkipTLSVerify``."""
    reference = api_service_reference(settings or WebhookConfig(), namespace, "visibility", SERVICE_NAME)
    return [
        {"apiVersion": APISERVICE.api_version, "kind": APISERVICE.kind,
         "metadata": {"name": f"{version}.{GROUP}", "labels": {MANAGED_BY_LABEL: OPERATOR_NAME}},
         "spec": {"group": GROUP, "version": version, "groupPriorityMinimum": 100, "versionPriority": 100,
                  "caBundle": base64.b64encode(ca_bundle).decode(),
                  "service": reference}}
        for version in VERSIONS
    ]  # fmt: skip


def serving_certificate(
    settings: WebhookConfig, namespace: str, local_name: str
) -> tuple[certs.CertPair, bytes]:
    """(serving certificate, CA) of an aggregated API: valid for 127.0.0.1, its own loopback
    Service ``local_name`` and, with ``webhook.service`` set, that Service's DNS names."""
    ca = certs.new_ca(f"{local_name}-ca")
    hosts = ["127.0.0.1", "localhost", f"{local_name}.{namespace}.svc", *service_hosts(settings, namespace)]
    return certs.issue(ca, local_name, hosts), ca.cert_pem


async def _front_proxy_trust(ctx: OperatorContext) -> FrontProxyTrust:
    """The ConfigMap's trust, waiting (with backoff) until the API server has published it."""
    delay = 0.5
    while True:
        try:
            found = await ctx.kube.find(kinds.CONFIGMAP, AUTH_CONFIGMAP[1], AUTH_CONFIGMAP[0])
            if found is not None:
                return FrontProxyTrust.from_configmap(dict(found.get("data") or {}))
            log.warning("no %s/%s yet; the visibility API waits for it", *AUTH_CONFIGMAP)
        except (errors.KubeError, ValueError) as exc:
            log.warning("cannot read %s/%s: %s; retrying", *AUTH_CONFIGMAP, exc)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)


async def _register(ctx: OperatorContext, port: int, ca_bundle: bytes) -> None:
    delay = 0.5
    while True:
        try:
            settings = ctx.config.webhook
            if settings.service is None:  # a real cluster's Service is deploy/'s
                await ctx.kube.apply(kinds.SERVICE, service(ctx.namespace, port), field_manager=FIELD_MANAGER)
            for body in api_services(ctx.namespace, ca_bundle, settings):
                await ctx.kube.apply(APISERVICE, body, field_manager=FIELD_MANAGER)
            return
        except errors.KubeError as exc:
            log.warning("cannot register the visibility API: %s; retrying", exc)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)


async def serve_visibility(ctx: OperatorContext, registrars: Sequence[Registrar]) -> None:
    """Serve until cancelled (the operator's shutdown)."""
    trust = await _front_proxy_trust(ctx)
    settings = ctx.config.webhook
    leaf, ca_pem = serving_certificate(settings, ctx.namespace, SERVICE_NAME)
    server = AggregatedServer(trust, registrars)
    host, _ = settings.listen  # the operator's HTTPS host (loopback unless configured)
    try:
        port = await server.start(host, listen_port(settings, "visibility"), leaf.cert_pem, leaf.key_pem)
        await _register(ctx, port, ca_pem)
        ctx.mark_ready(READY_COMPONENT)
        log.info("visibility API %s registered (port %d)", GROUP, port)
        await asyncio.Event().wait()
    finally:
        await server.stop()


def register(ctx: OperatorContext, state: QueueingState, extra: Sequence[Registrar] = ()) -> list[Any]:
    """The visibility API's background coroutine, answering from ``state`` (plus ``extra`` routes)."""
    ctx.mark_ready(READY_COMPONENT, False)
    access = AccessReviewer(ctx.kube.create)
    return [serve_visibility(ctx, [pending_workloads_routes(EngineSource(state), access), *extra])]
