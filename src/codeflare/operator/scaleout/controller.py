"""The scale-out controller (InstaScale's role): node groups grow for workloads short on nodes.

It watches Workloads, ResourceFlavors, Nodes, Pods and the provider's groups (MachineSets or
MachineDeployments, found through discovery when ``instascale.provider`` is ``auto``). A Workload
with QuotaReserved=False whose ``codeflare.dev/capacity-shortfalls`` annotation (the engine's
structured shortfalls, written by the queueing controller) names node capacity only is fed, with
every group, to
:func:`codeflare.scheduling.scaleout.plan_scale_out`; each decision is one write of the group:
new ``spec.replicas`` and the ``codeflare.dev/scale-out-requests`` annotation together, so a
crash can never separate them and a restart reads the requests back instead of asking twice.
Each new node of a group is annotated ``codeflare.dev/reserved-for`` with the workload it was
brought up for (oldest request first, nodes made after the request only) until that workload is
admitted, so the capacity check never lets another workload take it meanwhile; nodes are
normally reserved as they register, before they turn Ready. The queueing controller admits the
workload once the new nodes are Ready. When a recorded
workload finishes or is deleted the request is marked released; ``scaleInDelay`` later its idle
nodes are marked for deletion the provider's way and the replicas lowered. The controller writes
a ``ScaleOut`` Workload condition (the queueing controller appends it to the pending reason; it
turns False, reason ``Admitted``, once the workload is admitted) and Events on the workload and
the group. It never writes QuotaReserved and never admits anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true, set_condition
from codeflare.k8s.constants import (
    CAPACITY_SHORTFALLS_ANNOTATION,
    RESERVED_FOR_ANNOTATION,
)
from codeflare.k8s.ownerrefs import owner_references
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.k8s.workqueue import ReconcileQueue
from codeflare.kube import errors, kinds
from codeflare.kube.informer import Informer, OwnWrites
from codeflare.kube.kinds import Kind
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing import convert
from codeflare.operator.scaleout import groups as provider
from codeflare.operator.scaleout.groups import PROVIDERS, Provider
from codeflare.operator.scaleout.removal import finished, removable
from codeflare.scheduling import decode_shortfalls
from codeflare.scheduling.scaleout import (
    CapacityShortfall,
    GroupNode,
    NodeGroup,
    PendingWorkload,
    RecordedRequest,
    ScaleIn,
    ScaleOutPlan,
    ScaleRequest,
    capacity_shortfalls,
    describe_request,
    plan_reservations,
    plan_scale_in,
    plan_scale_out,
)

log = logging.getLogger(__name__)

CONDITION = "ScaleOut"
PASS = "scale-out"  # the work queue's only key
COALESCE_SECONDS = 0.05
# informers besides the providers' groups (deploy/'s RBAC grants list+watch on each)
WATCHED_KINDS = (kinds.WORKLOAD, kinds.RESOURCE_FLAVOR, kinds.NODE, kinds.POD)


def register(ctx: OperatorContext) -> list[Awaitable[Any]]:
    """Entry point used by the operator: nothing at all when ``instascale.enabled`` is false."""
    if ctx.config.instascale.enabled is False:
        log.info("instascale disabled: no node group is touched")
        return []
    return [ScaleOutController(ctx).run()]


async def served_providers(ctx: OperatorContext) -> list[Provider]:
    """The configured providers whose API the server serves (discovery, ``GET /apis``)."""
    wanted = ctx.config.instascale.provider
    candidates = list(PROVIDERS.values()) if wanted == "auto" else [PROVIDERS[wanted]]
    groups = await ctx.kube.api_groups()
    return [p for p in candidates if p.kind.version in groups.get(p.kind.group, [])]


class ScaleOutController:
    """Scale-out for capacity-pending workloads and scale-in once they are gone."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.cfg = ctx.config.instascale
        self.providers: list[Provider] = []
        self.informers: dict[Kind, Informer] = {}
        # One key: every pass looks at everything. Events arm a pass 50 ms later (a burst of
        # events makes one pass); a pass asks for the next one when a delay of its runs out.
        self.queue: ReconcileQueue[str] = ReconcileQueue(
            self._pass, workers=1, max_delay=1.0, expected_errors=(errors.KubeError,), name="scale-out")
        ctx.metrics.count_reconciles("scaleout", self.queue)
        self.own = OwnWrites()  # our writes, until the caches have them

    # -- lifecycle -----------------------------------------------------------------------------------
    async def run(self) -> None:
        self.providers = await self._discover()
        if not self.providers:
            await asyncio.Event().wait()  # off for good; returning would stop the operator
        for kind in [*WATCHED_KINDS, *(p.kind for p in self.providers)]:
            self.informers[kind] = self.ctx.informers.subscribe(kind, self._handler(kind))
        self.ctx.mark_ready("scaleout", False)
        await asyncio.gather(*(inf.synced.wait() for inf in self.informers.values()))
        self.ctx.mark_ready("scaleout")
        log.info("scale-out controller synced; providers %s", [p.kind.kind for p in self.providers])
        self.queue.add(PASS)
        await self.queue.run()

    async def _discover(self) -> list[Provider]:
        while True:
            try:
                providers = await served_providers(self.ctx)
                break
            except errors.KubeError as exc:
                log.warning("instascale: discovery failed (%s); retrying", exc)
                await asyncio.sleep(1)
        if not providers:
            log.info(
                "instascale: no node provider API served (provider %s); scale-out stays off",
                self.cfg.provider,
            )
        return providers

    def _handler(self, kind: Kind) -> Callable[[str, Obj, Obj | None], None]:
        def changed(event: str, obj: Obj, old: Obj | None) -> None:
            self.own.seen(kind, event, obj)  # a deleted object must not live on in the overlay
            self.queue.add(PASS, delay=COALESCE_SECONDS)

        return changed

    async def _pass(self, key: str) -> float:
        return max(COALESCE_SECONDS, await self.reconcile())

    # -- views over the caches -------------------------------------------------------------------
    def _objects(self, kind: Kind) -> dict[tuple[str, str], Obj]:
        """The cache of ``kind`` with our own writes laid over until the cache has caught up."""
        return self.own.overlay(kind, self.informers[kind].cache)

    def _groups(self) -> list[tuple[Provider, Obj]]:
        out = []
        for p in self.providers:
            for _, obj in sorted(self._objects(p.kind).items()):
                if not (obj.get("metadata") or {}).get("deletionTimestamp"):
                    out.append((p, obj))
        return out

    def _workloads(self) -> dict[str, Obj]:
        return {f"{ns}/{name}": obj for (ns, name), obj in self._objects(kinds.WORKLOAD).items()}

    # -- one pass --------------------------------------------------------------------------------
    async def reconcile(self) -> float:
        """Release, scale out, explain, scale in; returns seconds until a delay runs out (max 1)."""
        now = self.ctx.clock()
        workloads = self._workloads()
        await self._release(workloads, now)
        groups = self._groups()
        node_groups = {provider.group_name(obj): provider.to_node_group(obj) for _, obj in groups}
        records = [r for _, obj in groups for r in provider.recorded(obj)]
        pending = self._pending(workloads)
        plan = plan_scale_out(pending, list(node_groups.values()), records, self.cfg.max_scaleout_allowed)
        await self._scale_out(plan, groups, workloads, now)
        await self._explain(plan, node_groups, workloads)
        await self._reserve(self._groups(), workloads)
        return await self._scale_in(groups, workloads, now)

    def _pending(self, workloads: Mapping[str, Obj]) -> list[PendingWorkload]:
        flavors = {
            name: dict((obj.get("spec") or {}).get("nodeLabels") or {})
            for (_, name), obj in self.informers[kinds.RESOURCE_FLAVOR].cache.items()
        }
        ranked: list[tuple[tuple[int, float, str], PendingWorkload]] = []
        for key, obj in workloads.items():
            if (obj.get("status") or {}).get("admission") or finished(obj):
                continue
            reserved = find_condition(conditions_of(obj), "QuotaReserved") or {}
            if reserved.get("status") != "False":
                continue
            shortfalls = _capacity_shortfalls(key, obj)
            if shortfalls is None:
                continue
            try:
                model = convert.workload(obj)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("workload %s: cannot read its pod sets: %s", key, exc)
                continue
            order = (-model.priority, model.creation_time, key)
            ranked.append((order, PendingWorkload(key, model.pod_sets, shortfalls, flavors)))
        return [wl for _, wl in sorted(ranked, key=lambda item: item[0])]

    # -- release ---------------------------------------------------------------------------------
    async def _release(self, workloads: Mapping[str, Obj], now: float) -> None:
        """Mark the requests of finished or deleted workloads released (the scale-in delay starts)."""
        for p, obj in self._groups():
            gone = [
                key
                for key, entry in provider.read_requests(obj).items()
                if not entry.get("releasedAt") and (key not in workloads or finished(workloads[key]))
            ]
            if not gone:
                continue

            def change(fresh: Obj, gone: list[str] = gone) -> Obj | None:
                return provider.release(fresh, gone, format_rfc3339(now))

            meta = obj["metadata"]
            written = await self.ctx.kube.update(p.kind, meta["name"], meta.get("namespace"), change)
            self.own.remember(p.kind, written)
            log.info(
                "%s: scale-out requests of %s released; scale-in after %ss",
                p.kind.ref(meta["name"], meta.get("namespace")),
                ", ".join(gone),
                self.cfg.scale_in_delay.total_seconds(),
            )

    # -- scale-out -------------------------------------------------------------------------------
    async def _scale_out(
        self, plan: ScaleOutPlan, groups: list[tuple[Provider, Obj]], workloads: Mapping[str, Obj], now: float
    ) -> None:
        by_name = {provider.group_name(obj): (p, obj) for p, obj in groups}
        for name in sorted(plan.replicas):
            p, obj = by_name[name]
            asks = [r for r in plan.requests.values() if r.group == name]
            meta = obj["metadata"]
            before: list[int] = []

            owners = {r.workload: _owner(workloads.get(r.workload)) for r in asks}

            def change(fresh: Obj, asks: list[ScaleRequest] = asks, before: list[int] = before,
                       owners: dict[str, dict[str, str]] = owners) -> Obj | None:
                before[:] = [provider.replicas_of(fresh)]
                return provider.request_nodes(fresh, asks, format_rfc3339(now), owners)

            written = await self.ctx.kube.update(p.kind, meta["name"], meta.get("namespace"), change)
            if written is None or not before:
                continue
            self.own.remember(p.kind, written)
            after = int((written.get("spec") or {}).get("replicas") or 0)
            group = provider.to_node_group(written)
            for ask in asks:
                text = (
                    f"{describe_request(ask, group)} for workload {ask.workload} "
                    f"(replicas {before[0]} -> {after})"
                )
                log.info("%s: scale-out: %s", p.kind.ref(meta["name"], meta.get("namespace")), text)
                await self.ctx.events.record(written, "ScaleOut", text)
                wl = workloads.get(ask.workload)
                if wl is not None:
                    await self.ctx.events.record(
                        wl, "ScaleOut", f"requested {ask.nodes} new nodes of {group.title}"
                    )

    async def _explain(
        self, plan: ScaleOutPlan, groups: Mapping[str, NodeGroup], workloads: Mapping[str, Obj]
    ) -> None:
        """The ScaleOut condition each capacity-pending workload carries (the queueing reason cites it)."""
        for key, request in {**plan.waiting, **plan.requests}.items():
            text = describe_request(request, groups.get(request.group))
            await self._condition(workloads.get(key), "True", "NodesRequested", text)
        for key, reason in plan.refused.items():
            await self._condition(workloads.get(key), "False", "NotScaledOut", f"not scaled out: {reason}")
        for wl in workloads.values():
            if (wl.get("status") or {}).get("admission") and is_condition_true(conditions_of(wl), CONDITION):
                await self._condition(wl, "False", "Admitted", "admitted: no longer waiting for nodes")

    async def _condition(self, wl: Obj | None, status: str, reason: str, message: str) -> None:
        if wl is None:
            return
        now = format_rfc3339(self.ctx.clock())
        if _with_condition(copy.deepcopy(wl), status, reason, message, now) is None:
            return

        def change(fresh: Obj) -> Obj | None:
            return _with_condition(fresh, status, reason, message, now)

        meta = wl["metadata"]
        with contextlib.suppress(errors.NotFound):
            written = await self.ctx.kube.update(
                kinds.WORKLOAD, meta["name"], meta.get("namespace"), change, status=True
            )
            self.own.remember(kinds.WORKLOAD, written)

    # -- reservations ----------------------------------------------------------------------------
    async def _reserve(self, groups: list[tuple[Provider, Obj]], workloads: Mapping[str, Obj]) -> None:
        """Nodes brought up for a workload are its capacity alone until it is admitted: the node
        annotation ``codeflare.dev/reserved-for`` that the queueing controller's capacity check reads."""
        waiting = {
            key
            for key, wl in workloads.items()
            if not (wl.get("status") or {}).get("admission") and not finished(wl)
        }
        nodes = self._objects(kinds.NODE)
        for p, obj in groups:
            view = _group_nodes(provider.nodes_of(provider.to_node_group(obj), nodes))
            for name, key in sorted(plan_reservations(provider.recorded(obj), waiting, view).items()):
                body = {"metadata": {"annotations": {RESERVED_FOR_ANNOTATION: key}}}
                with contextlib.suppress(errors.NotFound):
                    self.own.remember(kinds.NODE, await self.ctx.kube.patch(kinds.NODE, name, body))
                    where = p.kind.ref(obj["metadata"]["name"], obj["metadata"].get("namespace"))
                    log.info("node %s of %s: %s", name, where,
                             f"reserved for workload {key}" if key else "reservation lifted")

    # -- scale-in --------------------------------------------------------------------------------
    async def _scale_in(
        self, groups: list[tuple[Provider, Obj]], workloads: Mapping[str, Obj], now: float
    ) -> float:
        delay = self.cfg.scale_in_delay.total_seconds()
        wait = 1.0
        nodes = self._objects(kinds.NODE)  # with our own deletion marks, even before the cache has them
        for p, obj in groups:
            records = provider.recorded(obj)
            released = [r for r in records if r.released_at is not None]
            if not released:
                continue
            for r in released:
                assert r.released_at is not None
                if now - r.released_at < delay:
                    wait = min(wait, r.released_at + delay - now)
            group = provider.to_node_group(obj)
            owners = [provider.read_requests(obj).get(r.workload, {}).get("owner") or {} for r in released]
            idle = removable(
                group,
                provider.nodes_of(group, nodes),
                owners,
                pods=self.informers[kinds.POD].cache.values(),
                flavors=self.informers[kinds.RESOURCE_FLAVOR].cache.values(),
                workloads=self.informers[kinds.WORKLOAD].cache.values(),
                nodes=self.informers[kinds.NODE].cache.values(),
            )
            for decision in plan_scale_in(records, {group.name: idle}, now, delay):
                await self._give_back(p, obj, group, decision, records, workloads)
        return wait

    async def _give_back(
        self,
        p: Provider,
        obj: Obj,
        group: NodeGroup,
        decision: ScaleIn,
        records: list[RecordedRequest],
        workloads: Mapping[str, Obj],
    ) -> None:
        meta = obj["metadata"]
        where = p.kind.ref(meta["name"], meta.get("namespace"))
        for node in decision.remove:
            await self._mark_for_deletion(p, node, str(meta.get("namespace") or ""))
        considered = {r.workload for r in records}
        count = len(decision.remove)
        before: list[int] = []

        def change(fresh: Obj) -> Obj | None:
            before[:] = [provider.replicas_of(fresh)]
            return provider.give_back(fresh, decision.remaining, considered, count)

        written = await self.ctx.kube.update(p.kind, meta["name"], meta.get("namespace"), change)
        if written is None:
            return
        self.own.remember(p.kind, written)
        held = {r.workload: r.nodes for r in records}
        given_back = sorted(k for k in considered if decision.remaining.get(k, 0) < held[k])
        text = (
            f"removed {count} node{'s' if count != 1 else ''} ({', '.join(decision.remove)}) "
            f"of {group.title} "
            f"(replicas {before[0] if before else '?'} -> {(written.get('spec') or {}).get('replicas')}) "
            f"given back by {', '.join(given_back) or 'released workloads'}"
        )
        log.info("%s: scale-in: %s", where, text)
        await self.ctx.events.record(written, "ScaleIn", text)
        for key in given_back:
            wl = workloads.get(key)
            if wl is not None:
                await self.ctx.events.record(wl, "ScaleIn", text)

    async def _mark_for_deletion(self, p: Provider, node_name: str, namespace: str) -> None:
        """Annotate the node's Machine (when it names one) and the Node the provider's way."""
        node = self._objects(kinds.NODE).get(("", node_name)) or {}
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        body = {"metadata": {"annotations": {p.delete_annotation: "true"}}}
        machine = str(annotations.get(p.node_machine_annotation) or "")
        if machine:
            ns, _, name = machine.rpartition("/")
            with contextlib.suppress(errors.KubeError):
                await self.ctx.kube.patch(p.machine_kind, name, body, ns or namespace)
        if annotations.get(p.delete_annotation) != "true":
            with contextlib.suppress(errors.NotFound):
                self.own.remember(kinds.NODE, await self.ctx.kube.patch(kinds.NODE, node_name, body))


def _capacity_shortfalls(key: str, workload: Obj) -> tuple[CapacityShortfall, ...] | None:
    """The engine's structured shortfalls the queueing controller recorded on the Workload
    (annotation ``codeflare.dev/capacity-shortfalls``), when node capacity alone is short."""
    text = ((workload.get("metadata") or {}).get("annotations") or {}).get(CAPACITY_SHORTFALLS_ANNOTATION)
    if not text:
        return None
    try:
        return capacity_shortfalls(decode_shortfalls(str(text)))
    except ValueError as exc:
        log.warning("workload %s: unreadable %s: %s", key, CAPACITY_SHORTFALLS_ANNOTATION, exc)
        return None


def _group_nodes(members: list[Obj]) -> list[GroupNode]:
    """The group's nodes as the reservation plan sees them: name, creation time, reservation."""
    return [
        GroupNode(
            n["metadata"]["name"],
            epoch_seconds(n["metadata"].get("creationTimestamp")) or 0.0,
            ((n["metadata"].get("annotations") or {}).get(RESERVED_FOR_ANNOTATION)) or None,
        )
        for n in members
    ]


def _with_condition(workload: Obj, status: str, reason: str, message: str, now: str) -> Obj | None:
    """``workload`` with its ScaleOut condition set; None when it already says the same."""
    current = find_condition(conditions_of(workload), CONDITION) or {}
    if current.get("status") == status and current.get("message") == message:
        return None
    conditions = conditions_of(workload)
    set_condition(conditions, CONDITION, status, reason, message, now)
    workload.setdefault("status", {})["conditions"] = conditions
    return workload


def _owner(wl: Obj | None) -> dict[str, str]:
    """The job that owns a workload (its pods carry the job's name), for telling its pods apart."""
    meta = (wl or {}).get("metadata") or {}
    for ref in owner_references(wl or {}):
        return {
            "kind": str(ref.get("kind", "")),
            "name": str(ref.get("name", "")),
            "namespace": meta.get("namespace", ""),
        }
    return {}
