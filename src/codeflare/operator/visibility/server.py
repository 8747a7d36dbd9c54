"""The operator's aggregated API server: HTTPS, the front proxy's identity, routes from registrars.

An extension API server behind the aggregation layer trusts only the API server's front proxy:
it requires a client certificate signed by the ``requestheader-client-ca-file`` CA of
``kube-system/extension-apiserver-authentication`` (and, when that ConfigMap lists
``requestheader-allowed-names``, carrying one of them), and takes the user from the header names
the ConfigMap gives (``X-Remote-User``, ``X-Remote-Group``, ``X-Remote-Extra-<key>``), as
k8s.io/apiserver's requestheader authenticator does. A request without such a certificate is 401.

Routes come from registrars, so another feature can serve its own resources here:
a registrar is a function ``(routes: Routes) -> None`` that calls ``routes.get(version, path,
handler, discovery)``; ``handler(request, user)`` returns the response (or raises
:class:`ApiStatus` for a Status error), and the ``discovery`` entries join that version's
APIResourceList, which the server answers at ``/apis/<group>/<version>``.
:func:`codeflare.operator.visibility.endpoints.pending_workloads_routes` is the registrar of
Kueue's pending-workloads endpoints. Authorization is each handler's business
(:mod:`codeflare.operator.visibility.access`).
"""

from __future__ import annotations

import json
import logging
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from codeflare.k8s.types import Obj
from codeflare.operator.visibility.pending import GROUP

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemoteUser:
    """The user the front proxy authenticated, as its headers name them."""

    name: str
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class FrontProxyTrust:
    """What ``kube-system/extension-apiserver-authentication`` says about the front proxy."""

    client_ca: bytes
    allowed_names: tuple[str, ...] = ()
    user_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_prefixes: tuple[str, ...] = ("X-Remote-Extra-",)

    @classmethod
    def from_configmap(cls, data: dict[str, str]) -> FrontProxyTrust:
        """Read the ConfigMap's data (kube-apiserver's key names; lists are JSON arrays)."""
        ca = str(data.get("requestheader-client-ca-file") or "")
        if not ca:
            raise ValueError("requestheader-client-ca-file: missing (no front proxy to trust)")

        def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            text = data.get(key)
            if not text:
                return default
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{key}: not a JSON list: {exc}") from exc
            return tuple(str(v) for v in value) if isinstance(value, list) else default

        return cls(
            ca.encode(),
            names("requestheader-allowed-names", ()),
            names("requestheader-username-headers", cls.user_headers),
            names("requestheader-group-headers", cls.group_headers),
            names("requestheader-extra-headers-prefix", cls.extra_prefixes),
        )

    def user_of(self, headers: Any) -> RemoteUser | None:
        """The user the headers name, or None when no user header is set."""
        name = next((headers[h] for h in self.user_headers if headers.get(h)), "")
        if not name:
            return None
        groups = tuple(g for h in self.group_headers for g in headers.getall(h, []))
        extra: dict[str, tuple[str, ...]] = {}
        for key in headers:
            for prefix in self.extra_prefixes:
                if key.lower().startswith(prefix.lower()):
                    extra[key[len(prefix) :].lower()] = tuple(headers.getall(key, []))
        return RemoteUser(name, groups, extra)


class ApiStatus(Exception):
    """An error answered as a ``metav1.Status``."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def response(self) -> web.Response:
        body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                     "message": self.message, "reason": self.reason, "code": self.code}  # fmt: skip
        if self.details:
            body["details"] = self.details
        return web.json_response(body, status=self.code)


Handler = Callable[[web.Request, RemoteUser], Awaitable[web.StreamResponse]]


class Routes:
    """What registrars add their endpoints through (GET only: the API is read-only)."""

    def __init__(self) -> None:
        self.handlers: list[tuple[str, Handler]] = []
        self.discovery: dict[str, list[Obj]] = {}  # version -> APIResourceList resources

    def get(self, version: str, path: str, handler: Handler, discovery: Iterable[Obj] = ()) -> None:
        """Serve ``GET /apis/<group>/<version><path>`` (aiohttp path syntax, e.g. ``/x/{name}``)."""
        self.handlers.append((f"/apis/{GROUP}/{version}{path}", handler))
        self.discovery.setdefault(version, []).extend(discovery)


Registrar = Callable[[Routes], None]


class AggregatedServer:
    """The HTTPS server: authenticates the front proxy, then runs the registrars' handlers."""

    def __init__(self, trust: FrontProxyTrust, registrars: Sequence[Registrar]) -> None:
        self.trust = trust
        self.routes = Routes()
        for register in registrars:
            register(self.routes)
        self.port = 0
        self._runner: web.AppRunner | None = None

    def ssl_context(self, cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cadata=self.trust.client_ca.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL  # checked per request, so a missing one is a 401 Status
        with tempfile.TemporaryDirectory(prefix="codeflare-visibility-") as tmp:
            cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert.write_bytes(cert_pem)
            key.write_bytes(key_pem)
            key.chmod(0o600)
            ctx.load_cert_chain(cert, key)
        return ctx

    def app(self) -> web.Application:
        app = web.Application()
        for path, handler in self.routes.handlers:
            app.router.add_get(path, self._authenticated(handler))
        for version, resources in self.routes.discovery.items():
            listing = self._authenticated(self._discovery(version, resources))
            app.router.add_get(f"/apis/{GROUP}/{version}", listing)
        return app

    async def start(self, host: str, port: int, cert_pem: bytes, key_pem: bytes) -> int:
        """Listen on ``host:port`` (0: any free port); returns the port."""
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=self.ssl_context(cert_pem, key_pem))
        await site.start()
        sockets = getattr(getattr(site, "_server", None), "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1]) if sockets else port
        log.info("aggregated API %s listening on https://%s:%d", GROUP, host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _authenticated(self, handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            try:
                user = self._user(request)
                return await handler(request, user)
            except ApiStatus as status:
                return status.response()

        return handle

    def _user(self, request: web.Request) -> RemoteUser:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        if not peer:
            raise ApiStatus(401, "Unauthorized", "a front-proxy client certificate is required")
        subject = dict(item[0] for item in peer.get("subject", ()))
        allowed = self.trust.allowed_names
        if allowed and subject.get("commonName") not in allowed:
            raise ApiStatus(401, "Unauthorized", f"client certificate {subject.get('commonName')!r} is not "
                            "an allowed front proxy")  # fmt: skip
        user = self.trust.user_of(request.headers)
        if user is None:
            raise ApiStatus(401, "Unauthorized", "no user in the front proxy's headers")
        return user

    @staticmethod
    def _discovery(version: str, resources: list[Obj]) -> Handler:
        async def handle(request: web.Request, user: RemoteUser) -> web.StreamResponse:
            listing = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{version}",
                       "resources": resources}  # fmt: skip
            return web.json_response(listing)

        return handle
