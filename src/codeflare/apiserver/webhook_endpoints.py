"""Where the API server's own outgoing calls go: a webhook ``clientConfig`` to a URL and a TLS context.

Admission webhooks, CRD conversion webhooks (and aggregated API services) name their backend the
same way, by ``url`` or by ``service {namespace, name, path, port}`` plus a ``caBundle``. The
service form is resolved for local mode only: to ``https://127.0.0.1:<port><path>`` when the
Service carries the annotation ``codeflare.dev/loopback-port: "<port>"``, or when an Endpoints
object of the same name lists a loopback address (its port is used); TLS then checks the
certificate for ``<service>.<namespace>.svc``. It makes no call itself.
"""

from __future__ import annotations

import base64
import binascii
import ssl
from typing import Any

from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.constants import LOOPBACK_PORT_ANNOTATION

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


class EndpointError(Exception):
    """A clientConfig names no reachable backend, or its caBundle is unusable."""


def ssl_context(bundle: str, cache: dict[str, ssl.SSLContext]) -> ssl.SSLContext:
    """A client TLS context trusting ``bundle`` (base64 PEM), else the system roots; cached by bundle."""
    ctx = cache.get(bundle)
    if ctx is None:
        ctx = ssl.create_default_context()
        if bundle:
            try:
                ctx = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
            except (ValueError, binascii.Error, ssl.SSLError) as exc:
                raise EndpointError(f"caBundle holds no usable certificate: {exc}") from exc
        cache[bundle] = ctx
    return ctx


def resolve(store: ObjectStore, url: str, service: dict[str, Any]) -> tuple[str, str | None]:
    """(URL to post to, TLS server name to check when it differs from the URL's host)."""
    if url:
        return url, None
    namespace, name = service.get("namespace", ""), service.get("name", "")
    path, port = service.get("path") or "/", service.get("port") or 443
    found = store.get("core/services", namespace, name)
    if found is None:
        raise EndpointError(f'service "{namespace}/{name}" not found')
    local_port = _loopback_port(store, found, port)
    if local_port is None:
        raise EndpointError(
            f'service "{namespace}/{name}" has no loopback endpoint (annotate it with '
            f"{LOOPBACK_PORT_ANNOTATION} or give it Endpoints on 127.0.0.1)"
        )
    return f"https://127.0.0.1:{local_port}{path}", f"{name}.{namespace}.svc"


def _loopback_port(store: ObjectStore, service: dict[str, Any], port: int) -> int | None:
    meta = service.get("metadata") or {}
    annotated = (meta.get("annotations") or {}).get(LOOPBACK_PORT_ANNOTATION)
    if annotated is not None:
        try:
            value = int(annotated)
        except (TypeError, ValueError):
            return None
        return value if 1 <= value <= 65535 else None
    endpoints = store.get("core/endpoints", meta.get("namespace", ""), meta.get("name", ""))
    if endpoints is None:
        return None
    port_name = ""
    for entry in (service.get("spec") or {}).get("ports") or []:
        if isinstance(entry, dict) and entry.get("port") == port:
            port_name = str(entry.get("name") or "")
    for subset in endpoints.get("subsets") or []:
        if not isinstance(subset, dict):
            continue
        ips = [a.get("ip") for a in subset.get("addresses") or [] if isinstance(a, dict)]
        if not any(ip in _LOOPBACK for ip in ips):
            continue
        listed = subset.get("ports") or []
        ports = [p for p in listed if isinstance(p, dict) and isinstance(p.get("port"), int)]
        named = [p for p in ports if str(p.get("name") or "") == port_name]
        chosen = named or (ports if len(ports) == 1 else [])
        if chosen:
            return int(chosen[0]["port"])
    return None
