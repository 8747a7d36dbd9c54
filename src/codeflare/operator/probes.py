"""Health and metrics endpoints (aiohttp): ``/healthz``, ``/readyz`` and ``/metrics``.

Liveness answers while the process serves; readiness only once every controller reported that
it is syncing (``OperatorContext.is_ready``). Either listener can be disabled with "0".
"""

from __future__ import annotations

import logging

from aiohttp import web

from codeflare.operator.context import OperatorContext

log = logging.getLogger(__name__)


async def start_probes(ctx: OperatorContext) -> list[web.AppRunner]:
    """Start the configured listeners; returns runners to clean up at shutdown."""
    runners: list[web.AppRunner] = []
    health = ctx.config.health

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        if ctx.is_ready:
            return web.Response(text="ok")
        waiting = ", ".join(sorted(k for k, v in ctx.ready.items() if not v)) or "startup"
        return web.Response(text=f"not ready: {waiting}", status=503)

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(body=ctx.metrics.render(), headers={"Content-Type": "text/plain; version=0.0.4"})

    listeners: dict[tuple[str, int], web.Application] = {}
    if health.listen is not None:
        app = listeners.setdefault(health.listen, web.Application())
        app.router.add_get(f"/{health.liveness_endpoint_name}", healthz)
        app.router.add_get(f"/{health.readiness_endpoint_name}", readyz)
    if ctx.config.metrics.listen is not None:
        app = listeners.setdefault(ctx.config.metrics.listen, web.Application())
        app.router.add_get("/metrics", metrics)
    for (host, port), app in listeners.items():
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host or None, port).start()
        log.info("probes listening on %s:%d", host or "*", port)
        runners.append(runner)
    return runners
