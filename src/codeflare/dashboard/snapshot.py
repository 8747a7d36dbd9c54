"""What the dashboard's views are computed from: the objects one user may read, by kind.

A :class:`Snapshot` is a plain, immutable-by-convention picture of the API as the user sees it:
objects by kind, which kinds (per namespace) the user may not read, and when it was taken. The
dashboard's store keeps one fed by watches; the notebook widgets build one from list calls
(:func:`read_snapshot`). Every view (:mod:`.work`, :mod:`.queues`, :mod:`.nodes`) is a pure
function of a snapshot, so both front ends show the same thing. This module decides nothing
about how objects are fetched beyond that one list-based reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind

T = TypeVar("T")

#: Every kind a view reads. Kinds a cluster does not serve (machine APIs off OpenShift or
#: Cluster API) simply stay empty.
WATCHED: tuple[Kind, ...] = (
    kinds.RAYCLUSTER,
    kinds.RAYJOB,
    kinds.APPWRAPPER,
    kinds.WORKLOAD,
    kinds.LOCAL_QUEUE,
    kinds.CLUSTER_QUEUE,
    kinds.RESOURCE_FLAVOR,
    kinds.NODE,
    kinds.POD,
    kinds.MACHINE_SET,
    kinds.MACHINE_DEPLOYMENT,
)


@dataclass(frozen=True)
class Snapshot:
    """Objects by kind name (``"RayCluster"``), and what the user was refused, as ``kind -> namespaces``
    (``""`` for cluster scope)."""

    objects: Mapping[str, Sequence[Obj]] = field(default_factory=dict)
    forbidden: Mapping[str, frozenset[str]] = field(default_factory=dict)
    now: float = 0.0
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per snapshot (views that share a derived value, e.g. the pending order,
        derive it once); the result is shared, so callers must not change it."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def of(self, kind: Kind) -> Sequence[Obj]:
        return self.objects.get(kind.kind, ())

    def refused(self, kind: Kind) -> bool:
        """Whether the user could not read ``kind`` at all (cluster scope, or every namespace tried)."""
        return bool(self.forbidden.get(kind.kind)) and not self.objects.get(kind.kind)


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def ref(obj: Mapping[str, Any]) -> tuple[str, str]:
    m = meta(obj)
    return (str(m.get("namespace") or ""), str(m.get("name") or ""))


def read_snapshot(
    kube: Any, namespaces: Iterable[str] = (), kinds_to_read: Sequence[Kind] = WATCHED, now: float = 0.0
) -> Snapshot:
    """A snapshot from one list call per kind with a synchronous :class:`~codeflare.kube.client.Kube`:
    across namespaces when the user may, else in each of ``namespaces``. Kinds the server does
    not serve read as empty; refusals are recorded, never raised."""
    objects: dict[str, list[Obj]] = {}
    forbidden: dict[str, set[str]] = {}
    for kind in kinds_to_read:
        try:
            objects[kind.kind] = kube.list(kind, all_namespaces=True)
            continue
        except errors.Forbidden:
            if not kind.namespaced:
                forbidden.setdefault(kind.kind, set()).add("")
                continue
        except errors.KubeError:
            continue  # not served here (404), or unreachable: the view shows it empty
        for ns in namespaces:
            try:
                objects.setdefault(kind.kind, []).extend(kube.list(kind, ns))
            except errors.Forbidden:
                forbidden.setdefault(kind.kind, set()).add(ns)
            except errors.KubeError:
                continue
    return Snapshot(objects, {k: frozenset(v) for k, v in forbidden.items()}, now)
