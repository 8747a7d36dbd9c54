"""The AppWrapper controller: observes AppWrappers, their components and pods; acts; writes status.

It reads from the operator's shared informers (AppWrappers, and pods, Jobs, Deployments,
StatefulSets, RayClusters and RayJobs), whose events only name the AppWrapper to look at (children
by their ``workload.codeflare.dev/appwrapper`` label). A :class:`ReconcileQueue` runs the
level-triggered reconcile: read the AppWrapper, observe, :func:`lifecycle.decide`, carry out the
action, write status with the read's resourceVersion (a 409 means: read again, decide again). Its
own writes are remembered until the watch reports them, so the next pass does not act on the
older copy. Deletion holds the ``workload.codeflare.dev/finalizer`` until every component is gone.
Decisions themselves are in :mod:`lifecycle`; nothing is kept only in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from codeflare.k8s.constants import APPWRAPPER_CONTROLLER, APPWRAPPER_FINALIZER, APPWRAPPER_LABEL
from codeflare.k8s.ownerrefs import is_owned_by
from codeflare.k8s.types import Obj
from codeflare.k8s.workqueue import ReconcileQueue
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Informer, OwnWrites
from codeflare.kube.kinds import Kind
from codeflare.operator.appwrapper.faults import FaultTolerance, fault_tolerance
from codeflare.operator.appwrapper.lifecycle import (
    Action,
    ComponentObservation,
    Decision,
    Observation,
    component_outcome,
    decide,
    decide_deletion,
    deploy_failed,
    summarize_pods,
)
from codeflare.operator.appwrapper.podsets import PodSetError, build_component, expected_pods
from codeflare.operator.context import OperatorContext

log = logging.getLogger(__name__)

# Labelled kinds whose changes are worth a look at their AppWrapper (read from informers).
WATCHED_CHILDREN: tuple[Kind, ...] = (
    kinds.POD, kinds.JOB, kinds.DEPLOYMENT, kinds.STATEFULSET, kinds.RAYCLUSTER, kinds.RAYJOB)


class DeployError(Exception):
    """A component cannot be created, and retrying will not help."""


def _owned_by(obj: Obj, appwrapper: Obj) -> bool:
    uid = (appwrapper.get("metadata") or {}).get("uid")
    return not uid or is_owned_by(obj, uid)


def _ref(appwrapper: Obj) -> str:
    meta = appwrapper.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


class AppWrapperController:
    """Reconciles AppWrappers of one operator."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.kube: AsyncKube = ctx.kube
        self.queue: ReconcileQueue[Hashable] = ReconcileQueue(
            self._reconcile_key, expected_errors=(errors.KubeError,), name="appwrapper")
        ctx.metrics.count_reconciles("appwrapper", self.queue)
        self.own = OwnWrites()
        self.informers: dict[Kind, Informer] = {
            kinds.APPWRAPPER: ctx.informers.subscribe(kinds.APPWRAPPER, self._on_appwrapper)
        }
        for kind in WATCHED_CHILDREN:
            self.informers[kind] = ctx.informers.subscribe(kind, self._child_handler(kind))

    async def run(self) -> None:
        """Reconcile once the AppWrapper and pod caches are complete (never on a partial view)."""
        await asyncio.gather(*(self.informers[k].synced.wait() for k in (kinds.APPWRAPPER, kinds.POD)))
        self.ctx.mark_ready("appwrapper")
        await self.queue.run()

    # -- cache --------------------------------------------------------------------------------
    def _on_appwrapper(self, event: str, obj: Obj, old: Obj | None) -> None:
        self.own.seen(kinds.APPWRAPPER, event, obj)
        meta = obj.get("metadata") or {}
        self.queue.add((meta.get("namespace"), meta.get("name")))

    def _child_handler(self, kind: Kind) -> Callable[[str, Obj, Obj | None], None]:
        def changed(event: str, obj: Obj, old: Obj | None) -> None:
            self.own.seen(kind, event, obj)
            meta = obj.get("metadata") or {}
            owner = (meta.get("labels") or {}).get(APPWRAPPER_LABEL)
            if owner:
                self.queue.add((meta.get("namespace"), owner))

        return changed

    async def _read(self, kind: Kind, name: str, namespace: str) -> Obj | None:
        """The object from its informer (or our newer write of it); from the API for other kinds."""
        informer = self.informers.get(kind)
        if informer is None or not informer.synced.is_set():
            return await self.kube.find(kind, name, namespace)
        return self.own.get(kind, (namespace, name), informer.cache.get((namespace, name)))

    async def _pods(self, namespace: str, name: str) -> list[Obj]:
        informer = self.informers[kinds.POD]
        if informer.synced.is_set():
            return informer.select(namespace, {APPWRAPPER_LABEL: name})
        return await self.kube.list(kinds.POD, namespace, labels={APPWRAPPER_LABEL: name})

    # -- observation --------------------------------------------------------------------------
    def knobs(self, appwrapper: Obj) -> tuple[FaultTolerance, list[str]]:
        annotations = (appwrapper.get("metadata") or {}).get("annotations") or {}
        return fault_tolerance(self.ctx.config.appwrapper.fault_tolerance, annotations)

    async def observe(self, appwrapper: Obj) -> Observation:
        meta = appwrapper["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        components = (appwrapper.get("spec") or {}).get("components") or []
        observed = []
        for index, component in enumerate(components):
            template = component.get("template") or {}
            cname = str((template.get("metadata") or {}).get("name", f"component-{index}"))
            kind = await self.ctx.discovery.kind_of(template)
            obj = None if kind is None else await self._read_component(appwrapper, kind, cname)
            exists = obj is not None and _owned_by(obj, appwrapper)
            outcome, message = component_outcome(obj) if obj is not None and exists else (None, "")
            observed.append(ComponentObservation(
                cname, str(template.get("kind", "")), str(template.get("apiVersion", "")), exists, outcome,
                message))
        pods = await self._pods(namespace, name)
        return Observation(tuple(observed), summarize_pods(pods), expected_pods(components))

    async def _read_component(self, appwrapper: Obj, kind: Kind, name: str) -> Obj | None:
        namespace = appwrapper["metadata"]["namespace"]
        try:
            return await self._read(kind, name, namespace)
        except (errors.BadRequest, errors.Forbidden) as exc:
            log.debug("AppWrapper %s/%s: cannot read %s: %s", namespace, appwrapper["metadata"]["name"],
                      kind.ref(name, namespace), exc)
            return None

    # -- actions ------------------------------------------------------------------------------
    async def ensure_finalizer(self, appwrapper: Obj) -> Obj:
        if APPWRAPPER_FINALIZER in ((appwrapper.get("metadata") or {}).get("finalizers") or []):
            return appwrapper

        def add(obj: Obj) -> Obj | None:
            meta = obj["metadata"]
            if meta.get("deletionTimestamp") or APPWRAPPER_FINALIZER in (meta.get("finalizers") or []):
                return None
            meta["finalizers"] = [*(meta.get("finalizers") or []), APPWRAPPER_FINALIZER]
            return obj

        meta = appwrapper["metadata"]
        updated = await self.kube.update(kinds.APPWRAPPER, meta["name"], meta["namespace"], add)
        if updated is None:
            return appwrapper
        self.own.remember(kinds.APPWRAPPER, updated)
        return updated

    async def deploy(self, appwrapper: Obj) -> None:
        """Create every component; existing ones of ours are kept. Raises DeployError if hopeless."""
        namespace, name = appwrapper["metadata"]["namespace"], appwrapper["metadata"]["name"]
        for index, _ in enumerate(appwrapper["spec"].get("components") or []):
            try:
                obj = build_component(appwrapper, index)
            except PodSetError as exc:
                raise DeployError(f"component {index}: {exc}") from exc
            kind = await self.ctx.discovery.kind_of(obj)
            cname = obj["metadata"]["name"]
            if kind is None:
                raise DeployError(f"component {index}: the API server does not serve {obj.get('kind')} "
                                  f"in {obj.get('apiVersion')}")
            try:
                self.own.remember(kind, await self.kube.create(kind, obj, namespace))
                log.info("AppWrapper %s/%s: created %s", namespace, name, kind.ref(cname, namespace))
            except errors.AlreadyExists:
                existing = await self.kube.find(kind, cname, namespace)
                if existing is not None and not _owned_by(existing, appwrapper):
                    raise DeployError(f"{kind.kind} {cname} already exists and is not owned by "
                                      f"this AppWrapper") from None
            except (errors.Invalid, errors.BadRequest, errors.Forbidden, errors.NotFound) as exc:
                raise DeployError(f"cannot create {kind.kind} {cname}: {exc}") from exc

    async def delete_components(self, appwrapper: Obj, *, forceful: bool) -> None:
        namespace, name = appwrapper["metadata"]["namespace"], appwrapper["metadata"]["name"]
        for component in appwrapper["spec"].get("components") or []:
            template = component.get("template") or {}
            cname = (template.get("metadata") or {}).get("name")
            if not cname:
                continue
            kind = await self.ctx.discovery.kind_of(template)
            if kind is None:
                continue  # not served: nothing of that kind can exist
            existing = await self.kube.find(kind, cname, namespace)
            if existing is None or not _owned_by(existing, appwrapper):
                continue
            if forceful:
                await self._drop_finalizers(kind, existing)
            if not existing["metadata"].get("deletionTimestamp") or forceful:
                await self.kube.delete(kind, cname, namespace, propagation="Background")
                log.info("AppWrapper %s/%s: deleting %s%s", namespace, name, kind.ref(cname, namespace),
                         " forcefully" if forceful else "")
        if forceful:
            for pod in await self.kube.list(kinds.POD, namespace, labels={APPWRAPPER_LABEL: name}):
                await self._drop_finalizers(kinds.POD, pod)
                await self.kube.delete(kinds.POD, pod["metadata"]["name"], namespace)

    async def _drop_finalizers(self, kind: Kind, obj: Obj) -> None:
        if not (obj.get("metadata") or {}).get("finalizers"):
            return
        meta = obj["metadata"]
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(kind, meta["name"], {"metadata": {"finalizers": None}}, meta["namespace"])

    async def write_status(self, appwrapper: Obj, status: Obj) -> Obj | None:
        """Replace the status as read (resourceVersion precondition); None on a 409."""
        body = copy.deepcopy(appwrapper)
        body["status"] = status
        try:
            written = await self.kube.replace_status(kinds.APPWRAPPER, body)
        except errors.Conflict:
            log.debug("AppWrapper %s changed while reconciling; reading it again", _ref(appwrapper))
            return None
        self.own.remember(kinds.APPWRAPPER, written)
        return written

    async def _announce(self, appwrapper: Obj, before: str, decision: Decision) -> None:
        phase = decision.phase
        if phase is None or phase == before:
            if decision.event is not None and decision.event[0] in ("Unhealthy", "SuccessTTLExpired"):
                await self.ctx.events.record(appwrapper, *decision.event[:2], type_=decision.event[2])
            return
        self.ctx.metrics.appwrapper_phase.labels(phase=phase).inc()
        reason, message, type_ = decision.event or (phase, f"phase {phase}", "Normal")
        log.info("AppWrapper %s: %s -> %s (%s: %s)", _ref(appwrapper), before or '""', phase, reason, message)
        await self.ctx.events.record(appwrapper, reason, message, type_=type_)

    # -- reconcile ----------------------------------------------------------------------------
    async def _reconcile_key(self, key: Hashable) -> float | None:
        assert isinstance(key, tuple)
        return await self.reconcile(str(key[0]), str(key[1]))

    async def reconcile(self, namespace: str, name: str) -> float | None:
        """One level-triggered pass; returns seconds until the next time-based check, if any."""
        appwrapper = await self._read(kinds.APPWRAPPER, name, namespace)
        if appwrapper is None:
            return None
        if appwrapper["metadata"].get("deletionTimestamp"):
            return await self.finalize(appwrapper)
        managed_by = (appwrapper.get("spec") or {}).get("managedBy")
        if managed_by and managed_by != APPWRAPPER_CONTROLLER:
            return None
        knobs, problems = self.knobs(appwrapper)
        observed = await self.observe(appwrapper)
        now = self.ctx.clock()
        decision = decide(appwrapper, observed, knobs, now)
        before = str((appwrapper.get("status") or {}).get("phase") or "")
        if decision.action is Action.DEPLOY:
            appwrapper = await self.ensure_finalizer(appwrapper)
            try:
                await self.deploy(appwrapper)
            except DeployError as exc:
                log.warning("AppWrapper %s/%s: %s", namespace, name, exc)
                decision = deploy_failed(appwrapper, str(exc), now)
        elif decision.action in (Action.DELETE, Action.DELETE_FORCEFULLY):
            await self.delete_components(appwrapper, forceful=decision.action is Action.DELETE_FORCEFULLY)
        elif decision.action is Action.DELETE_APPWRAPPER:
            await self.ctx.events.record(appwrapper, "SuccessTTLExpired",
                                         "deleting the AppWrapper after its successTTL")
            await self.kube.delete(kinds.APPWRAPPER, name, namespace)
            log.info("AppWrapper %s/%s: deleted after successTTL", namespace, name)
            return None
        if decision.status is not None:
            if await self.write_status(appwrapper, decision.status) is None:
                return 0.05
            if problems and not before:
                await self.ctx.events.record(appwrapper, "InvalidAnnotation", "; ".join(problems),
                                             type_="Warning")
            await self._announce(appwrapper, before, decision)
        return decision.requeue_after

    async def finalize(self, appwrapper: Obj) -> float | None:
        """A deleted AppWrapper: delete the components; once none is left, release the finalizer.

        Returns seconds until the next look while components are still being deleted.
        """
        meta = appwrapper["metadata"]
        if APPWRAPPER_FINALIZER not in (meta.get("finalizers") or []):
            return None
        delay = await self._finalize_step(appwrapper)
        if delay is not None:
            return delay
        remaining = [f for f in meta.get("finalizers") or [] if f != APPWRAPPER_FINALIZER] or None
        change = {"metadata": {"finalizers": remaining, "resourceVersion": meta.get("resourceVersion")}}
        try:
            released = await self.kube.patch(kinds.APPWRAPPER, meta["name"], change, meta["namespace"])
        except errors.NotFound:
            return None
        except errors.Conflict:
            return 0.05  # changed meanwhile: read it again
        self.own.remember(kinds.APPWRAPPER, released)
        log.info("AppWrapper %s: components deleted; finalizer released", _ref(appwrapper))
        return None

    async def _finalize_step(self, appwrapper: Obj) -> float | None:
        """One deletion pass; None when the finalizer may go, else seconds until the next pass."""
        knobs, _ = self.knobs(appwrapper)
        observed = await self.observe(appwrapper)
        decision, done = decide_deletion(appwrapper, observed.remaining, knobs, self.ctx.clock())
        if decision.action in (Action.DELETE, Action.DELETE_FORCEFULLY):
            await self.delete_components(appwrapper, forceful=decision.action is Action.DELETE_FORCEFULLY)
        if decision.status is not None:
            before = str((appwrapper.get("status") or {}).get("phase") or "")
            if await self.write_status(appwrapper, decision.status) is None:
                return 0.05  # changed meanwhile: read it again
            await self._announce(appwrapper, before, decision)
        if not done:
            log.debug("AppWrapper %s: waiting for %d objects to be deleted", _ref(appwrapper),
                      observed.remaining)
            return decision.requeue_after or 1.0
        return None


def register(ctx: OperatorContext) -> list[Awaitable[Any]]:
    """Set the AppWrapper controller up on ``ctx``'s informers; returns its reconcile loop."""
    controller = AppWrapperController(ctx)
    ctx.mark_ready("appwrapper", False)
    return [controller.run()]
