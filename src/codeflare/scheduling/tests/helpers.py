"""Small builders shared by the scheduling tests."""

from __future__ import annotations

from dataclasses import fields

from codeflare.scheduling import (
    AdmissionEngine,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    PodSet,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)


def cq(
    name: str,
    quotas: dict[str, dict[str, tuple]] | None = None,
    *,
    resources: tuple[str, ...] = ("cpu",),
    **kwargs: object,
) -> ClusterQueue:
    """A queue with one resource group; quotas: flavor -> resource -> (nominal, borrow, lend)."""
    quotas = quotas if quotas is not None else {"default": {"cpu": ("10",)}}
    flavors = []
    for flavor, per_resource in quotas.items():
        rqs = []
        for resource in resources:
            spec = per_resource.get(resource, ("0",))
            nominal, borrow, lend = (*spec, None, None)[:3]
            rqs.append(ResourceQuota(resource, nominal, borrow, lend))
        flavors.append(FlavorQuotas(flavor, tuple(rqs)))
    return ClusterQueue(name, (ResourceGroup(resources, tuple(flavors)),), **kwargs)  # type: ignore[arg-type]


def wl(
    name: str,
    queue: str = "lq",
    cpu: str = "1",
    *,
    ns: str = "ns",
    count: int = 1,
    priority: int = 0,
    created: float = 0.0,
    extra: dict[str, str] | None = None,
    active: bool = True,
) -> Workload:
    requests = {"cpu": cpu, **(extra or {})}
    return Workload(ns, name, queue, (PodSet("main", count, requests),), priority, created, active)  # type: ignore[arg-type]


def engine_with(
    *queues: ClusterQueue, flavors: tuple[str, ...] = ("default",), **kwargs: object
) -> AdmissionEngine:
    """An engine with flavors, the given queues, and one LocalQueue "lq-<cq>" per queue in "ns"."""
    engine = AdmissionEngine(**kwargs)  # type: ignore[arg-type]
    for flavor in flavors:
        engine.add_resource_flavor(ResourceFlavor(flavor))
    for queue in queues:
        engine.add_cluster_queue(queue)
        engine.add_local_queue(LocalQueue("ns", f"lq-{queue.name}", queue.name))
    return engine


def assert_plain(record: object) -> None:
    """``record`` (made by ``records.made`` on a hot path) equals the plain construction from its
    fields, every field present."""
    plain = type(record)(**{f.name: getattr(record, f.name) for f in fields(record)})  # type: ignore[arg-type]
    assert record == plain and hash(record) == hash(plain)
    assert record.__dict__ == plain.__dict__
