"""The AppWrapper lifecycle as a pure function: (AppWrapper, observation, knobs, now) -> decision.

Phases (``status.phase``): "" -> Suspended or Resuming; Suspended -> Resuming when
``spec.suspend`` is cleared; Resuming deploys every component -> Running; Running -> Succeeded,
or Unhealthy (a condition, not a phase) and, after ``failureGracePeriod``, Resetting (retry) or
Failed (retry limit reached, terminal exit code); Resetting deletes the components, pauses for
``retryPausePeriod`` and resumes; Running/Resuming -> Suspending -> Suspended when suspended again.
Every time-based step is measured from a condition's ``lastTransitionTime`` or the deletion
timestamp, so a restarted controller reaches the same decision. No I/O: the controller observes
the API, calls :func:`decide` (or :func:`decide_deletion`) and carries out the result.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.conditions import find_condition, is_condition_true, set_condition
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.operator.appwrapper.faults import FaultTolerance
from codeflare.operator.appwrapper.podsets import pod_sets

__all__ = [
    "Action",
    "ComponentObservation",
    "Decision",
    "Observation",
    "PodCounts",
    "component_outcome",
    "decide",
    "decide_deletion",
    "deploy_failed",
    "summarize_pods",
]


# Phases
EMPTY, SUSPENDED, RESUMING, RUNNING = "", "Suspended", "Resuming", "Running"
RESETTING, SUSPENDING, SUCCEEDED, FAILED, TERMINATING = (
    "Resetting", "Suspending", "Succeeded", "Failed", "Terminating")
# Conditions
QUOTA_RESERVED, RESOURCES_DEPLOYED, PODS_READY = "QuotaReserved", "ResourcesDeployed", "PodsReady"
UNHEALTHY, DELETING_RESOURCES = "Unhealthy", "DeletingResources"

DELETE_POLL_SECONDS = 1.0


class Action(enum.Enum):
    """What the controller must do (before writing the decision's status)."""

    NONE = "none"
    DEPLOY = "deploy"
    DELETE = "delete"
    DELETE_FORCEFULLY = "delete-forcefully"
    DELETE_APPWRAPPER = "delete-appwrapper"


@dataclass(frozen=True)
class ComponentObservation:
    """One component as found in the API (``exists`` False: not found)."""

    name: str
    kind: str
    api_version: str
    exists: bool
    outcome: str | None = None  # "succeeded" | "failed" | "ready" | None (nothing to say)
    message: str = ""


@dataclass(frozen=True)
class PodCounts:
    """The pods labelled with the AppWrapper's name."""

    total: int = 0
    pending: int = 0
    running: int = 0
    ready: int = 0
    succeeded: int = 0
    failed: int = 0
    exit_codes: tuple[int, ...] = ()  # non-zero exit codes of failed pods' containers
    failed_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """What the controller saw of an AppWrapper's components and pods."""

    components: tuple[ComponentObservation, ...] = ()
    pods: PodCounts = PodCounts()
    expected_pods: int = 0

    @property
    def remaining(self) -> int:
        """Objects (components and pods) that still exist."""
        return sum(1 for c in self.components if c.exists) + self.pods.total


@dataclass
class Decision:
    """The outcome of one reconcile: an action, then a status to write (None: unchanged)."""

    action: Action = Action.NONE
    status: Obj | None = None
    requeue_after: float | None = None
    event: tuple[str, str, str] | None = None  # (reason, message, type)
    notes: list[str] = field(default_factory=list)

    @property
    def phase(self) -> str | None:
        return None if self.status is None else str(self.status.get("phase", ""))


# -- conditions -----------------------------------------------------------------------------------

def _condition(status: Mapping[str, Any], type_: str) -> Obj | None:
    return find_condition(status.get("conditions"), type_)


def _is_true(status: Mapping[str, Any], type_: str) -> bool:
    return is_condition_true(status.get("conditions"), type_)


def _since(status: Mapping[str, Any], type_: str) -> float | None:
    condition = _condition(status, type_)
    return None if condition is None else epoch_seconds(condition.get("lastTransitionTime"))


def _write_condition(holder: Obj, type_: str, value: bool, reason: str, message: str, now: float,
                   generation: int | None = None) -> None:
    """Set a condition in ``holder["conditions"]`` (a status, or a component status entry)."""
    conditions = list(holder.get("conditions") or [])
    set_condition(conditions, type_, value, reason, message, format_rfc3339(now), generation)
    holder["conditions"] = conditions


# -- the decision -------------------------------------------------------------------------------

class _Step:
    """Builds a Decision from a copy of the current status."""

    def __init__(self, appwrapper: Mapping[str, Any], now: float) -> None:
        self.before = copy.deepcopy(dict(appwrapper.get("status") or {}))
        self.status = copy.deepcopy(self.before)
        self.now = now
        self.generation = (appwrapper.get("metadata") or {}).get("generation")
        self.decision = Decision()

    def condition(self, type_: str, value: bool, reason: str, message: str) -> _Step:
        _write_condition(self.status, type_, value, reason, message, self.now, self.generation)
        return self

    def phase(self, phase: str, reason: str, message: str, type_: str = "Normal") -> _Step:
        self.status["phase"] = phase
        self.decision.event = (reason, message, type_)
        return self

    def done(self, action: Action = Action.NONE, requeue_after: float | None = None) -> Decision:
        self.decision.action = action
        self.decision.requeue_after = None if requeue_after is None else max(0.0, requeue_after)
        self.status.setdefault("phase", self.before.get("phase", ""))
        if self.status != self.before:
            self.decision.status = self.status
        return self.decision


def decide(appwrapper: Mapping[str, Any], observed: Observation, knobs: FaultTolerance,
           now: float) -> Decision:
    """The next step of a (not deleted) AppWrapper."""
    spec = appwrapper.get("spec") or {}
    suspend = bool(spec.get("suspend", False))
    step = _Step(appwrapper, now)
    phase = step.before.get("phase") or EMPTY
    if phase == EMPTY:
        return _start(step, suspend)
    if phase == SUSPENDED:
        if suspend:
            return step.done()
        return _resume(step, "Admitted", "the AppWrapper was admitted").done(requeue_after=0)
    if phase == RESUMING:
        if suspend:
            return _begin_cleanup(step, SUSPENDING, "Suspended", "spec.suspend was set").done(requeue_after=0)
        return _deploy(step, appwrapper, observed)
    if phase == RUNNING:
        if suspend:
            return _begin_cleanup(step, SUSPENDING, "Suspended", "spec.suspend was set").done(requeue_after=0)
        return _running(step, observed, knobs, int(step.before.get("resettingCount") or 0))
    if phase in (RESETTING, SUSPENDING, FAILED):
        return _cleanup(step, phase, observed, knobs, suspend)
    if phase == SUCCEEDED:
        return _succeeded(step, knobs)
    return step.done()  # Terminating: the deletion handler owns it


def _start(step: _Step, suspend: bool) -> Decision:
    if suspend:
        step.condition(QUOTA_RESERVED, False, "Suspended", "waiting for admission")
        return step.phase(SUSPENDED, "Suspended", "the AppWrapper is suspended until admitted").done()
    return _resume(step, "NotQueued", "spec.suspend is false: running without queueing").done(requeue_after=0)


def _resume(step: _Step, reason: str, message: str) -> _Step:
    step.condition(QUOTA_RESERVED, True, reason, message)
    step.condition(RESOURCES_DEPLOYED, False, "Resuming", "creating the components")
    step.condition(PODS_READY, False, "Resuming", "no components yet")
    if _condition(step.status, UNHEALTHY) is not None:
        step.condition(UNHEALTHY, False, "Resuming", "components are being created again")
    return step.phase(RESUMING, "Resuming", message)


def _deploy(step: _Step, appwrapper: Mapping[str, Any], observed: Observation) -> Decision:
    """Create the components (the controller does it first), then Running."""
    components = []
    for index, component in enumerate((appwrapper.get("spec") or {}).get("components") or []):
        template = component.get("template") or {}
        components.append({
            "name": str((template.get("metadata") or {}).get("name", f"component-{index}")),
            "kind": str(template.get("kind", "")),
            "apiVersion": str(template.get("apiVersion", "")),
            "podSets": pod_sets(component),
            "conditions": [{"type": RESOURCES_DEPLOYED, "status": "True", "reason": "Created",
                            "message": "component created", "lastTransitionTime": format_rfc3339(step.now)}],
        })
    step.status["componentStatus"] = components
    step.condition(RESOURCES_DEPLOYED, True, "ComponentsCreated", f"{len(components)} components created")
    expected = observed.expected_pods
    step.condition(PODS_READY, False, "WaitingForPods",
                   f"0 of {expected} pods ready" if expected else "no pods expected")
    step.phase(RUNNING, "Running", f"{len(components)} components created")
    return step.done(Action.DEPLOY, requeue_after=0)


def _problem(observed: Observation, knobs: FaultTolerance, deployed_since: float,
             now: float) -> tuple[str, str, bool] | None:
    """(reason, message, terminal) of what is wrong with a running AppWrapper, if anything."""
    missing = [c for c in observed.components if not c.exists]
    if missing:
        names = ", ".join(f"{c.kind} {c.name}" for c in missing)
        return "MissingComponent", f"component(s) deleted: {names}", False
    pods = observed.pods
    if pods.failed:
        codes = sorted(set(pods.exit_codes))
        terminal = knobs.any_terminal(codes)
        detail = f" (exit codes {', '.join(map(str, codes))})" if codes else ""
        kind = "terminal" if terminal else "retryable"
        return ("FoundFailedPods",
                f"{pods.failed} pod(s) failed{detail}: {', '.join(pods.failed_names[:5])}; {kind} failure",
                terminal)
    failed = [c for c in observed.components if c.outcome == "failed"]
    if failed:
        text = "; ".join(f"{c.kind} {c.name} failed" + (f": {c.message}" if c.message else "")
                         for c in failed)
        return "ComponentFailed", text, False
    elapsed = now - deployed_since
    live = pods.total - pods.failed
    if live < observed.expected_pods and elapsed >= knobs.admission_grace_period.total_seconds():
        return ("MissingPods", f"{live} of {observed.expected_pods} expected pods exist after the "
                               f"admission grace period", False)
    warm = elapsed >= knobs.warmup_grace_period.total_seconds()
    if pods.ready + pods.succeeded < observed.expected_pods and warm:
        return ("InsufficientPodsReady", f"{pods.ready + pods.succeeded} of {observed.expected_pods} pods "
                                         f"ready after the warmup grace period", False)
    return None


def _all_succeeded(observed: Observation) -> bool:
    components = observed.components
    if components and all(c.exists and c.outcome == "succeeded" for c in components):
        return True
    pods = observed.pods
    return (all(c.exists for c in components) and pods.total > 0 and pods.succeeded == pods.total
            and pods.succeeded >= observed.expected_pods)


def _running(step: _Step, observed: Observation, knobs: FaultTolerance, resets: int) -> Decision:
    now = step.now
    if _all_succeeded(observed):
        step.condition(PODS_READY, False, "Succeeded", "all components completed")
        step.condition(QUOTA_RESERVED, False, "Succeeded", "the AppWrapper succeeded; quota released")
        if _is_true(step.status, UNHEALTHY):
            step.condition(UNHEALTHY, False, "Succeeded", "the AppWrapper succeeded")
        step.phase(SUCCEEDED, "Succeeded", "all components completed successfully")
        return step.done(requeue_after=knobs.success_ttl.total_seconds())
    deployed_since = _since(step.status, RESOURCES_DEPLOYED) or now
    pods = observed.pods
    ready = pods.ready + pods.succeeded
    if observed.expected_pods == 0 or ready >= observed.expected_pods:
        step.condition(PODS_READY, True, "PodsReady", f"{ready} of {observed.expected_pods} pods ready")
    else:
        step.condition(PODS_READY, False, "WaitingForPods", f"{ready} of {observed.expected_pods} pods ready")
    problem = _problem(observed, knobs, deployed_since, now)
    if problem is None:
        if _is_true(step.status, UNHEALTHY):
            step.condition(UNHEALTHY, False, "Recovered", "no failure observed any more")
        wake = None
        if not _is_true(step.status, PODS_READY):
            deadlines = [deployed_since + knobs.admission_grace_period.total_seconds(),
                         deployed_since + knobs.warmup_grace_period.total_seconds()]
            upcoming = [d - now for d in deadlines if d > now]
            wake = min(upcoming) if upcoming else None
        return step.done(requeue_after=wake)
    reason, message, terminal = problem
    step.condition(UNHEALTHY, True, reason, message)
    unhealthy_since = _since(step.status, UNHEALTHY) or now
    deadline = unhealthy_since + knobs.failure_grace_period.total_seconds()
    if now < deadline:
        if not _is_true(step.before, UNHEALTHY):
            step.decision.event = ("Unhealthy", message, "Warning")
        return step.done(requeue_after=deadline - now)
    if terminal:
        return _fail(step, "TerminalExitCode", f"{message}; not retried")
    if resets >= knobs.retry_limit:
        return _fail(step, "RetryLimitExceeded", f"{message}; retry limit {knobs.retry_limit} reached")
    step.status["resettingCount"] = resets + 1
    _begin_cleanup(step, RESETTING, "Resetting",
                   f"{message}; reset {resets + 1} of {knobs.retry_limit}", type_="Warning")
    return step.done(requeue_after=0)


def _fail(step: _Step, reason: str, message: str) -> Decision:
    step.condition(QUOTA_RESERVED, False, reason, f"the AppWrapper failed: {message}")
    _begin_cleanup(step, FAILED, reason, message, type_="Warning")
    return step.done(requeue_after=0)


def _begin_cleanup(step: _Step, phase: str, reason: str, message: str, type_: str = "Normal") -> _Step:
    step.condition(DELETING_RESOURCES, True, reason, message)
    step.condition(PODS_READY, False, reason, "components are being deleted")
    return step.phase(phase, reason, message, type_)


def _delete_action(knobs: FaultTolerance, since: float | None, now: float) -> Action:
    if since is not None and now >= since + knobs.forceful_deletion_grace_period.total_seconds():
        return Action.DELETE_FORCEFULLY
    return Action.DELETE


def _cleanup(step: _Step, phase: str, observed: Observation, knobs: FaultTolerance,
             suspend: bool) -> Decision:
    now = step.now
    if _is_true(step.status, DELETING_RESOURCES):
        if observed.remaining:
            action = _delete_action(knobs, _since(step.status, DELETING_RESOURCES), now)
            return step.done(action, requeue_after=DELETE_POLL_SECONDS)
        step.condition(DELETING_RESOURCES, False, "DeletionComplete", "all components deleted")
        step.condition(RESOURCES_DEPLOYED, False, phase, "components deleted")
        for component in step.status.get("componentStatus") or []:
            _write_condition(component, RESOURCES_DEPLOYED, False, "Deleted", "component deleted", now)
        if phase == RESETTING:
            return step.done(requeue_after=knobs.retry_pause_period.total_seconds())
        if phase == SUSPENDING:
            step.condition(QUOTA_RESERVED, False, "Suspended", "the AppWrapper was suspended")
            return step.phase(SUSPENDED, "Suspended", "components deleted; waiting for admission").done()
        return step.done()
    if phase == RESETTING:
        paused_since = _since(step.status, RESOURCES_DEPLOYED) or now
        resume_at = paused_since + knobs.retry_pause_period.total_seconds()
        if suspend:
            step.condition(QUOTA_RESERVED, False, "Suspended", "the AppWrapper was suspended")
            return step.phase(SUSPENDED, "Suspended", "suspended while resetting").done()
        if now < resume_at:
            return step.done(requeue_after=resume_at - now)
        return _resume(step, "Retrying", f"retry {step.status.get('resettingCount', 0)} after a reset").done(
            requeue_after=0)
    if phase == SUSPENDING:
        step.condition(QUOTA_RESERVED, False, "Suspended", "the AppWrapper was suspended")
        return step.phase(SUSPENDED, "Suspended", "components deleted").done()
    return step.done()


def _succeeded(step: _Step, knobs: FaultTolerance) -> Decision:
    since = _since(step.status, QUOTA_RESERVED) or step.now
    expires = since + knobs.success_ttl.total_seconds()
    if step.now >= expires:
        step.decision.event = ("SuccessTTLExpired", "deleting the AppWrapper after its successTTL", "Normal")
        return step.done(Action.DELETE_APPWRAPPER)
    return step.done(requeue_after=expires - step.now)


def deploy_failed(appwrapper: Mapping[str, Any], message: str, now: float) -> Decision:
    """A component could not be created for a reason retrying will not fix: Failed."""
    step = _Step(appwrapper, now)
    step.condition(RESOURCES_DEPLOYED, False, "CreateFailed", message)
    return _fail(step, "CreateFailed", message)


def decide_deletion(appwrapper: Mapping[str, Any], remaining: int, knobs: FaultTolerance,
                    now: float) -> tuple[Decision, bool]:
    """Step of an AppWrapper being deleted; the bool says whether its finalizer may go."""
    step = _Step(appwrapper, now)
    if step.before.get("phase") != TERMINATING:
        step.phase(TERMINATING, "Terminating", "deleting the components before the AppWrapper")
    if remaining:
        if not _is_true(step.status, DELETING_RESOURCES):
            step.condition(DELETING_RESOURCES, True, "Terminating", "the AppWrapper is being deleted")
        deleted_at = epoch_seconds((appwrapper.get("metadata") or {}).get("deletionTimestamp"))
        action = _delete_action(knobs, deleted_at, now)
        return step.done(action, requeue_after=DELETE_POLL_SECONDS), False
    if _is_true(step.status, DELETING_RESOURCES) or _condition(step.status, DELETING_RESOURCES) is None:
        step.condition(DELETING_RESOURCES, False, "DeletionComplete", "all components deleted")
    return step.done(), True


def summarize_pods(pods: Sequence[Mapping[str, Any]]) -> PodCounts:
    """Count pods by phase and readiness; collect failed containers' non-zero exit codes."""
    pending = running = ready = succeeded = failed = 0
    codes: list[int] = []
    failed_names: list[str] = []
    for pod in pods:
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        if phase == "Succeeded":
            succeeded += 1
        elif phase == "Failed":
            failed += 1
            failed_names.append(str((pod.get("metadata") or {}).get("name", "")))
            containers = (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
            for container in containers:
                terminated = ((container.get("state") or {}).get("terminated")
                              or (container.get("lastState") or {}).get("terminated") or {})
                code = terminated.get("exitCode")
                if isinstance(code, int) and code != 0:
                    codes.append(code)
        elif phase == "Running":
            running += 1
            if _is_true(status, "Ready"):
                ready += 1
        else:
            pending += 1
    return PodCounts(total=len(pods), pending=pending, running=running, ready=ready, succeeded=succeeded,
                     failed=failed, exit_codes=tuple(codes), failed_names=tuple(failed_names))


def component_outcome(obj: Mapping[str, Any]) -> tuple[str | None, str]:
    """What a component's own status says: succeeded, failed, ready or nothing, with a message."""
    kind, api_version = obj.get("kind"), str(obj.get("apiVersion", ""))
    status = obj.get("status") or {}
    if kind == "Job" and api_version.startswith("batch/"):
        if _is_true(status, "Complete"):
            return "succeeded", ""
        if _is_true(status, "Failed"):
            failure = _condition(status, "Failed") or {}
            return "failed", str(failure.get("message") or failure.get("reason") or "")
        return None, ""
    if kind == "RayCluster":
        state = str(status.get("state") or "").lower()
        if state == "failed":
            return "failed", str(status.get("reason") or status.get("message") or "")
        return ("ready", "") if state == "ready" else (None, "")
    if kind == "RayJob":
        deployment = status.get("jobDeploymentStatus")
        if deployment == "Complete" and status.get("jobStatus") == "SUCCEEDED":
            return "succeeded", ""
        if deployment == "Complete":  # KubeRay completes the deployment of a FAILED or STOPPED job too
            return "failed", str(status.get("message") or status.get("jobStatus") or "")
        if deployment == "Failed":
            return "failed", str(status.get("message") or status.get("reason") or "")
        return None, ""
    if kind == "Pod" and api_version == "v1":
        phase = status.get("phase")
        if phase in ("Succeeded", "Failed"):
            return ("succeeded" if phase == "Succeeded" else "failed"), ""
        return None, ""
    return None, ""
