"""Starts the one operator process: configuration, leader election, probes, then the controllers.

Order matters: the configuration is read (and created with defaults when missing) before any
controller starts, and a bad one stops the process with every bad field listed; with leader
election on, nothing acts before the Lease is held. Every controller subscribes to the one set of
shared informers (one list-watch per kind) and runs its own loops, all in one event loop; there
is no second watch stack. A changed ConfigMap triggers a clean restart (``RESTART`` exit
status, which the ``codeflare operator`` command answers with exec).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable
from typing import Any

from codeflare.kube.client import AsyncKube
from codeflare.kube.config import Connection
from codeflare.kube.ratelimit import TokenBucket
from codeflare.operator.config import CONFIGMAP_NAME, ConfigError, OperatorConfig
from codeflare.operator.config_loader import load_config, watch_for_change
from codeflare.operator.context import OperatorContext
from codeflare.operator.events import EventRecorder
from codeflare.operator.leader import LeaderElector
from codeflare.operator.metrics import OperatorMetrics
from codeflare.operator.probes import start_probes

log = logging.getLogger(__name__)

EXIT_OK, EXIT_CONFIG, EXIT_LOST_LEASE, RESTART = 0, 2, 3, 75


def default_identity() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def run_operator(
    connection: Connection, namespace: str, config_name: str = CONFIGMAP_NAME, identity: str | None = None
) -> int:
    """Run until stopped; returns an exit status (``RESTART`` when the configuration changed)."""
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
        kube.rate_limit = client_rate_limit(config)
        metrics = OperatorMetrics()
        kube.observer = metrics.client_request  # before the event recorder takes its twin of the client
        ctx = OperatorContext(config, connection, kube, namespace, EventRecorder(kube), metrics)
        ctx.mark_ready("leader", not config.leader_election.leader_elect)
        runners = await start_probes(ctx)
        elector: LeaderElector | None = None
        if config.leader_election.leader_elect:
            elector = LeaderElector(kube, namespace, identity or default_identity(), config.leader_election)
            await elector.acquire()
            ctx.mark_ready("leader")
        background = _register_controllers(ctx)
        tasks = [asyncio.create_task(_named(c)) for c in [ctx.informers.run(), *background]]
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


def client_rate_limit(config: OperatorConfig) -> TokenBucket:
    """``clientConnection.qps``/``burst``: the token bucket every request of the operator's client
    waits on from the moment the configuration is read (its informers, writes, events, lease)."""
    limits = config.client_connection
    log.info("API client rate limit: qps %g, burst %d", limits.qps, limits.burst)
    return TokenBucket(limits.qps, limits.burst)


async def _named(coro: Awaitable[Any]) -> Any:
    return await coro


def _register_controllers(ctx: OperatorContext) -> list[Awaitable[Any]]:
    """Set every enabled controller up on the shared informers; returns their background coroutines.

    Each controller's ``register(ctx)`` subscribes to ``ctx.informers`` and returns its loops.
    """
    background: list[Awaitable[Any]] = []
    if ctx.config.queueing.enabled:
        queueing = importlib.import_module("codeflare.operator.queueing.controller").QueueingController(ctx)
        background += queueing.background()
        # the visibility API answers from the queueing controller's engine
        background += importlib.import_module("codeflare.operator.visibility.controller").register(
            ctx, queueing.state
        )
    else:
        log.info("queueing disabled: Kueue objects are left to an external Kueue")
    if ctx.config.appwrapper.enabled:
        background += importlib.import_module("codeflare.operator.appwrapper.controller").register(ctx)
    for name in ("webhooks", "raycluster", "scaleout"):
        background += importlib.import_module(f"codeflare.operator.{name}.controller").register(ctx)
    return background
