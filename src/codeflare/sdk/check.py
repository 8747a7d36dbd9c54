"""``check()``: would this cluster or job be admitted now, later (when), or never - before creating it.

The job's manifest is built exactly as ``up()``/``submit()`` would send it; its pod sets (the
same inference the operator's queueing adapters use), queue, priority class and declared run
time (a RayJob's ``activeDeadlineSeconds``) go to the operator as a ``FeasibilityCheck``
(``forecast.codeflare.dev/v1alpha1``), which answers with the admission engine's verdict.
Nothing is created. It decides nothing itself; the words and figures are the operator's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codeflare.api import podsets
from codeflare.errors import CodeFlareError
from codeflare.k8s.constants import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.sdk.client import Client

POD_SETS = {kinds.RAYCLUSTER: podsets.raycluster_pod_sets, kinds.RAYJOB: podsets.rayjob_pod_sets,
            kinds.APPWRAPPER: podsets.appwrapper_pod_sets}  # fmt: skip


@dataclass(frozen=True)
class CheckResult:
    """The operator's answer: ``verdict`` AdmitNow, AdmitByPreempting, Wait or Never, in words
    (``message``) and as fields (``estimated_start`` POSIX seconds, None when unknown)."""

    verdict: str
    message: str
    cluster_queue: str = ""
    flavors: dict[str, str] = field(default_factory=dict)
    position: int | None = None
    estimated_start: float | None = None
    behind: tuple[str, ...] = ()
    preempts: tuple[str, ...] = ()
    limits: tuple[dict[str, str], ...] = ()

    @property
    def ever(self) -> bool:
        """False when the job can never be admitted as described."""
        return self.verdict != "Never"

    def __str__(self) -> str:
        return self.message

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> CheckResult:
        return cls(
            str(status.get("verdict", "")),
            str(status.get("message", "")),
            str(status.get("clusterQueue", "")),
            dict(status.get("flavors") or {}),
            status.get("position"),
            epoch_seconds(status.get("estimatedStart")),
            tuple(status.get("behind") or ()),
            tuple(status.get("preempts") or ()),
            tuple(dict(x) for x in status.get("limits") or ()),
        )


def check_body(kind: Kind, manifest: dict[str, Any], duration: float | None = None) -> dict[str, Any]:
    """The FeasibilityCheck for a job manifest; a job without a queue label is a CodeFlareError."""
    meta = manifest.get("metadata") or {}
    labels = meta.get("labels") or {}
    queue = labels.get(QUEUE_NAME_LABEL)
    if not queue:
        raise CodeFlareError(
            f"{kind.kind} {meta.get('name')} names no LocalQueue (label {QUEUE_NAME_LABEL}) and the "
            "namespace has no default queue: there is nothing to check against"
        )
    pod_sets = [
        {"name": ps.name, "count": ps.count, "requests": podsets.pod_requests(ps.template)}
        for ps in POD_SETS[kind](manifest)
    ]
    spec: dict[str, Any] = {"queueName": queue, "podSets": pod_sets, "jobKind": kind.kind}
    if labels.get(PRIORITY_CLASS_LABEL):
        spec["priorityClassName"] = labels[PRIORITY_CLASS_LABEL]
    declared = duration if duration is not None else (manifest.get("spec") or {}).get("activeDeadlineSeconds")
    if declared:
        spec["durationSeconds"] = declared
    check = kinds.FEASIBILITY_CHECK
    name = meta.get("name", "check")
    return {"apiVersion": check.api_version, "kind": check.kind, "metadata": {"name": name}, "spec": spec}


def check_manifest(
    client: Client, kind: Kind, manifest: dict[str, Any], duration: float | None = None
) -> CheckResult:
    """Ask the operator about ``manifest`` (nothing is created)."""
    namespace = (manifest.get("metadata") or {}).get("namespace") or client.namespace
    body = check_body(kind, manifest, duration)
    try:
        answer = client.kube.create(kinds.FEASIBILITY_CHECK, body, namespace)
    except errors.NotFound as exc:
        raise CodeFlareError(
            "the operator's feasibility API (forecast.codeflare.dev) is not served here: is the "
            f"CodeFlare operator running with queueing enabled? ({exc})"
        ) from exc
    except errors.KubeError as exc:
        raise CodeFlareError(f"feasibility check of {kind.kind} {namespace}/{body['metadata']['name']} "
                             f"failed: {exc}") from exc  # fmt: skip
    return CheckResult.from_status(dict(answer.get("status") or {}))
