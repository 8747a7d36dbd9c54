"""What a PATCH turns the stored object into, before the update rules apply.

:func:`patched_object` applies a JSON, merge or strategic merge patch to the object as served
(strategic merge only for built-in kinds: custom resources answer 415, as in Kubernetes) and
checks the resourceVersion a patch may carry; :func:`apply_configuration` checks a server-side
apply body against the request (name, namespace, resourceVersion, a field manager). Merging the
apply configuration is :mod:`managed_fields`'; storing the result is the object API's. Pure.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry import patch, rest
from codeflare.apiserver.registry.resources import ResourceType

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
    return rest.check_body(rt, patched)


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
