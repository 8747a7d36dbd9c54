"""Kueue Cohort objects for the engine, and the fair-sharing status the operator writes back.

:func:`cohort` turns a Cohort manifest (v1beta2: ``spec.parentName``, ``spec.resourceGroups``,
``spec.fairSharing.weight``) into the engine's :class:`~codeflare.scheduling.Cohort`, and
:func:`fair_weight` reads a ClusterQueue's weight; both raise ``ValueError`` naming the field.
:class:`CohortStatusWriter` patches ``status.fairSharing.weightedShare`` on ClusterQueues and
Cohorts when fair sharing is on, as Kueue does, and a Cohort ``Active`` condition that names a
cycle of parents (our addition: Kueue leaves a cycle's queues out of its snapshot and says
nothing), each only when it differs from what the cache shows. It decides nothing.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from codeflare.k8s.conditions import conditions_of, set_condition
from codeflare.k8s.quantity import QuantityError, milli_value
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.kube.ratelimit import Priority, priority
from codeflare.operator.queueing import convert
from codeflare.scheduling import Cohort

if TYPE_CHECKING:
    from codeflare.operator.context import OperatorContext
    from codeflare.operator.queueing.feeder import QueueingState

__all__ = ["CohortStatusWriter", "active_condition", "cohort", "fair_weight"]

log = logging.getLogger(__name__)


def fair_weight(obj: Obj) -> float:
    """``spec.fairSharing.weight`` of a ClusterQueue or Cohort (Kueue's default 1)."""
    weight = ((obj.get("spec") or {}).get("fairSharing") or {}).get("weight")
    if weight is None:
        return 1.0
    try:
        value = milli_value(weight) / 1000
    except (QuantityError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{obj.get('kind', 'object')} {obj['metadata']['name']}: spec.fairSharing.weight: {exc}"
        ) from exc
    if value < 0:
        raise ValueError(
            f"{obj['metadata']['name']}: spec.fairSharing.weight: must be greater than or equal to 0"
        )
    return value


def cohort(obj: Obj) -> Cohort:
    """The engine's Cohort for a Cohort manifest (its quota read as a ClusterQueue's is)."""
    name = obj["metadata"]["name"]
    spec = obj.get("spec") or {}
    as_queue = {"metadata": {"name": name}, "spec": {"resourceGroups": spec.get("resourceGroups") or []}}
    try:
        groups = convert.cluster_queue(as_queue).resource_groups
    except ValueError as exc:
        raise ValueError(str(exc).replace(f"ClusterQueue {name}", f"Cohort {name}", 1)) from exc
    return Cohort(name, spec.get("parentName") or None, groups, fair_weight(obj))


def _written(obj: Obj) -> Any:
    return ((obj.get("status") or {}).get("fairSharing") or {}).get("weightedShare")


def active_condition(cycle: str | None) -> tuple[str, str, str]:
    """(status, reason, message) of a Cohort's ``Active`` condition (ours: Kueue writes none)."""
    if cycle is not None:
        return "False", "HasCycle", f"{cycle}; its ClusterQueues admit nothing until it is broken"
    return "True", "Ready", "The cohort tree is usable"


class CohortStatusWriter:
    """Cohort ``Active`` conditions (a cycle named), and with fair sharing on
    ``status.fairSharing.weightedShare`` of ClusterQueues and Cohorts; each written on change."""

    def __init__(self, ctx: OperatorContext, state: QueueingState, fair_sharing: bool) -> None:
        self.ctx, self.state, self.fair_sharing = ctx, state, fair_sharing

    async def write(self) -> int:
        """Write what changed; returns how many status patches it sent."""
        engine = self.state.engine
        queues, cohorts = engine.weighted_shares() if self.fair_sharing else ({}, {})
        cycles = engine.cohort_cycles()
        now = format_rfc3339(self.ctx.clock())
        queue_patches = self._changed(kinds.CLUSTER_QUEUE, queues, None, now)
        cohort_patches = self._changed(kinds.COHORT, cohorts, cycles, now)
        with priority(Priority.BOOKKEEPING):  # after admissions in the client's rate limit
            for name, body in queue_patches:
                with contextlib.suppress(errors.NotFound):
                    await self.ctx.kube.patch(kinds.CLUSTER_QUEUE, name, body, None, status=True)
            for name, body in cohort_patches:
                with contextlib.suppress(errors.NotFound):
                    await self.ctx.kube.patch(kinds.COHORT, name, body, None, status=True)
        return len(queue_patches) + len(cohort_patches)

    def _changed(
        self, kind: Kind, shares: dict[str, int], cycles: dict[str, str] | None, now: str
    ) -> list[tuple[str, Obj]]:
        """(name, status patch) of every object of ``kind`` whose status is not the engine's."""
        informer = self.state.informers.get(kind)
        out: list[tuple[str, Obj]] = []
        for (_, name), obj in list(informer.cache.items()) if informer is not None else []:
            status: dict[str, Any] = {}
            share = shares.get(name)
            if share is not None and _written(obj) != share:
                status["fairSharing"] = {"weightedShare": share}
            if cycles is not None:
                conds = conditions_of(obj)
                if set_condition(conds, "Active", *active_condition(cycles.get(name)), now):
                    status["conditions"] = conds
            if status:
                log.debug("%s %s: status %s", kind.kind, name, status)
                out.append((name, {"status": status}))
        return out
