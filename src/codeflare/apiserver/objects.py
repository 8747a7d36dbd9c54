"""Kubernetes object semantics: create, read, update, patch and delete with the API conventions.

This is where metadata is filled in (uid, generateName, generation, timestamps), schemas are
applied to custom resources, resourceVersions are checked (409 on stale writes), status and main
resource writes are kept apart, finalizers hold deletions, and managedFields are recorded. It is
free of HTTP: the transport layer parses requests and renders results; garbage collection calls
the same methods with the system identity. Type-specific rules live in :mod:`strategies`.
"""

from __future__ import annotations

import copy
import datetime
import logging
import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from codeflare.apiserver import errors, managed_fields, metadata, patch
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.resources import ResourceRegistry, ResourceType
from codeflare.apiserver.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.store import ObjectStore
from codeflare.apiserver.strategies import Strategies

log = logging.getLogger(__name__)

_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_OMITTED_WHEN_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")
_SERVER_OWNED_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
)

PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ListResult:
    """One page of a list: the objects, the list resourceVersion and the continue token."""

    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


@dataclass
class DeleteResult:
    """What a delete did: the object as last seen, and whether it is gone or only marked."""

    obj: dict[str, Any]
    gone: bool


def _spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _strip_volatile(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    meta = dict(out.get("metadata", {}))
    meta.pop("managedFields", None)
    meta.pop("resourceVersion", None)
    out["metadata"] = meta
    return out


class ObjectAPI:
    """The object operations of the API server, over one store and one resource registry."""

    def __init__(
        self,
        store: ObjectStore,
        registry: ResourceRegistry,
        strategies: Strategies,
        clock: Callable[[], str] = now_rfc3339,
    ) -> None:
        self.store = store
        self.registry = registry
        self.strategies = strategies
        self.clock = clock

    # -- helpers -------------------------------------------------------------------------------
    def present(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """The stored object as seen through served version ``rt`` (conversion strategy None)."""
        if obj.get("apiVersion") == rt.api_version:
            return obj
        out = dict(obj)
        out["apiVersion"] = rt.api_version
        return out

    def _require(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(rt.key, namespace, name)
        if obj is None:
            raise errors.not_found(rt.plural, name, rt.group)
        return obj

    def _check_namespace(self, rt: ResourceType, namespace: str, creating: bool) -> None:
        if not rt.namespaced:
            return
        ns = self.store.get("core/namespaces", "", namespace)
        if ns is None:
            raise errors.not_found("namespaces", namespace)
        if creating and ns["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(
                f'{rt.plural} "{{name}}" is forbidden: unable to create new content in namespace '
                f"{namespace} because it is being terminated",
                rt.plural,
                "",
                rt.group,
            )

    def _check_body(self, rt: ResourceType, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON or YAML object")
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

    def _apply_schema(
        self, rt: ResourceType, obj: dict[str, Any], ctx: RequestContext
    ) -> list[errors.FieldError]:
        """Default, prune and validate a custom object against its version's schema."""
        if rt.schema is None:
            return []
        rt.schema.default(obj)
        pruned = rt.schema.prune(obj)
        if pruned and ctx.field_validation != "Ignore":
            messages = [f'unknown field "{p}"' for p in pruned]
            if ctx.field_validation == "Strict":
                raise errors.bad_request("strict decoding error: " + ", ".join(messages))
            ctx.warnings.extend(messages)
        result: list[errors.FieldError] = rt.schema.validate(obj)
        return result

    def _validate(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
    ) -> None:
        meta = obj["metadata"]
        for key in _OMITTED_WHEN_EMPTY:  # Go's omitempty: an emptied map or list is not stored
            if key in meta and meta[key] in (None, {}, []):
                del meta[key]
        causes = metadata.validate_object_meta(meta, namespaced=rt.namespaced, name_rule=rt.name_rule)
        if old is not None:
            causes += metadata.validate_meta_update(old["metadata"], obj["metadata"])
        causes += self._apply_schema(rt, obj, ctx)
        causes += self.strategies.validate(rt, obj, old)
        if causes:
            name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
            raise errors.invalid(rt.kind, name, causes, rt.group)

    def _fill_name(self, rt: ResourceType, meta: dict[str, Any]) -> None:
        if meta.get("name"):
            return
        prefix = meta.get("generateName")
        if not prefix:
            raise errors.invalid(
                rt.kind,
                "",
                [
                    errors.FieldError(
                        errors.FIELD_REQUIRED, "metadata.name", "name or generateName is required"
                    )
                ],
                rt.group,
            )
        if not isinstance(prefix, str):
            raise errors.invalid(
                rt.kind,
                "",
                [
                    errors.FieldError(
                        errors.FIELD_INVALID, "metadata.generateName", "must be a string", prefix
                    )
                ],
                rt.group,
            )
        for _ in range(8):
            suffix = "".join(secrets.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))
            candidate = prefix[:58] + suffix
            if self.store.get(rt.key, str(meta.get("namespace", "")), candidate) is None:
                meta["name"] = candidate
                return
        raise errors.ApiError(409, "AlreadyExists", f"could not generate a unique name from {prefix!r}")

    def _commit(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
    ) -> dict[str, Any]:
        if ctx.dry_run:
            obj["metadata"].setdefault("resourceVersion", old["metadata"]["resourceVersion"] if old else "")
            return obj
        stored = self.store.put(rt.key, obj, old)
        self.strategies.after_write(rt, stored, old)
        return stored

    # -- reads ---------------------------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return self.present(rt, self._require(rt, namespace, name))

    def list_objects(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
        limit: int = 0,
        continue_token: str = "",
    ) -> ListResult:
        start_after: tuple[str, str] | None = None
        list_rv = self.store.resource_version
        if continue_token:
            start_after, list_rv = _decode_continue(continue_token)
        objs: Iterable[dict[str, Any]] = self.store.iter(rt.key, namespace)
        items: list[dict[str, Any]] = []
        pinned_name = field_selector.exact_value("metadata.name") if field_selector else None
        total_after = 0
        for obj in objs:
            meta = obj["metadata"]
            pos = (meta.get("namespace", ""), meta["name"])
            if start_after is not None and pos <= start_after:
                continue
            if pinned_name is not None and meta["name"] != pinned_name:
                continue
            if label_selector is not None and not label_selector.matches(meta.get("labels") or {}):
                continue
            if field_selector is not None and not field_selector.matches(obj):
                continue
            if limit and len(items) >= limit:
                total_after += 1
                continue
            items.append(self.present(rt, obj))
        token = ""
        remaining = None
        if limit and total_after:
            last = items[-1]["metadata"]
            token = _encode_continue((last.get("namespace", ""), last["name"]), list_rv)
            remaining = total_after
        return ListResult(items, list_rv, token, remaining)

    # -- create --------------------------------------------------------------------------------
    def create(self, rt: ResourceType, namespace: str, body: Any, ctx: RequestContext) -> dict[str, Any]:
        obj = self._check_body(rt, body)
        meta = obj["metadata"]
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        self._check_namespace(rt, namespace, creating=True)
        self._fill_name(rt, meta)
        self._prepare_new(rt, obj, ctx)
        if self.store.get(rt.key, meta.get("namespace", ""), meta["name"]) is not None:
            raise errors.already_exists(rt.plural, meta["name"], rt.group)
        meta.pop("managedFields", None)
        managed_fields.record_update(None, obj, manager=ctx.manager(), now=self.clock())
        return self.present(rt, self._commit(rt, obj, None, ctx))

    # -- update --------------------------------------------------------------------------------
    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        ctx: RequestContext,
        subresource: str = "",
        require_version: bool | None = None,
    ) -> dict[str, Any]:
        obj = self._check_body(rt, body)
        meta = obj["metadata"]
        if meta.get("name") not in (None, "", name):
            raise errors.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        old = self._require(rt, namespace, name)
        given_rv = meta.get("resourceVersion")
        if given_rv not in (None, ""):
            if str(given_rv) != old["metadata"]["resourceVersion"]:
                raise errors.conflict(rt.plural, name, rt.group)
        elif require_version if require_version is not None else rt.custom:
            raise errors.invalid(
                rt.kind,
                name,
                [
                    errors.FieldError(
                        errors.FIELD_INVALID, "metadata.resourceVersion", "must be specified for an update", 0
                    )
                ],
                rt.group,
            )
        new = self._merge_for_update(rt, old, obj, subresource)
        return self._finish_update(rt, old, new, ctx, subresource)

    def _merge_for_update(
        self, rt: ResourceType, old: dict[str, Any], obj: dict[str, Any], subresource: str
    ) -> dict[str, Any]:
        """Keep what the caller may not change through this endpoint."""
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
        for key in _SERVER_OWNED_META:
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

    def _finish_update(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        ctx: RequestContext,
        subresource: str,
        apply_manager: bool = True,
    ) -> dict[str, Any]:
        meta = new["metadata"]
        old_meta = old["metadata"]
        if old_meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
            if added:
                raise errors.invalid(
                    rt.kind,
                    meta["name"],
                    [
                        errors.FieldError(
                            errors.FIELD_FORBIDDEN,
                            "metadata.finalizers",
                            f"no new finalizers can be added if the object is being deleted, found new "
                            f"finalizers {sorted(added)}",
                        )
                    ],
                    rt.group,
                )
        self.strategies.prepare_update(rt, new, old)
        self._validate(rt, new, old, ctx)
        if _spec_part(new) != _spec_part(old):
            meta["generation"] = int(old_meta.get("generation", 1)) + 1
        else:
            meta["generation"] = old_meta.get("generation", 1)
        if apply_manager:
            managed_fields.record_update(
                old, new, manager=ctx.manager(), now=self.clock(), subresource=subresource
            )
        if _strip_volatile(new) == _strip_volatile(old):
            return self.present(rt, old)  # no-op: no new resourceVersion, no watch event
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and self.strategies.may_remove(rt, new)
        ):
            if not ctx.dry_run:
                self.store.delete(rt.key, meta.get("namespace", ""), meta["name"])
                self.strategies.after_delete(rt, new)
            return self.present(rt, new)
        return self.present(rt, self._commit(rt, new, old, ctx))

    # -- patch ---------------------------------------------------------------------------------
    def patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch_type: str,
        body: Any,
        ctx: RequestContext,
        subresource: str = "",
        force: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        """Apply a patch; returns (object, created). Only server-side apply may create."""
        old = self.store.get(rt.key, namespace, name)
        if patch_type == "apply":
            return self._apply(rt, namespace, name, old, body, ctx, subresource, force)
        if old is None:
            raise errors.not_found(rt.plural, name, rt.group)
        current = self.present(rt, old)
        if patch_type == "json":
            patched = patch.apply_json_patch(current, body)
        elif patch_type == "merge":
            patched = patch.apply_merge_patch(current, body)
        elif patch_type == "strategic":
            if rt.custom:
                raise errors.unsupported_media_type(
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                )
            patched = patch.apply_strategic_merge_patch(current, body)
        else:
            raise errors.unsupported_media_type(", ".join(patch.PATCH_CONTENT_TYPES))
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch must produce an object")
        patched_meta = patched.get("metadata")
        if isinstance(patched_meta, dict):
            rv = patched_meta.get("resourceVersion")
            if rv not in (None, "") and str(rv) != old["metadata"]["resourceVersion"]:
                raise errors.conflict(rt.plural, name, rt.group)
        obj = self._check_body(rt, patched)
        new = self._merge_for_update(rt, old, obj, subresource)
        return self._finish_update(rt, old, new, ctx, subresource), False

    def _apply(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        old: dict[str, Any] | None,
        body: Any,
        ctx: RequestContext,
        subresource: str,
        force: bool,
    ) -> tuple[dict[str, Any], bool]:
        if not ctx.field_manager:
            raise errors.bad_request("PATCH apply requires fieldManager to be set")
        applied = self._check_body(rt, body)
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
        live = self.present(rt, old) if old is not None else None
        merged = managed_fields.server_side_apply(
            live,
            applied,
            manager=ctx.field_manager,
            force=force,
            now=self.clock(),
            subresource=subresource,
            list_keys=rt.list_map_keys or None,
        )
        if old is None:
            if subresource:
                raise errors.not_found(rt.plural, name, rt.group)
            meta = merged["metadata"]
            managed = meta.get("managedFields")
            created = self._create_applied(rt, namespace, merged, ctx, managed)
            return created, True
        new = self._merge_for_update(rt, old, merged, subresource)
        if subresource == "status":
            new["metadata"]["managedFields"] = merged["metadata"].get("managedFields", [])
        return self._finish_update(rt, old, new, ctx, subresource, apply_manager=False), False

    def _prepare_new(self, rt: ResourceType, obj: dict[str, Any], ctx: RequestContext) -> None:
        """Server-owned metadata of a new object, type defaults, then validation."""
        meta = obj["metadata"]
        for key in _SERVER_OWNED_META:
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self.clock()
        meta["generation"] = 1
        if rt.status_subresource:
            obj.pop("status", None)
        self.strategies.prepare_create(rt, obj)
        self._validate(rt, obj, None, ctx)

    def _create_applied(
        self, rt: ResourceType, namespace: str, obj: dict[str, Any], ctx: RequestContext, managed: Any
    ) -> dict[str, Any]:
        meta = obj["metadata"]
        self._check_namespace(rt, namespace, creating=True)
        self._prepare_new(rt, obj, ctx)
        if managed is not None:
            meta["managedFields"] = managed
        return self.present(rt, self._commit(rt, obj, None, ctx))

    # -- delete --------------------------------------------------------------------------------
    def delete(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        ctx: RequestContext,
        propagation: str = "",
        preconditions: dict[str, Any] | None = None,
    ) -> DeleteResult:
        old = self._require(rt, namespace, name)
        meta = old["metadata"]
        if preconditions:
            uid = preconditions.get("uid")
            if uid and uid != meta.get("uid"):
                raise errors.conflict(
                    rt.plural,
                    name,
                    rt.group,
                    f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}",
                )
            rv = preconditions.get("resourceVersion")
            if rv and str(rv) != meta.get("resourceVersion"):
                raise errors.conflict(
                    rt.plural,
                    name,
                    rt.group,
                    f"Precondition failed: ResourceVersion in precondition: {rv}, "
                    f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
                )
        if propagation and propagation not in PROPAGATION_POLICIES:
            raise errors.bad_request(
                f'propagationPolicy: Unsupported value: "{propagation}": supported values: '
                '"Background", "Foreground", "Orphan"'
            )
        finalizers = list(meta.get("finalizers") or [])
        if propagation == "Foreground" and FOREGROUND_FINALIZER not in finalizers:
            finalizers.append(FOREGROUND_FINALIZER)
        if propagation == "Orphan" and ORPHAN_FINALIZER not in finalizers:
            finalizers.append(ORPHAN_FINALIZER)
        held = bool(finalizers) or not self.strategies.may_remove(rt, old)
        if not held:
            if not ctx.dry_run:
                gone = self.store.delete(rt.key, namespace, name)
                self.strategies.after_delete(rt, old)
                return DeleteResult(self.present(rt, gone or old), True)
            return DeleteResult(self.present(rt, old), True)
        if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []):
            return DeleteResult(self.present(rt, old), False)
        new = copy.deepcopy(old)
        nmeta = new["metadata"]
        nmeta["finalizers"] = finalizers
        nmeta.setdefault("deletionTimestamp", self.clock())
        nmeta.setdefault("deletionGracePeriodSeconds", 0)
        self.strategies.prepare_delete(rt, new)
        if _spec_part(new) != _spec_part(old):
            nmeta["generation"] = int(meta.get("generation", 1)) + 1
        stored = self._commit(rt, new, old, ctx)
        return DeleteResult(self.present(rt, stored), False)

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        ctx: RequestContext,
        label_selector: LabelSelector | None,
        field_selector: FieldSelector | None,
        propagation: str = "",
    ) -> list[DeleteResult]:
        page = self.list_objects(rt, namespace, label_selector, field_selector)
        results = []
        for obj in page.items:
            meta = obj["metadata"]
            try:
                results.append(self.delete(rt, meta.get("namespace", ""), meta["name"], ctx, propagation))
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise
        return results

    # -- scale ---------------------------------------------------------------------------------
    def get_scale(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self._require(rt, namespace, name)
        return _scale_of(rt, obj)

    def update_scale(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        ctx: RequestContext,
        patch_type: str = "",
    ) -> dict[str, Any]:
        obj = self._require(rt, namespace, name)
        scale = _scale_of(rt, obj)
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
            raise errors.invalid(
                "Scale",
                name,
                [
                    errors.FieldError(
                        errors.FIELD_INVALID, "spec.replicas", "must be greater than or equal to 0", replicas
                    )
                ],
                "autoscaling",
            )
        assert rt.scale is not None
        new = copy.deepcopy(obj)
        _set_path(new, rt.scale["specReplicasPath"], replicas)
        updated = self._finish_update(rt, obj, new, ctx, "scale")
        return _scale_of(rt, updated)


def _get_path(obj: Any, dotted: str) -> Any:
    cur = obj
    for part in dotted.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set_path(obj: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.strip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


def _scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    assert rt.scale is not None
    meta = obj["metadata"]
    status: dict[str, Any] = {"replicas": _get_path(obj, rt.scale.get("statusReplicasPath", "")) or 0}
    selector_path = rt.scale.get("labelSelectorPath")
    if selector_path:
        selector = _get_path(obj, selector_path)
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
        "spec": {"replicas": _get_path(obj, rt.scale["specReplicasPath"]) or 0},
        "status": status,
    }


def _encode_continue(after: tuple[str, str], rv: int) -> str:
    import base64
    import json

    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(after)})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[tuple[str, str], int]:
    import base64
    import binascii
    import json

    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        start = data["start"]
        if not (isinstance(start, list) and len(start) == 2 and all(isinstance(s, str) for s in start)):
            raise ValueError("start")
        rv = int(data["rv"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}") from exc
    return (start[0], start[1]), rv
