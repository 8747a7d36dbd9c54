"""Assembles and runs the embedded API server: store, registry, object API, GC and HTTP.

``ApiServer`` owns one state directory: ``state.db`` (SQLite, WAL), the CA and serving
certificate, the admin token, ``serviceaccount-tokens.db`` and the ``kubeconfig`` it writes once
it listens. It binds 127.0.0.1 unless told otherwise and serves HTTPS unless plain HTTP is asked
for explicitly. Authorization is RBAC by default (the admin token is in ``system:masters``), with
Kubernetes' default ClusterRoles written at startup; every write passes admission (webhooks).
Custom objects stored at a version their CRD no longer stores are migrated once it listens
(:mod:`~codeflare.apiserver.registry.storage_migration`).
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

from codeflare.apiserver import errors, kubeconfig
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.endpoints.aggregation import AUTH_CONFIGMAP, Aggregator, authentication_configmap
from codeflare.apiserver.endpoints.handlers import ApiHandlers, Authorizer
from codeflare.apiserver.endpoints.openapi_docs import OpenAPIDocuments
from codeflare.apiserver.registry.gc import GarbageCollector
from codeflare.apiserver.registry.objects import ObjectAPI
from codeflare.apiserver.registry.resources import ResourceRegistry, builtin_resources
from codeflare.apiserver.registry.storage_migration import StorageMigration
from codeflare.apiserver.registry.strategies import CRD_KEY, Strategies, register_crd
from codeflare.apiserver.registry.watch import WatchHub
from codeflare.apiserver.security.admission import Admission
from codeflare.apiserver.security.authn import (
    TokenAuthenticator,
    load_or_create_admin_token,
    parse_tokens_file,
)
from codeflare.apiserver.security.authz import Authorization
from codeflare.apiserver.security.bootstrap_policy import (
    bootstrap_cluster_role_bindings,
    bootstrap_cluster_roles,
)
from codeflare.apiserver.security.rbac import RbacIndex
from codeflare.apiserver.security.reviews import Reviews, register_reviews
from codeflare.apiserver.security.serviceaccounts import ServiceAccountTokens
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.certs import load_or_create_serving
from codeflare.k8s.timestamps import now_rfc3339

log = logging.getLogger(__name__)

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
AUTHORIZATION_MODES = ("rbac", "always-allow")
# The longest request line (URL) and header kube-apiserver reads: Go's http.Server default
# MaxHeaderBytes (1 MiB). aiohttp's own default (8190) answered long URLs with plain text.
MAX_HEADER_BYTES = 1 << 20


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
        authorization: str = "rbac",
        authorizer: Authorizer | None = None,
    ) -> None:
        if authorization not in AUTHORIZATION_MODES:
            modes = ", ".join(AUTHORIZATION_MODES)
            raise ValueError(f"authorization must be one of {modes}, not {authorization!r}")
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
        register_reviews(self.registry)
        self.strategies = Strategies(self.registry, self.store, now_rfc3339)
        self.api = ObjectAPI(self.store, self.registry, self.strategies)
        for crd in list(self.store.iter(CRD_KEY)):
            try:
                register_crd(self.registry, crd)
            except Exception:
                log.exception("stored CRD %s could not be served", crd["metadata"].get("name"))
        self.hub = WatchHub(self.store)
        self.gc = GarbageCollector(self.api, gc_resync)
        self.migration = StorageMigration(self.api)
        self.sa_tokens = ServiceAccountTokens(self.state_dir / "serviceaccount-tokens.db", self.store)
        self.authn.add_resolver(self.sa_tokens.authenticate)
        self.rbac = RbacIndex(self.store)
        self.authorization = Authorization(self.rbac, enabled=authorization == "rbac" and authorizer is None)
        self.admission = Admission(self.store, self.registry, self.authorization)
        virtual = Reviews(self.authorization, self.authn.authenticate).handlers()
        virtual[("core/serviceaccounts", "token")] = self.sa_tokens.token_request
        self.aggregator = Aggregator(self.store, self.state_dir)
        self.handlers = ApiHandlers(
            self.api,
            self.hub,
            self.authn,
            f"{host}:{port}",
            authorizer=authorizer or self.authorization.authorizer,
            bookmark_interval=bookmark_interval,
            openapi=OpenAPIDocuments(self.registry),
            admission=self.admission,
            virtual=virtual,
            aggregator=self.aggregator,
        )
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self.ca_path: Path | None = None
        self._ensure_namespaces()
        self._ensure_default_rbac()

    def _ensure_namespaces(self) -> None:
        rt = self.registry.get("", "v1", "namespaces")
        assert rt is not None
        ctx = RequestContext(field_manager="codeflare-apiserver")
        for name in DEFAULT_NAMESPACES:
            if self.store.get(rt.key, "", name) is None:
                self.api.create(rt, "", {"metadata": {"name": name}}, ctx)

    def _ensure_default_rbac(self) -> None:
        """Write missing default ClusterRoles/bindings; refresh those still marked autoupdate."""
        ctx = RequestContext(field_manager="codeflare-apiserver")
        for plural, objects in (
            ("clusterroles", bootstrap_cluster_roles()),
            ("clusterrolebindings", bootstrap_cluster_role_bindings()),
        ):
            rt = self.registry.get("rbac.authorization.k8s.io", "v1", plural)
            assert rt is not None
            for obj in objects:
                name = obj["metadata"]["name"]
                current = self.store.get(rt.key, "", name)
                try:
                    if current is None:
                        self.api.create(rt, "", obj, ctx)
                        continue
                    autoupdate = (current["metadata"].get("annotations") or {}).get(
                        "rbac.authorization.kubernetes.io/autoupdate"
                    )
                    fields = ("rules", "aggregationRule", "roleRef", "subjects")
                    if autoupdate == "true" and any(current.get(f) != obj.get(f) for f in fields):
                        body = {**current, **{f: obj[f] for f in fields if f in obj}}
                        self.api.update(rt, "", name, body, ctx)
                except errors.ApiError as exc:
                    log.warning("default RBAC %s %s not written: %s", plural, name, exc.message)

    def _publish_front_proxy_ca(self, client_ca: bytes) -> None:
        """kube-system/extension-apiserver-authentication: how aggregated servers trust the proxy."""
        rt = self.registry.get("", "v1", "configmaps")
        assert rt is not None
        wanted = authentication_configmap(client_ca, self.aggregator.ca_crt.read_bytes())
        ctx = RequestContext(field_manager="codeflare-apiserver")
        current = self.store.get(rt.key, *AUTH_CONFIGMAP)
        if current is None:
            self.api.create(rt, AUTH_CONFIGMAP[0], wanted, ctx)
        elif current.get("data") != wanted["data"]:
            body = {**current, "data": wanted["data"]}
            self.api.update(rt, AUTH_CONFIGMAP[0], AUTH_CONFIGMAP[1], body, ctx)

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
        self._runner = web.AppRunner(
            self.handlers.app(),
            access_log=None,
            handler_cancellation=True,
            max_line_size=MAX_HEADER_BYTES,
            max_field_size=MAX_HEADER_BYTES,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_ctx, backlog=512)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # aiohttp exposes the bound port only here
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self.handlers.server_address = f"{self.host}:{self.port}"
        self._tasks.append(asyncio.create_task(self.gc.run(), name="garbage-collector"))
        self._tasks.append(asyncio.create_task(self.migration.run(), name="storage-migration"))
        ca_pem = self.ca_path.read_bytes() if self.ca_path else None
        self._publish_front_proxy_ca(ca_pem or b"")
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
        await self.admission.close()
        await self.aggregator.close()
        self.sa_tokens.close()
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
