"""What a PATCH turns the stored object into, before the update rules apply.

:func:`patched_object` applies a JSON, merge or strategic merge patch to the object as served
(strategic merge only for built-in kinds: custom resources answer 415, as in Kubernetes) and
checks what a patch may not change: the resourceVersion it may carry (409), the name and
namespace (400, kube-apiserver's ``checkName``) and the uid and creationTimestamp (422, "field is
immutable"); :func:`apply_configuration` checks a server-side apply body against the request
(apiVersion and kind, name, namespace, resourceVersion, a field manager). Merging the apply
configuration is :mod:`managed_fields`'; storing the result is the object API's. Pure.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry import patch, rest
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.k8s.schema.field import ErrorType, FieldError

_NOT_STRATEGIC = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"


def patched_object(
    rt: ResourceType, name: str, current: dict[str, Any], stored_rv: str, patch_type: str, body: Any
) -> dict[str, Any]:
    """``current`` with the ``json``, ``merge`` or ``strategic`` patch ``body`` applied, typed as ``rt``."""
    if patch_type == "json":
        patched = patch.apply_json_patch(current, body)
    elif patch_type == "merge":
        patched = patch.apply_merge_patch(current, body)
    elif patch_type == "strategic":
        if rt.custom:
            raise errors.unsupported_media_type(_NOT_STRATEGIC)
        patched = patch.apply_strategic_merge_patch(current, body)
    else:
        raise errors.unsupported_media_type(", ".join(patch.PATCH_CONTENT_TYPES))
    if not isinstance(patched, dict):
        raise errors.bad_request("the patch must produce an object")
    patched_meta = patched.get("metadata")
    if isinstance(patched_meta, dict):
        rv = patched_meta.get("resourceVersion")
        if rv not in (None, "") and str(rv) != stored_rv:
            raise errors.conflict(rt.plural, name, rt.group)
    checked = rest.check_body(rt, patched)
    _check_identity(rt, name, current["metadata"], checked["metadata"])
    return checked


def _check_identity(rt: ResourceType, name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """What a patch may not change: the object it addresses (400) and its identity (422)."""
    new_name = new.get("name") or ""
    if new_name != name:
        raise errors.bad_request(
            f"the name of the object ({new_name}) does not match the name on the URL ({name})"
        )
    namespace = old.get("namespace") or ""
    if rt.namespaced and new.get("namespace") not in (None, "", namespace):
        raise errors.bad_request(
            f"the namespace of the object ({new['namespace']}) does not match the namespace on the "
            f"request ({namespace})"
        )
    causes = [
        FieldError(ErrorType.INVALID, f"metadata.{key}", "field is immutable", new[key])
        for key in ("uid", "creationTimestamp")
        if new.get(key) not in (None, "", old.get(key))
    ]
    if causes:
        raise errors.invalid(rt.kind, name, causes, rt.group)


def apply_configuration(
    rt: ResourceType,
    namespace: str,
    name: str,
    old: dict[str, Any] | None,
    body: Any,
    ctx: RequestContext,
) -> dict[str, Any]:
    """The apply configuration ``body`` typed as ``rt`` and pinned to the request's object."""
    if not ctx.field_manager:
        raise errors.bad_request("PATCH apply requires fieldManager to be set")
    if isinstance(body, dict):
        # An apply configuration names its type (kube-apiserver's structuredmerge: the version is
        # checked; a missing kind fails its typed conversion, a 500 there, a 400 here).
        for key, what, expected in (("apiVersion", "version", rt.api_version), ("kind", "kind", rt.kind)):
            if not body.get(key):
                raise errors.bad_request(
                    f"Incorrect {what} specified in apply patch. "
                    f"Specified patch {what}: , expected: {expected}"
                )
    applied = rest.check_body(rt, body)
    ameta = applied["metadata"]
    if ameta.get("name") not in (None, "", name):
        raise errors.bad_request(
            f"the name of the object ({ameta.get('name')}) does not match the name on the URL ({name})"
        )
    ameta["name"] = name
    if rt.namespaced:
        if ameta.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        ameta["namespace"] = namespace
    rv = ameta.get("resourceVersion")
    if old is not None and rv not in (None, "") and str(rv) != old["metadata"]["resourceVersion"]:
        raise errors.conflict(rt.plural, name, rt.group)
    return applied
