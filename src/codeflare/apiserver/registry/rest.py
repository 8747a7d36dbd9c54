"""The rules every write follows before it is stored, whatever the resource.

A body must be an object of the served kind and version (:func:`check_body`); a create without a
name takes one from ``generateName`` (:func:`generate_name`); an update keeps what the caller may
not change through its endpoint - server-owned metadata, the name and namespace, the status of a
resource with a status subresource, or everything but the status on that subresource
(:func:`merge_for_update`); ``generation`` moves only when the spec part changes. These are
k8s.io/apiserver's ``BeforeCreate``/``BeforeUpdate`` steps as pure functions: no store, no I/O.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Callable
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry import builtin_schemas
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.k8s.schema.field import ErrorType, FieldError

NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
OMITTED_WHEN_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")
SERVER_OWNED_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
)
_NAME_ATTEMPTS = 8


def spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata, status and type: what ``generation`` counts changes of."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def strip_volatile(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without managedFields and resourceVersion, to tell a no-op write from a change."""
    out = dict(obj)
    meta = dict(out.get("metadata", {}))
    meta.pop("managedFields", None)
    meta.pop("resourceVersion", None)
    out["metadata"] = meta
    return out


def next_generation(new: dict[str, Any], old: dict[str, Any]) -> int:
    """The generation ``new`` gets: one more than ``old``'s when its spec part changed."""
    generation = old["metadata"].get("generation", 1)
    return int(generation) + 1 if spec_part(new) != spec_part(old) else generation


def check_type_meta(rt: ResourceType, body: dict[str, Any]) -> None:
    """400 when ``body`` names another apiVersion or kind than the endpoint serves (absent is fine)."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if api_version not in (None, "") and api_version != rt.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({rt.api_version})"
        )
    if kind not in (None, "") and kind != rt.kind:
        raise errors.bad_request(
            f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
        )


def check_body(rt: ResourceType, body: Any) -> dict[str, Any]:
    """A copy of ``body`` typed as ``rt`` (apiVersion and kind filled in, metadata an object)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON or YAML object")
    check_type_meta(rt, body)
    meta = body.get("metadata", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    out = dict(body)
    out["metadata"] = dict(meta)
    out["apiVersion"] = rt.api_version
    out["kind"] = rt.kind
    return out


def generate_name(rt: ResourceType, meta: dict[str, Any], taken: Callable[[str], bool]) -> None:
    """Give ``meta`` a name from its ``generateName`` (5 random characters) unless it has one."""
    if meta.get("name"):
        return
    prefix = meta.get("generateName")
    if not prefix:
        cause = FieldError(ErrorType.REQUIRED, "metadata.name", "name or generateName is required")
        raise errors.invalid(rt.kind, "", [cause], rt.group)
    if not isinstance(prefix, str):
        cause = FieldError(ErrorType.INVALID, "metadata.generateName", "must be a string", prefix)
        raise errors.invalid(rt.kind, "", [cause], rt.group)
    for _ in range(_NAME_ATTEMPTS):
        suffix = "".join(secrets.choice(NAME_SUFFIX_ALPHABET) for _ in range(5))
        candidate = prefix[:58] + suffix
        if not taken(candidate):
            meta["name"] = candidate
            return
    raise errors.ApiError(409, "AlreadyExists", f"could not generate a unique name from {prefix!r}")


def merge_for_update(
    rt: ResourceType, old: dict[str, Any], obj: dict[str, Any], subresource: str
) -> dict[str, Any]:
    """The object an update of ``old`` with ``obj`` stores, before validation and bookkeeping."""
    if subresource == "status":
        new = copy.deepcopy(old)
        if "status" in obj:
            new["status"] = obj["status"]
        else:
            new.pop("status", None)
        return new
    new = dict(obj)
    meta = dict(obj["metadata"])
    old_meta = old["metadata"]
    for key in SERVER_OWNED_META:
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    meta["name"] = old_meta["name"]
    if rt.namespaced:
        meta["namespace"] = old_meta.get("namespace", "")
    if "managedFields" not in meta and "managedFields" in old_meta:
        meta["managedFields"] = old_meta["managedFields"]
    new["metadata"] = meta
    if rt.status_subresource:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    return new


def no_new_finalizers_while_deleting(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
    """Refuse (422) finalizers added to an object whose deletion has started."""
    meta, old_meta = new["metadata"], old["metadata"]
    if not old_meta.get("deletionTimestamp"):
        return
    added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
    if added:
        cause = FieldError(
            ErrorType.FORBIDDEN,
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, found new "
            f"finalizers {sorted(added)}",
        )
        raise errors.invalid(rt.kind, meta["name"], [cause], rt.group)


def check_update_target(rt: ResourceType, namespace: str, name: str, meta: dict[str, Any]) -> None:
    """400 when an update body names another object than the URL does."""
    if meta.get("name") not in (None, "", name):
        raise errors.bad_request(
            f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
        )
    if rt.namespaced and meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


def check_update_version(
    rt: ResourceType, name: str, meta: dict[str, Any], old: dict[str, Any], require_version: bool | None
) -> None:
    """409 for a stale resourceVersion; 422 for none where one is required (custom resources, by
    default, as Kubernetes requires for them; ``require_version`` overrides)."""
    given_rv = meta.get("resourceVersion")
    if given_rv not in (None, ""):
        if str(given_rv) != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.plural, name, rt.group)
    elif require_version if require_version is not None else rt.custom:
        cause = FieldError(
            ErrorType.INVALID, "metadata.resourceVersion", "must be specified for an update", 0
        )
        raise errors.invalid(rt.kind, name, [cause], rt.group)


def apply_schema(
    rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
) -> list[FieldError]:
    """Default, prune and validate an object against its kind's schema, in place.

    Custom resources use their CRD version's schema; built-in kinds the schema the server
    publishes for them (:mod:`~codeflare.apiserver.registry.builtin_schemas`), whose absent
    required fields get their zero values and whose quantities are written as canonical strings.
    Pruned fields, with the duplicate fields the body decoder found, are reported by
    :func:`report_fields` per ``fieldValidation``.
    The validation errors are returned. ``old`` is the stored object an update replaces (None
    on create), for the schema's transition rules.
    """
    builtin = None if rt.custom else builtin_schemas.compiled(rt.group, rt.version, rt.kind)
    schema = builtin.compiled if builtin is not None else rt.schema
    if schema is None:
        report_fields(ctx, [], typed=False)
        return []
    if builtin is not None:
        builtin.fill_required(obj)  # built-in schemas have no defaults: only nulls to drop
    else:
        schema.default(obj)
    pruned = schema.prune(obj)  # in document order, as Go's decoder meets them; CRDs sort them
    report_fields(ctx, pruned if builtin is not None else sorted(pruned), typed=builtin is not None)
    result: list[FieldError] = schema.validate(obj, old)
    if builtin is not None and not result:
        result = builtin.canonical_scalars(obj)
    return result


def note_duplicates(ctx: RequestContext, body: Any) -> None:
    """Keep the duplicate fields the body decoder found (``DecodedObject.duplicate_fields``)."""
    ctx.duplicate_fields = list(getattr(body, "duplicate_fields", ()))


def report_fields(ctx: RequestContext, pruned: list[str], typed: bool) -> None:
    """Duplicate and unknown (pruned) fields: a 400 (``Strict``), warnings (``Warn``) or nothing.

    Duplicates come from the body decoder (``ctx.duplicate_fields``), first, as kube-apiserver
    lists them; for ``typed`` (built-in) kinds a field both duplicated and unknown is reported
    once, as unknown, as kube-apiserver does. Paths are quoted as Go's %q quotes ASCII (control
    characters escaped: the messages become headers).
    """
    duplicates = [message for path, message in ctx.duplicate_fields if not (typed and path in pruned)]
    ctx.duplicate_fields = []
    if ctx.field_validation == "Ignore" or not (pruned or duplicates):
        return
    messages = duplicates + [f"unknown field {json.dumps(p)}" for p in pruned]
    if ctx.field_validation == "Strict":
        raise errors.bad_request("strict decoding error: " + ", ".join(messages))
    ctx.warnings.extend(messages)
