"""Starts the one operator process: configuration, leader election, probes, then the controllers.

Order matters: the configuration is read (and created with defaults when missing) before any
controller starts, and a bad one stops the process with every bad field listed; with leader
election on, nothing acts before the Lease is held. Controllers run as kopf handlers plus the
queueing controller's own loop, all in one event loop. A changed ConfigMap triggers a clean
restart (``RESTART`` exit status, which the ``codeflare operator`` command answers with exec).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from codeflare.kube.client import AsyncKube
from codeflare.kube.config import Connection
from codeflare.operator.config import CONFIGMAP_NAME, ConfigError
from codeflare.operator.configuration import load_config, watch_for_change
from codeflare.operator.context import OperatorContext
from codeflare.operator.events import EventRecorder
from codeflare.operator.leader import LeaderElector
from codeflare.operator.metrics import OperatorMetrics
from codeflare.operator.probes import start_probes

log = logging.getLogger(__name__)

EXIT_OK, EXIT_CONFIG, EXIT_LOST_LEASE, RESTART = 0, 2, 3, 75

Controller = Callable[[OperatorContext, Any], Awaitable[list[Awaitable[Any]]] | list[Awaitable[Any]]]


def default_identity() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def _login_handler(connection: Connection) -> Callable[..., Any]:
    """A kopf login handler that uses our connection's credentials."""

    def login(**_: Any) -> Any:
        import kopf

        cfg = connection.config
        cluster, user = cfg.cluster, cfg.user
        ca_path = cfg.abs_file(cluster.certificate_auth) if cluster.certificate_auth else None
        return kopf.ConnectionInfo(
            server=cluster.server,
            ca_path=ca_path,
            ca_data=cluster.certificate_auth_data,
            insecure=bool(cluster.insecure),
            token=user.token,
            certificate_path=cfg.abs_file(user.client_cert) if user.client_cert else None,
            certificate_data=user.client_cert_data,
            private_key_path=cfg.abs_file(user.client_key) if user.client_key else None,
            private_key_data=user.client_key_data,
            default_namespace=connection.namespace,
        )

    return login


def _kopf_settings(ctx: OperatorContext) -> Any:
    import kopf

    settings = kopf.OperatorSettings()
    settings.posting.level = logging.WARNING
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.reconnect_backoff = 0.5
    settings.persistence.finalizer = "workload.codeflare.dev/finalizer"
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="codeflare.dev")
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix="codeflare.dev", key="last-handled-configuration"
    )
    settings.batching.error_delays = (1, 2, 5, 10, 30)
    settings.networking.request_timeout = 60
    return settings


async def run_operator(
    connection: Connection, namespace: str, config_name: str = CONFIGMAP_NAME, identity: str | None = None
) -> int:
    """Run until stopped; returns an exit status (``RESTART`` when the configuration changed)."""
    import kopf

    kube = AsyncKube(connection, field_manager="codeflare-operator")
    try:
        try:
            config, raw = await load_config(kube, namespace, config_name)
        except ConfigError as exc:
            log.error(
                "refusing to start: invalid configuration in ConfigMap %s/%s:\n%s",
                namespace,
                config_name,
                "\n".join(exc.problems),
            )
            return EXIT_CONFIG
        ctx = OperatorContext(config, connection, kube, namespace, EventRecorder(kube), OperatorMetrics())
        ctx.mark_ready("leader", not config.leader_election.leader_elect)
        runners = await start_probes(ctx)
        elector: LeaderElector | None = None
        if config.leader_election.leader_elect:
            elector = LeaderElector(kube, namespace, identity or default_identity(), config.leader_election)
            await elector.acquire()
            ctx.mark_ready("leader")
        registry = kopf.OperatorRegistry()
        kopf.on.login(registry=registry)(_login_handler(connection))
        background = await _register_controllers(ctx, registry)
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(
                kopf.operator(
                    registry=registry,
                    settings=_kopf_settings(ctx),
                    clusterwide=True,
                    standalone=True,
                    stop_flag=stop,
                ),
                name="kopf",
            )
        ]
        tasks += [asyncio.create_task(_named(c)) for c in [ctx.informers.run(), *background]]
        changed = asyncio.create_task(watch_for_change(kube, namespace, config_name, raw))
        waiters: list[asyncio.Future[Any]] = [changed, *tasks]
        if elector is not None:
            waiters.append(asyncio.create_task(elector.keep()))
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        status = (
            RESTART if changed in done else EXIT_LOST_LEASE if elector and elector.lost.is_set() else EXIT_OK
        )
        for task in done:
            if task is not changed and not task.cancelled() and task.exception() is not None:
                log.error("operator component failed", exc_info=task.exception())
                status = 1
        stop.set()
        for waiter in waiters:
            waiter.cancel()
        for waiter in waiters:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await waiter
        for runner in runners:
            await runner.cleanup()
        return status
    finally:
        await kube.aclose()


async def _named(coro: Awaitable[Any]) -> Any:
    return await coro


async def _register_controllers(ctx: OperatorContext, registry: Any) -> list[Awaitable[Any]]:
    """Register every enabled controller; returns their background coroutines."""
    background: list[Awaitable[Any]] = []
    if ctx.config.queueing.enabled:
        from codeflare.operator.queueing import controller as queueing

        background += queueing.register(ctx, registry)
    else:
        log.info("queueing disabled: Kueue objects are left to an external Kueue")
    if ctx.config.appwrapper.enabled:
        appwrapper = importlib.import_module("codeflare.operator.appwrapper.controller")
        background += appwrapper.register(ctx, registry)
    background += importlib.import_module("codeflare.operator.webhooks.controller").register(ctx, registry)
    background += importlib.import_module("codeflare.operator.raycluster.controller").register(ctx, registry)
    background += importlib.import_module("codeflare.operator.scaleout.controller").register(ctx, registry)
    return background
