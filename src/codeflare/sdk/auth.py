"""How the SDK authenticates: token + server, a kubeconfig file, in-cluster, or local mode.

Each authentication object's :meth:`login` returns a :class:`~codeflare.sdk.client.Client`
bound to those credentials; the client is then passed to every call (nothing is stored in
module-level state, so two users or two clusters never share credentials by accident).
Names follow codeflare-sdk (``TokenAuthentication``, ``KubeConfigFileAuthentication``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codeflare.sdk.client import Client


@dataclass
class TokenAuthentication:
    """A bearer token for ``server``; TLS is verified with ``ca_cert_path`` unless ``skip_tls``."""

    token: str
    server: str
    skip_tls: bool = False
    ca_cert_path: str | Path | None = None
    namespace: str = "default"

    def login(self) -> Client:
        from codeflare.kube import config

        return Client(
            config.from_token(
                self.server,
                self.token,
                ca_file=self.ca_cert_path,
                insecure=self.skip_tls,
                namespace=self.namespace,
            )
        )


@dataclass
class KubeConfigFileAuthentication:
    """A kubeconfig file (``None``: ``$KUBECONFIG`` or ``~/.kube/config``), optionally one context."""

    kube_config_path: str | Path | None = None
    context: str | None = None

    def login(self) -> Client:
        from codeflare.kube import config

        return Client(config.from_kubeconfig(self.kube_config_path, self.context))


@dataclass
class InClusterAuthentication:
    """The service account of the pod this code runs in (notebooks on the cluster)."""

    def login(self) -> Client:
        from codeflare.kube import config

        return Client(config.in_cluster())


@dataclass
class LocalAuthentication:
    """Local mode's API server (``codeflare local up``), found in ``home`` or ``$CODEFLARE_HOME``."""

    home: str | Path | None = None

    def login(self) -> Client:
        from codeflare.kube import config

        return Client(config.local(self.home))
