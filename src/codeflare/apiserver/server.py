"""Assembles and runs the embedded API server: store, registry, object API, GC and HTTP.

``ApiServer`` owns one state directory: ``state.db`` (SQLite, WAL), the CA and serving
certificate, the admin token and the ``kubeconfig`` it writes once it listens. It binds
127.0.0.1 unless told otherwise and serves HTTPS unless plain HTTP is asked for explicitly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
from pathlib import Path
from typing import Any

from aiohttp import web

from codeflare.apiserver import kubeconfig
from codeflare.apiserver.auth import TokenAuthenticator, load_or_create_admin_token, parse_tokens_file
from codeflare.apiserver.certs import load_or_create_serving
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.gc import GarbageCollector
from codeflare.apiserver.handlers import ApiHandlers, Authorizer, allow_all
from codeflare.apiserver.objects import ObjectAPI, now_rfc3339
from codeflare.apiserver.openapi_docs import OpenAPIDocuments
from codeflare.apiserver.resources import ResourceRegistry, builtin_resources
from codeflare.apiserver.store import ObjectStore
from codeflare.apiserver.strategies import CRD_KEY, Strategies, register_crd
from codeflare.apiserver.watch import WatchHub

log = logging.getLogger(__name__)

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class ApiServer:
    """One embedded API server bound to one state directory."""

    def __init__(
        self,
        state_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        tls: bool = True,
        tokens_file: Path | None = None,
        bookmark_interval: float = 15.0,
        gc_resync: float = 1.0,
        history: int = 20_000,
        authorizer: Authorizer = allow_all,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port = port
        self.tls = tls
        self.admin_token = load_or_create_admin_token(self.state_dir)
        users = parse_tokens_file(tokens_file.read_text()) if tokens_file else {}
        self.authn = TokenAuthenticator(self.admin_token, users)
        self.store = ObjectStore(self.state_dir / "state.db", history=history)
        self.registry = ResourceRegistry(builtin_resources())
        self.strategies = Strategies(self.registry, self.store, now_rfc3339)
        self.api = ObjectAPI(self.store, self.registry, self.strategies)
        for crd in list(self.store.iter(CRD_KEY)):
            try:
                register_crd(self.registry, crd)
            except Exception:
                log.exception("stored CRD %s could not be served", crd["metadata"].get("name"))
        self.hub = WatchHub(self.store)
        self.gc = GarbageCollector(self.api, gc_resync)
        self.handlers = ApiHandlers(
            self.api,
            self.hub,
            self.authn,
            f"{host}:{port}",
            authorizer=authorizer,
            bookmark_interval=bookmark_interval,
            openapi=OpenAPIDocuments(self.registry),
        )
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self.ca_path: Path | None = None
        self._ensure_namespaces()

    def _ensure_namespaces(self) -> None:
        rt = self.registry.get("", "v1", "namespaces")
        assert rt is not None
        ctx = RequestContext(field_manager="codeflare-apiserver")
        for name in DEFAULT_NAMESPACES:
            if self.store.get(rt.key, "", name) is None:
                self.api.create(rt, "", {"metadata": {"name": name}}, ctx)

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.state_dir / "kubeconfig"

    async def start(self) -> None:
        """Listen, start background loops, and write the kubeconfig."""
        ssl_ctx: ssl.SSLContext | None = None
        if self.tls:
            hosts = sorted({"localhost", "127.0.0.1", "::1", self.host})
            ca, crt, key = load_or_create_serving(
                self.state_dir, [h for h in hosts if h not in ("0.0.0.0", "::")]
            )
            self.ca_path = ca
            ssl_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ssl_ctx.load_cert_chain(str(crt), str(key))
        self._runner = web.AppRunner(self.handlers.app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_ctx, backlog=512)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # aiohttp exposes the bound port only here
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self.handlers.server_address = f"{self.host}:{self.port}"
        self._tasks.append(asyncio.create_task(self.gc.run(), name="garbage-collector"))
        ca_pem = self.ca_path.read_bytes() if self.ca_path else None
        kubeconfig.write(self.kubeconfig_path, kubeconfig.render(self.url, self.admin_token, ca_pem))
        log.info("serving %s (state in %s)", self.url, self.state_dir)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.store.close()

    async def serve_forever(self) -> None:
        """Run until SIGINT/SIGTERM."""
        await self.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await self.stop()
