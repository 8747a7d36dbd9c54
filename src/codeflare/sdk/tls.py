"""Client certificates for ``ray.init`` against a RayCluster that uses mutual TLS.

:func:`generate_cert` reads the cluster's CA Secret (``<name>-ca-secret-mtls``, made by the
operator; ``ca-secret-<name>`` for clusters of earlier versions) through the SDK's client, mints a
certificate from it (usable as client and server, as Ray's drivers need) and writes ``ca.crt``,
``tls.crt`` and ``tls.key`` into a directory; :func:`export_env` sets the environment variables Ray reads
(``RAY_USE_TLS``, ``RAY_TLS_SERVER_CERT``, ``RAY_TLS_SERVER_KEY``, ``RAY_TLS_CA_CERT``).
Nothing is printed; a missing Secret raises :class:`~codeflare.errors.CodeFlareError`.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

from codeflare.errors import CodeFlareError
from codeflare.k8s.files import write_private, write_public
from codeflare.sdk.client import Client

__all__ = ["export_env", "generate_cert", "tls_env"]


def generate_cert(
    cluster_name: str,
    namespace: str | None = None,
    directory: str | Path | None = None,
    client: Client | None = None,
) -> Path:
    """Write CA, client key and certificate for ``cluster_name``; returns the directory."""
    from codeflare.api.mtls import ca_secret_name, client_certificate, legacy_ca_secret_name
    from codeflare.kube import errors, kinds

    client = client or Client.default()
    namespace = namespace or client.namespace
    name = ca_secret_name(cluster_name)
    try:
        secret = client.kube.find(kinds.SECRET, name, namespace) or client.kube.get(
            kinds.SECRET, legacy_ca_secret_name(cluster_name), namespace
        )
    except errors.KubeError as exc:
        raise CodeFlareError(
            f"cannot read the CA Secret {namespace}/{name} of cluster {cluster_name}: {exc}"
        ) from exc
    try:
        material = client_certificate(secret, common_name=f"ray-client-{cluster_name}")
    except ValueError as exc:
        raise CodeFlareError(str(exc)) from exc
    target = Path(directory) if directory else Path.home() / ".codeflare" / "tls" / namespace / cluster_name
    write_public(target / "ca.crt", material.ca_pem)
    write_public(target / "tls.crt", material.cert_pem)
    write_private(target / "tls.key", material.key_pem)
    return target


def tls_env(directory: str | Path) -> dict[str, str]:
    """Ray's TLS variables pointing at the files :func:`generate_cert` wrote."""
    base = Path(directory)
    return {
        "RAY_USE_TLS": "1",
        "RAY_TLS_SERVER_CERT": str(base / "tls.crt"),
        "RAY_TLS_SERVER_KEY": str(base / "tls.key"),
        "RAY_TLS_CA_CERT": str(base / "ca.crt"),
    }


def export_env(directory: str | Path, environ: MutableMapping[str, str] | None = None) -> None:
    """Set Ray's TLS variables (in ``os.environ`` unless another mapping is given) before ray.init."""
    (os.environ if environ is None else environ).update(tls_env(directory))
