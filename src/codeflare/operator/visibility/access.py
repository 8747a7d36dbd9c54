"""Who may read pending workloads: SubjectAccessReviews asked for the front proxy's user.

Kueue's visibility server delegates authorization to the API server (k8s.io/apiserver's
delegating authorizer): a SubjectAccessReview for ``get`` on ``clusterqueues/pendingworkloads``
or, in the namespace, ``localqueues/pendingworkloads`` of ``visibility.kueue.x-k8s.io``, which
Kueue's ClusterRoles grant (config/components/rbac: pending-workloads-cq-viewer for batch admins,
pending-workloads-lq-viewer for batch users, both aggregated to view/edit/admin). We ask the same;
for a LocalQueue a user who may ``list`` that namespace's Workloads is allowed too (they can read
the same facts from the Workloads themselves). No decision is cached: each request asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.operator.visibility.pending import GROUP
from codeflare.operator.visibility.server import ApiStatus, RemoteUser
from codeflare.operator.webhooks.server import SUBJECT_ACCESS_REVIEW

Create = Callable[[Kind, Obj], Awaitable[Obj]]


def review(user: RemoteUser, attributes: Obj) -> Obj:
    """The SubjectAccessReview asking ``attributes`` (resourceAttributes) for ``user``."""
    spec: Obj = {"user": user.name, "groups": list(user.groups), "resourceAttributes": attributes}
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra.items()}
    return {"apiVersion": SUBJECT_ACCESS_REVIEW.api_version, "kind": SUBJECT_ACCESS_REVIEW.kind, "spec": spec}


def pending_workloads_attributes(version: str, plural: str, name: str, namespace: str = "") -> Obj:
    attributes: Obj = {"verb": "get", "group": GROUP, "version": version, "resource": plural,
                       "subresource": "pendingworkloads", "name": name}  # fmt: skip
    if namespace:
        attributes["namespace"] = namespace
    return attributes


class AccessReviewer:
    """Asks the API server whether a user may do something (one SubjectAccessReview per question)."""

    def __init__(self, create: Create) -> None:
        self._create = create

    async def allowed(self, user: RemoteUser, attributes: Obj) -> bool:
        try:
            answer = await self._create(SUBJECT_ACCESS_REVIEW, review(user, attributes))
        except errors.KubeError as exc:
            message = f"the SubjectAccessReview could not be made: {exc}"
            raise ApiStatus(500, "InternalError", message) from exc
        return (answer.get("status") or {}).get("allowed") is True

    async def require_cluster_queue(self, user: RemoteUser, version: str, name: str) -> None:
        """403 unless ``user`` may get ``clusterqueues/pendingworkloads`` ``name``."""
        if not await self.allowed(user, pending_workloads_attributes(version, "clusterqueues", name)):
            raise forbidden(user, "clusterqueues/pendingworkloads", name)

    async def require_local_queue(self, user: RemoteUser, version: str, namespace: str, name: str) -> None:
        """403 unless ``user`` may get ``localqueues/pendingworkloads`` there or list its Workloads."""
        if await self.allowed(user, pending_workloads_attributes(version, "localqueues", name, namespace)):
            return
        workloads = {"verb": "list", "group": kinds.WORKLOAD.group, "resource": kinds.WORKLOAD.plural,
                     "namespace": namespace}  # fmt: skip
        if not await self.allowed(user, workloads):
            raise forbidden(user, "localqueues/pendingworkloads", name, namespace)


def forbidden(user: RemoteUser, resource: str, name: str, namespace: str = "") -> ApiStatus:
    plural = resource.partition("/")[0]
    where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    message = (f'{plural}.{GROUP} "{name}" is forbidden: User "{user.name}" cannot get resource '
               f'"{resource}" in API group "{GROUP}"{where}')  # fmt: skip
    return ApiStatus(403, "Forbidden", message, {"name": name, "group": GROUP, "kind": plural})
