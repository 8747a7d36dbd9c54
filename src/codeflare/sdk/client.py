"""The SDK's one connection object: credentials plus a Kubernetes client, passed to every call.

``Client.default()`` picks, in order: in-cluster credentials, ``$KUBECONFIG``/``~/.kube/config``,
then local mode. Creating it does no I/O; the first call connects. Close it (or use ``with``)
to release the connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codeflare.api.kueue import is_default_local_queue

if TYPE_CHECKING:
    from codeflare.kube.client import Kube
    from codeflare.kube.config import Connection


class Client:
    """A connection to one Kubernetes API (real or local mode) for SDK calls."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._kube: Kube | None = None

    @classmethod
    def default(cls, kubeconfig: str | Path | None = None) -> Client:
        from codeflare.kube import config

        return cls(config.auto(kubeconfig))

    @property
    def namespace(self) -> str:
        return self.connection.namespace

    @property
    def kube(self) -> Kube:
        if self._kube is None:
            from codeflare.kube.client import Kube

            self._kube = Kube(self.connection, field_manager="codeflare")
        return self._kube

    def default_local_queue(self, namespace: str) -> str | None:
        """The LocalQueue annotated ``kueue.x-k8s.io/default-queue: "true"`` in ``namespace``, if any."""
        from codeflare.kube import errors, kinds

        try:
            queues = self.kube.list(kinds.LOCAL_QUEUE, namespace)
        except errors.KubeError:
            return None
        for queue in queues:
            if is_default_local_queue(queue):
                return str(queue["metadata"]["name"])
        return None

    def token(self) -> str | None:
        """The bearer token of this connection, if it uses one (for the Ray dashboard's OAuth proxy)."""
        user = getattr(self.connection.config, "user", None)
        token = getattr(user, "token", None)
        return str(token) if token else None

    def close(self) -> None:
        if self._kube is not None:
            self._kube.close()
            self._kube = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.connection.description or 'connection'}, namespace={self.namespace!r})"
