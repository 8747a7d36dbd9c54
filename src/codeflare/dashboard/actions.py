"""The actions a user can take from the dashboard, each one real API call made with their credentials.

``down`` deletes a RayCluster (the agent or KubeRay stops its pods), ``stop`` suspends a RayJob
and deactivates its Workload as Kueue does (otherwise the still-admitted job would be resumed),
``delete`` deletes a RayJob or AppWrapper. The server's refusal is the answer: a 403 comes back
as :class:`Outcome` with the server's own message, never hidden or rephrased, and nothing else
is tried. What a user may do is decided only by the API server's RBAC, never here.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeflare.dashboard.work import ACTIONS, KINDS
from codeflare.k8s.constants import JOB_UID_LABEL
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube


@dataclass(frozen=True)
class Outcome:
    ok: bool
    code: int  # HTTP status the API server answered (200 on success)
    message: str


class UnknownAction(ValueError):
    """An action or kind the dashboard does not offer (a 400 to the browser)."""


async def perform(kube: AsyncKube, action: str, kind_name: str, namespace: str, name: str) -> Outcome:
    if action not in ACTIONS.get(kind_name, {}):
        offered = ", ".join(f"{k}: {'/'.join(v)}" for k, v in ACTIONS.items())
        raise UnknownAction(f"action {action!r} is not offered for kind {kind_name!r} (offered: {offered})")
    kind = KINDS[kind_name]
    try:
        if action == "stop":
            await _stop_job(kube, namespace, name)
            return Outcome(True, 200, f"stopped {kind_name} {namespace}/{name} (suspended)")
        await kube.delete(kind, name, namespace)
    except errors.KubeError as exc:
        return Outcome(False, exc.status or 500, exc.message)
    return Outcome(True, 200, f"deleted {kind_name} {namespace}/{name}")


async def _stop_job(kube: AsyncKube, namespace: str, name: str) -> None:
    job = await kube.get(kinds.RAYJOB, name, namespace)
    uid = str((job.get("metadata") or {}).get("uid") or "")
    await kube.patch(kinds.RAYJOB, name, {"spec": {"suspend": True}}, namespace)
    for workload in await kube.list(kinds.WORKLOAD, namespace, labels={JOB_UID_LABEL: uid}):
        await kube.patch(kinds.WORKLOAD, workload["metadata"]["name"], {"spec": {"active": False}}, namespace)
