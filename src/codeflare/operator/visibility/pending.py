"""The pending-workloads answers of Kueue's visibility API, as pure functions of the queue order.

Kueue's ``PendingWorkloadsSummary`` (apis/visibility/v1beta2/types.go): ``items`` of
``PendingWorkload`` (metadata name/namespace/creationTimestamp/ownerReferences, ``priority``,
``localQueueName``, ``positionInClusterQueue``, ``positionInLocalQueue``, both from 0). Options
``limit`` (default 1000, at most 100000) and ``offset`` (default 0), negative values taken as 0
(pkg/visibility/storage/utils.go boundedLimitOffset). The ClusterQueue answer pages over the whole
queue; the LocalQueue answer keeps only that queue's workloads and pages over them
(pending_workloads_cq.go, pending_workloads_lq.go). The order itself comes from the engine; no
I/O, no authorization here. Our one addition: an item's ``metadata.annotations`` carries the
operator's published start-time estimate (``codeflare.dev/estimated-start`` and
``codeflare.dev/waiting-for``) when the Workload has one; annotations are part of ObjectMeta, so
Kueue's own clients (kueuectl, the Go types) read the items unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codeflare.k8s.constants import ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.k8s.types import Obj

GROUP = "visibility.kueue.x-k8s.io"
DEFAULT_LIMIT, MAX_LIMIT = 1000, 100_000  # Kueue's pkg/constants DefaultPendingWorkloadsLimit, Max...


class OptionError(ValueError):
    """A bad ``limit``/``offset`` query parameter (the message names it and the rule)."""


@dataclass(frozen=True)
class PageOptions:
    """Kueue's PendingWorkloadOptions after defaulting and bounding."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> PageOptions:
        """Read ``limit``/``offset``; a value that is not an integer raises :class:`OptionError`."""
        values: dict[str, int] = {}
        for name in ("limit", "offset"):
            text = query.get(name)
            if text is None or text == "":
                continue
            try:
                values[name] = int(text)
            except ValueError:
                raise OptionError(f"{name}: must be an integer, got {text!r}") from None
        limit = values.get("limit", 0) or DEFAULT_LIMIT  # Kueue defaults an unset (0) limit
        return cls(min(max(limit, 0), MAX_LIMIT), max(values.get("offset", 0), 0))


Lookup = Callable[[str], Obj | None]  # workload key -> the cached Workload


def pending_workload(workload: Obj, priority: int, in_cluster_queue: int, in_local_queue: int) -> Obj:
    """One ``PendingWorkload`` item."""
    meta = workload.get("metadata") or {}
    owners = [
        {k: ref[k] for k in ("apiVersion", "kind", "name", "uid") if k in ref}
        for ref in meta.get("ownerReferences") or []
    ]
    item_meta: Obj = {"name": meta.get("name"), "namespace": meta.get("namespace")}
    if meta.get("creationTimestamp"):
        item_meta["creationTimestamp"] = meta["creationTimestamp"]
    if owners:
        item_meta["ownerReferences"] = owners
    annotations = meta.get("annotations") or {}
    published = (ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION)
    estimate = {k: annotations[k] for k in published if k in annotations}
    if estimate:
        item_meta["annotations"] = estimate
    return {
        "metadata": item_meta,
        "priority": priority,
        "localQueueName": str((workload.get("spec") or {}).get("queueName", "")),
        "positionInClusterQueue": in_cluster_queue,
        "positionInLocalQueue": in_local_queue,
    }


def summary(version: str, items: list[Obj]) -> Obj:
    return {"kind": "PendingWorkloadsSummary", "apiVersion": f"{GROUP}/{version}", "metadata": {},
            "items": items}  # fmt: skip


def cluster_queue_items(
    order: Sequence[str], lookup: Lookup, priority_of: Callable[[str], int], options: PageOptions
) -> list[Obj]:
    """The page ``options`` asks of a ClusterQueue whose pending workloads are ``order``."""
    items: list[Obj] = []
    seen_in: dict[tuple[str, str], int] = {}
    for index, key in enumerate(order[: options.offset + options.limit]):
        workload = lookup(key)
        if workload is None:
            continue
        lq = _local_queue(workload)
        position = seen_in.get(lq, 0)
        seen_in[lq] = position + 1
        if index >= options.offset:
            items.append(pending_workload(workload, priority_of(key), index, position))
    return items


def local_queue_items(
    order: Sequence[str],
    lookup: Lookup,
    priority_of: Callable[[str], int],
    local_queue: tuple[str, str],
    options: PageOptions,
) -> list[Obj]:
    """The page ``options`` asks of LocalQueue ``(namespace, name)`` within its ClusterQueue's ``order``."""
    items: list[Obj] = []
    skipped = 0
    for index, key in enumerate(order):
        if len(items) >= options.limit:
            break
        workload = lookup(key)
        if workload is None or _local_queue(workload) != local_queue:
            continue
        if skipped < options.offset:
            skipped += 1
            continue
        items.append(pending_workload(workload, priority_of(key), index, options.offset + len(items)))
    return items


def _local_queue(workload: Obj) -> tuple[str, str]:
    meta: dict[str, Any] = workload.get("metadata") or {}
    return str(meta.get("namespace", "")), str((workload.get("spec") or {}).get("queueName", ""))


def discovery_entries(plural: str, kind: str, namespaced: bool) -> list[Obj]:
    """APIResourceList entries of a queue kind as Kueue's server lists them: the queue itself (no
    verbs: pkg/visibility/storage/cluster_queue.go serves nothing on it) and ``pendingworkloads``."""
    return [
        {"name": plural, "singularName": plural[:-1], "namespaced": namespaced, "kind": kind, "verbs": []},
        {"name": f"{plural}/pendingworkloads", "singularName": "", "namespaced": namespaced,
         "kind": "PendingWorkloadsSummary", "verbs": ["get"]},
    ]  # fmt: skip
