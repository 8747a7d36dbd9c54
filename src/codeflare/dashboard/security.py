"""Who may talk to the dashboard, and how a request proves it came from the dashboard's own page.

The dashboard acts with its user's Kubernetes credentials, so everything that reaches it is
checked here before any handler runs:

- bound to loopback (the default), the ``Host`` header must name loopback, so a web page that
  rebinds its DNS name to 127.0.0.1 cannot read it;
- bound elsewhere, a token is required (generated when none is given): an ``Authorization:
  Bearer`` header, or ``?token=`` once, which sets an HttpOnly, SameSite=Strict cookie;
- every state-changing request (POST) must carry the per-process CSRF token in ``X-CSRF-Token``
  and, when the browser sends them, an ``Origin`` of this very host and ``Sec-Fetch-Site:
  same-origin``;
- every response forbids framing, sniffing, referrers and any script or style not served by us.

No Kubernetes credential is ever put into a response; that is the handlers' rule, tested there.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

COOKIE = "codeflare_dashboard"
CSRF_HEADER = "X-CSRF-Token"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8080`` -> ``[::1]``)."""
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass
class Guard:
    """The checks for one dashboard: ``token`` (None: not required) and this process's CSRF token."""

    bind_host: str
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @classmethod
    def for_host(cls, host: str, token: str | None) -> Guard:
        """A token is required off loopback; one is generated when the user gave none."""
        if token is None and not is_loopback(host):
            token = secrets.token_urlsafe(24)
        return cls(host, token)

    def _authorized(self, request: web.Request) -> bool:
        if self.token is None:
            return True
        offered = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        offered = offered or request.cookies.get(COOKIE, "") or request.query.get("token", "")
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def _refusal(self, request: web.Request) -> tuple[int, str] | None:
        if is_loopback(self.bind_host) and not is_loopback(_host_name(request.host)):
            return 403, f"Host {request.host!r} is not this dashboard's loopback address"
        if not self._authorized(request):
            return 401, "a token is required: open the URL the dashboard printed (?token=...)"
        if request.method not in ("GET", "HEAD"):
            if not hmac.compare_digest(request.headers.get(CSRF_HEADER, "").encode(), self.csrf.encode()):
                return (
                    403,
                    f"missing or wrong {CSRF_HEADER} header (requests must come from the dashboard's page)",
                )
            origin = request.headers.get("Origin")
            if origin is not None and origin.split("://", 1)[-1] != request.host:
                return 403, f"Origin {origin!r} is not this dashboard"
            if request.headers.get("Sec-Fetch-Site", "same-origin") != "same-origin":
                return 403, "cross-site request refused"
        return None

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self._refusal(request)
        if refusal is not None:
            response: web.StreamResponse = web.Response(status=refusal[0], text=f"refused: {refusal[1]}\n")
        elif self.token is not None and request.query.get("token") and request.method == "GET":
            rest = {k: v for k, v in request.query.items() if k != "token"}
            response = web.HTTPSeeOther(request.rel_url.with_query(rest))
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
        else:
            response = await handler(request)
        if not response.prepared:
            response.headers.update(HEADERS)
        return response
