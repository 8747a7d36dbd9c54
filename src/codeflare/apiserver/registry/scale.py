"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a resource's replica count.

A resource with a scale subresource names where its replicas live (``specReplicasPath``,
``statusReplicasPath``, ``labelSelectorPath``, as CRDs declare them); :func:`scale_of` builds the
Scale object from those paths and :func:`replicas_from` reads the replica count a Scale write
asks for (PUT body, JSON patch or merge patch), refusing anything but a non-negative integer.
Writing the count back is the object API's update. Pure functions.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.registry import patch
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.k8s.schema.field import ErrorType, FieldError


def get_path(obj: Any, dotted: str) -> Any:
    cur = obj
    for part in dotted.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def set_path(obj: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.strip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


def scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale object of ``obj``."""
    assert rt.scale is not None
    meta = obj["metadata"]
    status: dict[str, Any] = {"replicas": get_path(obj, rt.scale.get("statusReplicasPath", "")) or 0}
    selector_path = rt.scale.get("labelSelectorPath")
    if selector_path:
        selector = get_path(obj, selector_path)
        if selector:
            status["selector"] = selector
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": get_path(obj, rt.scale["specReplicasPath"]) or 0},
        "status": status,
    }


def replicas_from(rt: ResourceType, name: str, obj: dict[str, Any], body: Any, patch_type: str = "") -> int:
    """The replica count a Scale write of ``obj`` sets (a PUT when ``patch_type`` is empty)."""
    scale = scale_of(rt, obj)
    if patch_type:
        if patch_type == "json":
            scale = patch.apply_json_patch(scale, body)
        elif patch_type in ("merge", "strategic"):
            scale = patch.apply_merge_patch(scale, body)
        else:
            raise errors.unsupported_media_type("application/merge-patch+json")
    elif isinstance(body, dict):
        given_rv = (body.get("metadata") or {}).get("resourceVersion")
        if given_rv and str(given_rv) != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.plural, name, rt.group)
        scale = body
    else:
        raise errors.bad_request("the body must be a Scale object")
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        cause = FieldError(ErrorType.INVALID, "spec.replicas", "must be greater than or equal to 0", replicas)
        raise errors.invalid("Scale", name, [cause], "autoscaling")
    return replicas
