"""How the SDK reaches a cluster's Ray: the dashboard's headers and Ray's Jobs client.

A local-mode cluster requires its Ray token (Secret ``<name>-ray-token``, readable by whoever may
read Secrets in the cluster's namespace); it is sent as ``Authorization: Bearer``. A dashboard
behind an OAuth proxy (OpenShift) takes the client's own bearer token in ``Authorization``
instead, and Ray's token, if the cluster has one, in ``X-Ray-Authorization`` (the header Ray reads
behind proxies). Loopback dashboards never get the user's API token. :func:`driver_env` is what
a ``ray.init`` needs (token, client certificate with mTLS). Nothing is printed or kept beyond
the call.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from codeflare.api.mtls import wants_tls
from codeflare.api.ray_auth import token_from_secret, token_secret_name
from codeflare.errors import MissingDependency
from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION
from codeflare.kube import errors, kinds
from codeflare.sdk.client import Client

__all__ = ["dashboard_answers", "dashboard_headers", "driver_env", "job_client_for", "ray_auth_headers"]

_LOOPBACK_PREFIXES = ("http://127.0.0.1", "http://localhost", "https://127.0.0.1", "https://localhost")


def ray_token(client: Client, rc: Mapping[str, Any] | None) -> str | None:
    """The cluster's Ray token, None when it has none (or the caller may not read it)."""
    if rc is None:
        return None
    meta = rc.get("metadata") or {}
    try:
        name = token_secret_name(str(meta.get("name")))
        secret = client.kube.find(kinds.SECRET, name, meta.get("namespace"))
    except errors.Forbidden:
        return None
    return token_from_secret(secret) if secret is not None else None


def ray_auth_headers(client: Client, rc: Mapping[str, Any] | None) -> dict[str, str]:
    """``Authorization: Bearer <Ray token>`` for the cluster (empty when it has no token)."""
    token = ray_token(client, rc)
    return {"Authorization": f"Bearer {token}"} if token else {}


def dashboard_headers(client: Client, url: str, rc: Mapping[str, Any] | None) -> dict[str, str]:
    """Every header a request to the cluster's dashboard at ``url`` needs."""
    token = ray_token(client, rc)
    user_token = client.token()
    if user_token and not url.startswith(_LOOPBACK_PREFIXES):
        headers = {"Authorization": f"Bearer {user_token}"}
        if token:
            headers["X-Ray-Authorization"] = f"Bearer {token}"
        return headers
    return {"Authorization": f"Bearer {token}"} if token else {}


def dashboard_answers(client: Client, url: str, rc: Mapping[str, Any] | None) -> bool:
    """Whether the dashboard answers ``/api/version`` with 200 (with the credentials it needs)."""
    request = urllib.request.Request(f"{url}/api/version", headers=dashboard_headers(client, url, rc))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if url.startswith(
        _LOOPBACK_PREFIXES
    ) else urllib.request.build_opener()
    try:
        with opener.open(request, timeout=3) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def job_client_for(client: Client, url: str, rc: Mapping[str, Any] | None = None) -> Any:
    """Ray's ``JobSubmissionClient`` for the dashboard at ``url`` of cluster ``rc``."""
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError as exc:
        raise MissingDependency("Ray is needed for the Jobs client: pip install 'codeflare[local]'") from exc
    return JobSubmissionClient(url, headers=dashboard_headers(client, url, rc) or None)


def driver_env(
    client: Client, rc: Mapping[str, Any], tls_directory: str | None = None
) -> dict[str, str]:
    """The environment a ``ray.init(address=...)`` against cluster ``rc`` needs, to set before
    Ray is imported: the cluster's token (``RAY_AUTH_MODE=token``), and with mTLS (a head template
    asking for ``RAY_USE_TLS``) a client certificate minted from the cluster CA into
    ``tls_directory`` (:func:`codeflare.sdk.tls.generate_cert`). On a local-mode (loopback)
    cluster it also keeps the driver's own address loopback, as the cluster's processes keep theirs."""
    from codeflare.sdk.tls import generate_cert, tls_env

    meta = rc.get("metadata") or {}
    env: dict[str, str] = {}
    token = ray_token(client, rc)
    if token:
        env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
    if wants_tls(rc):
        directory = generate_cert(str(meta.get("name")), meta.get("namespace"), tls_directory, client)
        env.update(tls_env(directory))
    url = str((meta.get("annotations") or {}).get(DASHBOARD_URL_ANNOTATION, ""))
    if url.startswith(_LOOPBACK_PREFIXES):
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    return env

