"""AdmissionReview plumbing: the request as data, the response, JSONPatch, and dispatch by path.

:func:`review` answers one ``admission.k8s.io/v1`` AdmissionReview for one webhook path; a
mutating rule returns the object it wants, from which a JSONPatch against the submitted object
is computed here. Rules live in :mod:`.raycluster`, :mod:`.appwrapper` and :mod:`.kueue`; this
module knows nothing about what they decide and does no I/O.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.k8s.types import Obj

__all__ = [
    "AccessCheck",
    "AdmissionRequest",
    "AdmissionSettings",
    "Verdict",
    "allowed",
    "denied",
    "json_patch",
    "response_review",
]

API_VERSION = "admission.k8s.io/v1"


@dataclass(frozen=True)
class AdmissionSettings:
    """What the rules need to know about the operator and the cluster it runs in."""

    operator_version: str = ""
    mtls_enabled: bool = True
    oauth_enabled: bool = False  # rayDashboardOAuthEnabled and running on OpenShift
    default_queue_name: str = ""
    user_rbac_admission_check: bool = True


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of an AdmissionReview request the rules read."""

    uid: str
    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    namespace: str
    name: str
    obj: Obj
    old: Obj | None = None
    username: str = ""
    user_uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_review(cls, review: Mapping[str, Any]) -> AdmissionRequest:
        """Parse an AdmissionReview; ValueError when it is not one."""
        request = review.get("request")
        if review.get("kind") != "AdmissionReview" or not isinstance(request, dict) or not request.get("uid"):
            raise ValueError("expected an admission.k8s.io/v1 AdmissionReview with request.uid")
        obj = request.get("object")
        old = request.get("oldObject")
        user = request.get("userInfo") or {}
        meta = (obj or old or {}).get("metadata") or {}
        return cls(
            uid=str(request["uid"]),
            operation=str(request.get("operation", "")),
            namespace=str(request.get("namespace") or meta.get("namespace") or ""),
            name=str(request.get("name") or meta.get("name") or ""),
            obj=obj if isinstance(obj, dict) else {},
            old=old if isinstance(old, dict) else None,
            username=str(user.get("username", "")),
            user_uid=str(user.get("uid", "")),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            extra={str(k): list(v) for k, v in (user.get("extra") or {}).items()},
        )


@dataclass(frozen=True)
class AccessCheck:
    """One question for a SubjectAccessReview: may the requesting user ``verb`` this resource?"""

    component: int
    group: str
    version: str
    resource: str
    namespace: str
    name: str
    verb: str = "create"
    kind: str = ""  # the wrapped object's kind; ``resource`` is "" when the API does not serve it

    def describe(self) -> str:
        what = f"{self.resource or self.kind}.{self.group}" if self.group else self.resource or self.kind
        return f"{self.verb} {what} in namespace {self.namespace}"


@dataclass(frozen=True)
class Verdict:
    """A rule's answer: allowed or not (with the message), plus the mutated object or warnings."""

    allowed: bool
    message: str = ""
    mutated: Obj | None = None
    warnings: tuple[str, ...] = ()


def allowed(mutated: Obj | None = None, warnings: tuple[str, ...] = ()) -> Verdict:
    return Verdict(True, "", mutated, warnings)


def denied(*problems: str) -> Verdict:
    return Verdict(False, "; ".join(problems))


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_patch(before: Any, after: Any, path: str = "") -> list[Obj]:
    """RFC 6902 operations turning ``before`` into ``after`` (lists of unequal length are replaced)."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[Obj] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in after.items():
            sub = f"{path}/{_escape(key)}"
            if key not in before:
                ops.append({"op": "add", "path": sub, "value": value})
            else:
                ops.extend(json_patch(before[key], value, sub))
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        ops = []
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            ops.extend(json_patch(old, new, f"{path}/{index}"))
        return ops
    return [{"op": "replace", "path": path or "", "value": after}]


def response_review(request: AdmissionRequest | None, verdict: Verdict, uid: str = "") -> Obj:
    """The AdmissionReview to send back for ``verdict`` (JSONPatch when the object changed)."""
    response: Obj = {"uid": request.uid if request else uid, "allowed": verdict.allowed}
    if not verdict.allowed:
        response["status"] = {"code": 403, "reason": "Forbidden", "message": verdict.message}
    if verdict.allowed and verdict.mutated is not None and request is not None:
        ops = json_patch(request.obj, verdict.mutated)
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
    if verdict.warnings:
        response["warnings"] = list(verdict.warnings)
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": response}


Rule = Callable[[AdmissionRequest, AdmissionSettings], Verdict]
