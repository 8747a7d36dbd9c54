"""Runs the webhooks inside the operator: serve, register, report ready, rotate certificates.

:func:`register` marks the ``webhooks`` readiness component false and returns one background
coroutine that starts the HTTPS server, applies the webhook configurations and points our Kueue
CRDs' conversion at it (by URL, or through ``webhook.service`` on a real cluster), with the current
CA bundle, and only then marks ``webhooks`` ready (so ``/readyz`` waits for them); every
:data:`CONVERSION_RECHECK` seconds it points a re-applied CRD back at it. Certificates are replaced
when two thirds of their validity have passed, and the configurations re-applied before the new
serving certificate is in use. OpenShift is detected once, from whether the API serves
``route.openshift.io``; the OAuth sidecar is injected only there.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from codeflare import __version__
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.operator.context import OperatorContext
from codeflare.operator.webhooks.admission import AdmissionSettings
from codeflare.operator.webhooks.clientconfig import service_hosts
from codeflare.operator.webhooks.server import (
    WebhookCertificates,
    WebhookServer,
    certificate_directory,
    register_configurations,
    register_conversions,
)

log = logging.getLogger(__name__)
READY_COMPONENT = "webhooks"
CONVERSION_RECHECK = 15.0  # seconds between checks that our Kueue CRDs still call this webhook


async def serves_routes(kube: AsyncKube, namespace: str) -> bool:
    """Whether the API serves OpenShift Routes (``route.openshift.io``), i.e. this is OpenShift.

    Asked through discovery (``GET /apis``), which every authenticated user may read, so the
    operator needs no RBAC on Routes just to find out (``namespace`` is kept for callers)."""
    try:
        groups = await kube.api_groups()
    except errors.KubeError as exc:
        log.warning("cannot tell whether route.openshift.io is served (%s); assuming plain Kubernetes", exc)
        return False
    return kinds.ROUTE.version in groups.get(kinds.ROUTE.group, [])


def admission_settings(ctx: OperatorContext, openshift: bool) -> AdmissionSettings:
    kuberay, aw = ctx.config.kuberay, ctx.config.appwrapper
    return AdmissionSettings(
        operator_version=__version__,
        mtls_enabled=kuberay.mtls_enabled,
        oauth_enabled=kuberay.ray_dashboard_oauth_enabled and openshift,
        default_queue_name=aw.default_queue_name,
        user_rbac_admission_check=aw.user_rbac_admission_check,
    )


async def _register_until_current(ctx: OperatorContext, base_url: str, bundle: str) -> None:
    delay = 0.5
    while True:
        try:
            settings = ctx.config.webhook
            admission = await register_configurations(
                ctx.kube, base_url, bundle, settings.failure_policy, settings, ctx.namespace
            )
            if await register_conversions(ctx.kube, base_url, bundle, settings, ctx.namespace) and admission:
                return
            log.warning("webhook configurations do not carry the current CA bundle yet; retrying")
        except errors.KubeError as exc:
            log.warning("cannot register the webhook configurations: %s; retrying", exc)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)


async def _keep_conversions(ctx: OperatorContext, base_url: str, bundle: str) -> None:
    """Point our Kueue CRDs at ``/convert`` again where a re-applied manifest (``kubectl apply -f
    deploy/crds``, an upgrade) put back the shipped clientConfig; reads only when nothing drifted."""
    try:
        await register_conversions(ctx.kube, base_url, bundle, ctx.config.webhook, ctx.namespace)
    except errors.KubeError as exc:
        log.warning("cannot check the Kueue CRDs' conversion webhook: %s; checking again later", exc)


async def serve_webhooks(ctx: OperatorContext) -> None:
    """Serve until cancelled (the operator's shutdown)."""
    settings = ctx.config.webhook
    directory, holder = certificate_directory(settings.cert_dir)
    hosts = service_hosts(settings, ctx.namespace)
    certificates = WebhookCertificates(directory, settings.cert_validity, ctx.clock, hosts)
    certificates.rotate()
    openshift = await serves_routes(ctx.kube, ctx.namespace)
    server = WebhookServer(ctx.kube, admission_settings(ctx, openshift), certificates, ctx.discovery)
    host, port = settings.listen
    try:
        port = await server.start(host, port)
        base_url = f"https://{host}:{port}"
        await _register_until_current(ctx, base_url, certificates.ca_bundle_b64)
        ctx.mark_ready(READY_COMPONENT)
        reached = settings.service.name if settings.service else base_url
        log.info("webhooks registered (%s, OpenShift: %s)", reached, openshift)
        while True:
            await asyncio.sleep(min(certificates.seconds_until_rotation(), CONVERSION_RECHECK))
            if certificates.seconds_until_rotation() > 0:
                await _keep_conversions(ctx, base_url, certificates.ca_bundle_b64)
                continue
            # Announce the new CA first (the bundle keeps the old one), then serve with it.
            certificates.rotate()
            await _register_until_current(ctx, base_url, certificates.ca_bundle_b64)
            log.info("webhook certificate rotated")
    finally:
        await server.stop()
        if holder is not None:
            holder.cleanup()


def register(ctx: OperatorContext) -> list[Any]:
    """The webhooks' background coroutine (none when ``webhook.enabled`` is false)."""
    if not ctx.config.webhook.enabled:
        log.info("webhooks disabled by configuration")
        return []
    ctx.mark_ready(READY_COMPONENT, False)
    return [serve_webhooks(ctx)]
