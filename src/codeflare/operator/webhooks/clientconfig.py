"""How the API server reaches the operator's HTTPS servers: by URL (local mode) or by Service.

Three registrations name the operator: the admission webhook configurations, our Kueue CRDs'
conversion webhook and the aggregated APIServices (visibility, forecast). In local mode the
embedded API server runs on the operator's host and calls ``url: https://<bind host>:<port>``;
on a real cluster kube-apiserver calls a Service in front of the operator's pod
(``webhook.service``). :func:`client_config` is the one place that chooses; :func:`service_hosts`
are the names the serving certificates must carry for the Service mode. This module only builds
references; it neither listens nor applies anything.
"""

from __future__ import annotations

from typing import Literal

from codeflare.k8s.types import Obj
from codeflare.operator.config import WebhookConfig

Server = Literal["webhook", "visibility", "forecast"]


def client_config(
    settings: WebhookConfig, namespace: str, server: Server, *, url: str = "", path: str | None = None
) -> Obj:
    """``{"service": {namespace, name, port[, path]}}`` when ``settings.service`` is set (its
    namespace, or else the operator's ``namespace``), else ``{"url": url}``.

    An APIService's ``spec.service`` takes no path: call it with ``path=None``."""
    service = settings.service
    if service is None:
        if not url:
            raise ValueError(f"no URL for the {server} server and no webhook.service to name instead")
        return {"url": url}
    ports = {
        "webhook": service.port,
        "visibility": service.visibility_port,
        "forecast": service.forecast_port,
    }
    reference: Obj = {
        "namespace": service.namespace or namespace,
        "name": service.name,
        "port": ports[server],
    }
    if path is not None:
        reference["path"] = path
    return {"service": reference}


def listen_port(settings: WebhookConfig, server: Literal["visibility", "forecast"]) -> int:
    """The port an aggregated API listens on: its Service's port, or 0 (any free one) by URL."""
    service = settings.service
    if service is None:
        return 0
    return service.visibility_port if server == "visibility" else service.forecast_port


def service_hosts(settings: WebhookConfig, namespace: str) -> list[str]:
    """The DNS names kube-apiserver verifies when it calls ``settings.service`` (none by URL)."""
    service = settings.service
    if service is None:
        return []
    base = f"{service.name}.{service.namespace or namespace}.svc"
    return [base, f"{base}.cluster.local"]
