"""Workload ``spec.maximumExecutionTimeSeconds`` enforced as Kueue enforces it.

An admitted Workload's execution time is ``status.accumulatedPastExecutionTimeSeconds`` (the
whole seconds of earlier admissions, added when an admission ends) plus the time since its
``Admitted`` condition turned True. Once that reaches the maximum the Workload gets
``DeactivationTarget=True`` (reason ``MaximumExecutionTimeExceeded``), a Warning event and
``spec.active=false``; the scheduler then evicts it as any deactivated workload, with the
Evicted reason ``DeactivatedDueToMaximumExecutionTimeExceeded``, and the job sync suspends the
job. Facts from kueue pkg/controller/core/workload_controller.go (reconcileMaxExecutionTime and
the deactivation in Reconcile) and pkg/workload/admissionchecks.go (SyncAdmittedCondition).

:func:`decide` is the pure decision; :class:`MaxExecTimer` re-decides a Workload when it changes
and once more when its remaining time has passed (one timer per admitted Workload with a maximum,
no polling). It never evicts by itself and never touches the job.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true, set_condition
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.informer import SharedInformers
from codeflare.operator.context import OperatorContext

log = logging.getLogger(__name__)

ACCUMULATED = "accumulatedPastExecutionTimeSeconds"
DEACTIVATION_TARGET = "DeactivationTarget"
EXCEEDED = "MaximumExecutionTimeExceeded"
TARGET_MESSAGE = "exceeding the maximum execution time"
DEACTIVATED = "Deactivated"  # Kueue's Evicted reason for spec.active=false
# A timer fires this much after the remaining time: the Admitted transition is kept in whole
# seconds (metav1.Time), so the true admitted time may be up to a second shorter than the one
# computed from it; waiting that second more means a timer never cuts a run before its maximum.
# (A Workload change seen past the maximum deactivates at once, as Kueue's reconcile does.)
TIMER_SLACK_S = 1.0


@dataclass(frozen=True)
class MaxExecAction:
    deactivate: bool = False
    recheck_in: float | None = None  # seconds until the maximum is reached (not yet exceeded)


NOTHING = MaxExecAction()
DEACTIVATE = MaxExecAction(deactivate=True)


def maximum_seconds(workload: Obj) -> int | None:
    value = (workload.get("spec") or {}).get("maximumExecutionTimeSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def past_seconds(workload: Obj) -> int:
    value = (workload.get("status") or {}).get(ACCUMULATED)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def admitted_since(workload: Obj) -> float | None:
    """When the current admission began (the Admitted condition's transition); None if not admitted."""
    cond = find_condition(conditions_of(workload), "Admitted")
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return epoch_seconds(cond["lastTransitionTime"])


def decide(workload: Obj, now: float) -> MaxExecAction:
    """Deactivate once the execution time reaches the maximum; else when to look again."""
    maximum, since = maximum_seconds(workload), admitted_since(workload)
    if maximum is None or since is None or is_condition_true(conditions_of(workload), "Finished"):
        return NOTHING
    remaining = maximum - past_seconds(workload) - (now - since)
    if remaining > 0:
        return MaxExecAction(recheck_in=remaining)
    if (workload.get("spec") or {}).get("active") is False:
        return NOTHING  # done (the condition may already be set when only spec.active is left)
    return DEACTIVATE


def deactivation_status(workload: Obj, now: str) -> Obj | None:
    """DeactivationTarget=True for the exceeded maximum; the accumulated time is dropped (Kueue)."""
    if is_condition_true(conditions_of(workload), DEACTIVATION_TARGET):
        return None
    status = dict(workload.get("status") or {})
    conds = conditions_of(workload)
    set_condition(conds, DEACTIVATION_TARGET, "True", EXCEEDED, TARGET_MESSAGE, now)
    status["conditions"] = conds
    status.pop(ACCUMULATED, None)
    return status


def on_admission_end(workload: Obj, status: Obj, reason: str, message: str, now: str) -> tuple[str, str]:
    """Hook of an eviction writing ``status``: the ended admission's whole seconds are added to the
    accumulated time (Workloads with a maximum only), a DeactivationTarget's reason is folded into
    the Deactivated reason and message and the target removed. Returns the (reason, message)."""
    since, ended = admitted_since(workload), epoch_seconds(now)
    if since is not None and ended is not None and maximum_seconds(workload) is not None:
        status[ACCUMULATED] = past_seconds(workload) + max(0, int(ended - since))
    target = find_condition(status.get("conditions") or [], DEACTIVATION_TARGET)
    if reason != DEACTIVATED or target is None or target.get("status") != "True":
        return reason, message
    status["conditions"] = [c for c in status["conditions"] if c.get("type") != DEACTIVATION_TARGET]
    return f"{reason}DueTo{target.get('reason', '')}", f"{message} due to {target.get('message', '')}"


class MaxExecLabelError(ValueError):
    """A max-exec-time-seconds label that is not a positive integer: the value and the rule."""

    def __init__(self, value: str | int, rule: str) -> None:
        super().__init__(f"label {MAX_EXEC_TIME_LABEL}: {value!r}: {rule}")
        self.value = value
        self.rule = rule


def parse_label(text: str) -> int:
    """A ``kueue.x-k8s.io/max-exec-time-seconds`` value read as Kueue reads it (an optionally signed
    decimal integer, then greater than 0); the one parser of the label, for the job sync and the
    job webhooks alike. Raises :class:`MaxExecLabelError`."""
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        raise MaxExecLabelError(text, "must be an integer number of seconds")
    value = int(text)
    if value <= 0:
        raise MaxExecLabelError(value, "should be greater than 0")
    return value


def label_seconds(job: Obj) -> int | None:
    """The job's ``kueue.x-k8s.io/max-exec-time-seconds`` label as a positive integer; None if unset.

    Raises :class:`MaxExecLabelError` (a ValueError naming the label and the rule) otherwise."""
    value = ((job.get("metadata") or {}).get("labels") or {}).get(MAX_EXEC_TIME_LABEL)
    return None if value is None else parse_label(str(value))


Write = Callable[[str, Callable[[Obj], Obj | None]], Awaitable[Obj | None]]


class MaxExecTimer:
    """Re-decides Workloads with a maximum on each change and when their time is up."""

    def __init__(
        self, ctx: OperatorContext, workloads: Callable[[str], Obj | None], write_status: Write
    ) -> None:
        self.ctx = ctx
        self._workloads = workloads
        self._write_status = write_status
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._dirty: dict[str, None] = {}
        self._ready = asyncio.Event()

    def subscribe(self, informers: SharedInformers) -> None:
        informers.subscribe(kinds.WORKLOAD, self._on_workload)

    def _on_workload(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if event == "DELETED":
            return
        action = decide(obj, self.ctx.clock())
        if action.recheck_in is not None:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(action.recheck_in + TIMER_SLACK_S, self._due, key)
        elif action.deactivate:
            self._mark(key)

    def _due(self, key: str) -> None:
        self._timers.pop(key, None)
        self._mark(key)

    def _mark(self, key: str) -> None:
        self._dirty[key] = None
        self._ready.set()

    async def run(self) -> None:
        """Deactivate the Workloads found due (call once the caches have synced)."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            batch, self._dirty = list(self._dirty), {}
            for key in batch:
                try:
                    await self._check(key)
                except errors.KubeError as exc:
                    log.warning("maximum execution time of %s: %s; will retry", key, exc)
                    asyncio.get_running_loop().call_later(0.5, self._mark, key)

    async def _check(self, key: str) -> None:
        workload = self._workloads(key)
        if workload is None:
            return
        action = decide(workload, self.ctx.clock())
        if action.recheck_in is not None:  # the cache moved on (e.g. readmitted): its own timer runs
            return
        if not action.deactivate:
            return
        now = format_rfc3339(self.ctx.clock())
        written = await self._write_status(key, lambda cur: deactivation_status(cur, now))
        namespace, _, name = key.partition("/")
        await self.ctx.kube.patch(kinds.WORKLOAD, name, {"spec": {"active": False}}, namespace)
        maximum = maximum_seconds(workload)
        if written is not None:  # not on a retry or a repeat (the cache still shows it active)
            log.info("Workload %s ran past its maximum execution time (%ss); deactivated", key, maximum)
            message = f"The maximum execution time ({maximum}s) exceeded"
            await self.ctx.events.record(written, EXCEEDED, message, type_="Warning")
