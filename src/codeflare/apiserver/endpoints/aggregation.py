"""The aggregation layer: requests for an APIService's group/version proxied to its backend.

An ``apiregistration.k8s.io/v1`` APIService with ``spec.service`` claims ``/apis/<group>/<version>``:
such requests, once authenticated and authorized here, go to the service over HTTPS (verified with
``caBundle``, or not at all with ``insecureSkipTLSVerify``), as kube-aggregator sends them: the
caller's identity in ``X-Remote-User``, ``X-Remote-Group`` and ``X-Remote-Extra-<key>``, the
proxy itself authenticated by a client certificate of a front-proxy CA that the server creates in
its state directory and publishes, as kube-apiserver does, in the ``kube-system/
extension-apiserver-authentication`` ConfigMap (``requestheader-client-ca-file`` and the header
names). A backend that cannot be reached is a 503 Status. Not here: the APIService ``Available``
condition (not maintained yet) and aggregated discovery documents.
"""

from __future__ import annotations

import json
import logging
import ssl
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from codeflare.apiserver import errors, webhook_endpoints
from codeflare.apiserver.context import UserInfo
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s import certs
from codeflare.k8s.files import write_private, write_public

log = logging.getLogger(__name__)

APISERVICES_KEY = "apiregistration.k8s.io/apiservices"
AUTH_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")
FRONT_PROXY_CLIENT = "front-proxy-client"
USER_HEADER, GROUP_HEADER, EXTRA_PREFIX = "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-"
_FORWARDED = ("Content-Type", "Accept", "Content-Encoding")


def front_proxy_material(state_dir: Path) -> tuple[Path, Path, Path]:
    """(front-proxy-ca.crt, front-proxy-client.crt, .key) in ``state_dir``, created at first use."""
    ca_crt, ca_key = state_dir / "front-proxy-ca.crt", state_dir / "front-proxy-ca.key"
    crt, key = state_dir / "front-proxy-client.crt", state_dir / "front-proxy-client.key"
    if not (ca_crt.exists() and ca_key.exists() and crt.exists() and key.exists()):
        ca = certs.new_ca("front-proxy-ca")
        leaf = certs.issue(ca, FRONT_PROXY_CLIENT, client=True)
        write_private(ca_key, ca.key_pem)
        write_public(ca_crt, ca.cert_pem)
        write_private(key, leaf.key_pem)
        write_public(crt, leaf.cert_pem)
    return ca_crt, crt, key


def authentication_configmap(client_ca: bytes, front_proxy_ca: bytes) -> dict[str, Any]:
    """The ConfigMap extension API servers read to trust the proxy (kube-apiserver's key names)."""
    return {
        "metadata": {"name": AUTH_CONFIGMAP[1], "namespace": AUTH_CONFIGMAP[0]},
        "data": {
            "client-ca-file": client_ca.decode(),
            "requestheader-client-ca-file": front_proxy_ca.decode(),
            "requestheader-allowed-names": json.dumps([FRONT_PROXY_CLIENT]),
            "requestheader-username-headers": json.dumps([USER_HEADER]),
            "requestheader-group-headers": json.dumps([GROUP_HEADER]),
            "requestheader-extra-headers-prefix": json.dumps([EXTRA_PREFIX]),
        },
    }


class Aggregator:
    """Finds the APIService of a group/version and proxies requests to its service."""

    def __init__(self, store: ObjectStore, state_dir: Path) -> None:
        self.store = store
        self.ca_crt, self.client_crt, self.client_key = front_proxy_material(state_dir)
        self._ssl: dict[tuple[str, bool], ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def find(self, group: str, version: str) -> dict[str, Any] | None:
        """The APIService serving ``group/version`` from a service, or None (served locally)."""
        svc = self.store.get(APISERVICES_KEY, "", f"{version}.{group}")
        if svc is None or not isinstance((svc.get("spec") or {}).get("service"), dict):
            return None
        return svc

    def groups(self) -> dict[str, list[str]]:
        """group -> versions of every service-backed APIService (for discovery)."""
        out: dict[str, list[str]] = {}
        for svc in self.store.iter(APISERVICES_KEY):
            spec = svc.get("spec") or {}
            if isinstance(spec.get("service"), dict) and spec.get("group") and spec.get("version"):
                out.setdefault(str(spec["group"]), []).append(str(spec["version"]))
        return out

    def _context(self, spec: dict[str, Any]) -> ssl.SSLContext:
        bundle, insecure = str(spec.get("caBundle") or ""), bool(spec.get("insecureSkipTLSVerify"))
        ctx = self._ssl.get((bundle, insecure))
        if ctx is None:
            if insecure:
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            else:
                ctx = webhook_endpoints.ssl_context(bundle, {})
            ctx.load_cert_chain(str(self.client_crt), str(self.client_key))
            self._ssl[(bundle, insecure)] = ctx
        return ctx

    async def proxy(self, request: web.Request, user: UserInfo, svc: dict[str, Any]) -> web.Response:
        spec = svc.get("spec") or {}
        ref = dict(spec["service"], path=request.path)
        try:
            url, server_name = webhook_endpoints.resolve(self.store, "", ref)
            ctx = self._context(spec)
        except webhook_endpoints.EndpointError as exc:
            raise _unavailable(str(exc)) from exc
        headers = {k: request.headers[k] for k in _FORWARDED if k in request.headers}
        forwarded = [(USER_HEADER, user.username), *((GROUP_HEADER, g) for g in user.groups)]
        for key, values in user.extra:
            forwarded += [(f"{EXTRA_PREFIX}{key}", v) for v in values]
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.request(
                request.method,
                url,
                params=request.query,
                data=await request.read(),
                headers=[*headers.items(), *forwarded],
                ssl=ctx,
                server_hostname=server_name,
                timeout=aiohttp.ClientTimeout(total=60),
            ) as resp:
                body = await resp.read()
                return web.Response(
                    body=body,
                    status=resp.status,
                    headers={"Content-Type": resp.headers.get("Content-Type", "")},
                )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _unavailable(f"error trying to reach service: {exc}") from exc


def _unavailable(detail: str) -> errors.ApiError:
    return errors.ApiError(503, "ServiceUnavailable", detail)
