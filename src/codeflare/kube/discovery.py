"""Which resource serves a kind: ask the API's discovery instead of guessing plurals.

Objects wrapped in an AppWrapper may be of any kind, and a plural cannot be derived from a kind
(NetworkPolicy -> networkpolicies, Ingress -> ingresses, IngressClass -> ingressclasses). A
:class:`Discovery` resolves ``(apiVersion, kind)`` to a :class:`~codeflare.kube.kinds.Kind` from
the kinds this project knows and, for the others, from the group-version's APIResourceList
(``GET /api/v1``, ``/apis/<group>/<version>``), cached per group-version. A miss is looked up
again once the cached list is older than ``refresh_after`` seconds, so a CRD installed later is
found. Errors other than "group-version not served" propagate (the caller retries its reconcile).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind

__all__ = ["Discovery", "ResourceLister", "first_served", "kinds_from_resource_list"]


class ResourceLister(Protocol):
    """What discovery needs of a client (:class:`~codeflare.kube.client.AsyncKube` has it)."""

    async def api_resources(self, api_version: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class _Served:
    kinds: dict[str, Kind]
    fetched_at: float


def kinds_from_resource_list(api_version: str, resources: list[dict[str, Any]]) -> dict[str, Kind]:
    """kind -> Kind for the top-level resources of an APIResourceList (subresources skipped)."""
    group, _, version = api_version.rpartition("/")
    out: dict[str, Kind] = {}
    for resource in resources:
        name, kind = str(resource.get("name", "")), str(resource.get("kind", ""))
        if not name or "/" in name or not kind:
            continue
        out.setdefault(kind, Kind(group, version, kind, name, bool(resource.get("namespaced", True))))
    return out


def first_served(groups: dict[str, list[str]], group: str, versions: tuple[str, ...]) -> str | None:
    """The first of ``versions`` (best first) that ``groups`` (``GET /apis``: group -> versions) serves.

    E.g. Kueue's ("v1beta2", "v1beta1"): v1beta2 on Kueue >= 0.15, v1beta1 on 0.13-0.14."""
    served = groups.get(group) or []
    return next((version for version in versions if version in served), None)


class Discovery:
    """Resolves kinds to resources for one client; share one instance per process."""

    def __init__(
        self,
        client: ResourceLister,
        *,
        refresh_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._refresh_after = refresh_after
        self._clock = clock
        self._served: dict[str, _Served] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def kind_for(self, api_version: str, kind: str) -> Kind | None:
        """The Kind serving ``kind`` in ``api_version``, or None when the API does not serve it."""
        known = kinds.BY_API_KIND.get((api_version, kind))
        if known is not None:
            return known
        if not api_version or not kind:
            return None
        served = self._served.get(api_version)
        if served is not None and (kind in served.kinds or not self._stale(served)):
            return served.kinds.get(kind)
        lock = self._locks.setdefault(api_version, asyncio.Lock())
        async with lock:
            served = self._served.get(api_version)
            if served is None or (kind not in served.kinds and self._stale(served)):
                served = await self._fetch(api_version)
        return served.kinds.get(kind)

    async def kind_of(self, obj: dict[str, Any]) -> Kind | None:
        """:meth:`kind_for` of a manifest's apiVersion and kind."""
        return await self.kind_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    def _stale(self, served: _Served) -> bool:
        return self._clock() - served.fetched_at >= self._refresh_after

    async def _fetch(self, api_version: str) -> _Served:
        try:
            resources = await self._client.api_resources(api_version)
        except errors.NotFound:
            resources = []  # the group-version is not served (yet)
        served = _Served(kinds_from_resource_list(api_version, resources), self._clock())
        self._served[api_version] = served
        return served
