"""Service-account tokens from the TokenRequest API, for local mode and scripts.

:func:`request_token` asks the API server behind a :class:`~codeflare.kube.config.Connection` for
a token of a ServiceAccount (``POST .../serviceaccounts/<name>/token``) through lightkube, like
every other call of this layer, with the connection's credentials and TLS settings; failures are
:mod:`codeflare.kube.errors` types carrying the server's message. :func:`issue_service_account_token`
is the same call for a caller holding a server URL, a bearer token and a CA file. Nothing here
stores the token or writes a kubeconfig; the server side (issuing, authenticating) is the API
server's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeflare.kube import errors
from codeflare.kube.config import Connection, from_token

DEFAULT_EXPIRATION_SECONDS = 3600  # Kubernetes' default for TokenRequest.spec.expirationSeconds


def request_token(
    connection: Connection,
    namespace: str,
    name: str,
    *,
    expiration_seconds: int = DEFAULT_EXPIRATION_SECONDS,
    audiences: tuple[str, ...] = (),
    timeout: float = 15.0,
) -> str:
    """A new token of ServiceAccount ``namespace/name``; the connection must be allowed to create
    ``serviceaccounts/token``. Raises :class:`~codeflare.kube.errors.KubeError` on refusal."""
    import httpx2
    from lightkube import ApiError, Client
    from lightkube.models.authentication_v1 import TokenRequestSpec
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ServiceAccountToken

    request = ServiceAccountToken(
        metadata=ObjectMeta(),
        spec=TokenRequestSpec(audiences=list(audiences), expirationSeconds=expiration_seconds),
    )
    client = Client(connection.config, timeout=httpx2.Timeout(timeout), trust_env=False)
    try:
        answer: Any = client.create(request, name, namespace=namespace)
    except ApiError as exc:
        status = exc.status.to_dict() if getattr(exc, "status", None) is not None else {}
        status.setdefault("code", exc.response.status_code)
        raise errors.from_status(status, kind="ServiceAccount", name=name, namespace=namespace) from exc
    except (OSError, httpx2.HTTPError) as exc:
        raise errors.TemporaryError(
            f"cannot reach the API server: {exc}", kind="ServiceAccount", name=name, namespace=namespace
        ) from exc
    finally:
        client.close()
    token = getattr(getattr(answer, "status", None), "token", None)
    if not isinstance(token, str) or not token:
        raise errors.KubeError(
            "the TokenRequest answer carries no token", kind="ServiceAccount", name=name, namespace=namespace
        )
    return token


def issue_service_account_token(
    server: str,
    token: str,
    namespace: str,
    name: str,
    *,
    ca_file: Path | None = None,
    expiration_seconds: int = DEFAULT_EXPIRATION_SECONDS,
    audiences: tuple[str, ...] = (),
    timeout: float = 15.0,
) -> str:
    """:func:`request_token` against ``server`` with bearer ``token``, verifying TLS with ``ca_file``."""
    connection = from_token(server, token, ca_file=ca_file)
    return request_token(
        connection,
        namespace,
        name,
        expiration_seconds=expiration_seconds,
        audiences=audiences,
        timeout=timeout,
    )
