"""The SDK's one connection object: credentials plus a Kubernetes client, passed to every call.

``Client.default()`` picks, in order: in-cluster credentials, ``$KUBECONFIG``/``~/.kube/config``,
then local mode. Creating it does no I/O; the first call connects. Close it (or use ``with``)
to release the connection.

Kueue objects are built and read at v1beta2. On a cluster whose Kueue serves only v1beta1
(0.13-0.14) the client speaks v1beta1 instead: which version is served is asked once (``GET
/apis``, cached for the client's life), objects are converted down before a write and up after
a read with :mod:`codeflare.api.kueue_conversion`, so callers only ever see v1beta2 shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeflare.api.kueue import namespace_default_queue

if TYPE_CHECKING:
    from codeflare.kube.client import Kube
    from codeflare.kube.config import Connection
    from codeflare.kube.kinds import Kind

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # best first


class Client:
    """A connection to one Kubernetes API (real or local mode) for SDK calls."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._kube: Kube | None = None
        self._kueue_version: str | None = None

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

    def kueue_version(self) -> str:
        """The Kueue version to speak: v1beta2 unless the cluster serves only v1beta1 (one call, cached).

        A cluster serving neither (no Kueue yet) is spoken to at v1beta2, and asked again next time."""
        if self._kueue_version is None:
            from codeflare.kube.discovery import first_served

            found = first_served(self.kube.api_groups(), KUEUE_GROUP, KUEUE_VERSIONS)
            if found is None:
                return KUEUE_VERSIONS[0]
            self._kueue_version = found
        return self._kueue_version

    def kueue_kind(self, kind: Kind) -> Kind:
        """``kind`` (a v1beta2 Kueue kind) at the version this cluster serves."""
        version = self.kueue_version()
        return kind if version == kind.version else kind.at_version(version)

    def kueue_list(self, kind: Kind, namespace: str | None = None, **selectors: Any) -> list[dict[str, Any]]:
        """List a Kueue kind; items as v1beta2 whatever version the cluster serves."""
        from codeflare.api.kueue_conversion import to_v1beta2

        served = self.kueue_kind(kind)
        items = self.kube.list(served, namespace, **selectors)
        return items if served is kind else [to_v1beta2(item) for item in items]

    def kueue_get(self, kind: Kind, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Read one Kueue object, as v1beta2."""
        from codeflare.api.kueue_conversion import to_v1beta2

        served = self.kueue_kind(kind)
        obj = self.kube.get(served, name, namespace)
        return obj if served is kind else to_v1beta2(obj)

    def kueue_apply(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply a v1beta2 Kueue object (converted down for a v1beta1-only Kueue)."""
        from codeflare.api.kueue_conversion import to_v1beta1, to_v1beta2

        served = self.kueue_kind(kind)
        if served is kind:
            return self.kube.apply(kind, obj)
        return to_v1beta2(self.kube.apply(served, to_v1beta1(obj)))

    def default_local_queue(self, namespace: str) -> str | None:
        """The namespace's default LocalQueue, as the operator picks it (:func:`namespace_default_queue`:
        annotated ``kueue.x-k8s.io/default-queue: "true"``, else named ``default``), if any."""
        from codeflare.kube import errors, kinds

        try:
            queues = self.kueue_list(kinds.LOCAL_QUEUE, namespace)
        except errors.KubeError:
            return None
        return namespace_default_queue(queues)

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
