"""Kubernetes object semantics: create, read, update, patch and delete with the API conventions.

:class:`ObjectAPI` is where metadata is filled in (uid, generateName, generation, timestamps),
schemas are applied to custom resources, resourceVersions are checked (409 on stale writes),
status and main resource writes are kept apart, finalizers hold deletions, and managedFields are
recorded. The rules themselves live beside it - :mod:`rest` (what a write may change),
:mod:`listing`, :mod:`deletion`, :mod:`scale`, :mod:`metadata`, :mod:`patch`, :mod:`apply` - and
type-specific ones in :mod:`strategies`. It is free of HTTP: the endpoints parse requests and
render results; garbage collection calls the same methods with the system identity.
"""

from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry import managed_fields, metadata, rest
from codeflare.apiserver.registry.apply import server_side_apply
from codeflare.apiserver.registry.conversion import Converter
from codeflare.apiserver.registry.deletion import (
    DeleteResult,
    check_preconditions,
    finalizers_after_delete,
    marked_for_deletion,
)
from codeflare.apiserver.registry.listing import ListResult, list_page
from codeflare.apiserver.registry.patching import apply_configuration, patched_object
from codeflare.apiserver.registry.resources import ResourceRegistry, ResourceType
from codeflare.apiserver.registry.scale import replicas_from, scale_of, set_path
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.registry.strategies import Strategies
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.schema.objectmeta import validate_object_meta
from codeflare.k8s.timestamps import now_rfc3339

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedWrite:
    """A write computed and validated but not stored: ``shown`` is the object as it will be
    stored (what admission sees), ``old`` the stored object it was computed from (None for a
    create), and ``commit()`` stores it (a dry run stores nothing) and returns the result.
    Committing later is right only while the stored object is still ``old``: callers check its
    resourceVersion first (admission interleaves other requests)."""

    shown: dict[str, Any]
    old: dict[str, Any] | None
    commit: Callable[[], dict[str, Any]]


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
        self.converter = Converter(store)

    # -- helpers -------------------------------------------------------------------------------
    def present(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """The stored object as seen through served version ``rt`` (converted by its CRD's strategy)."""
        if obj.get("apiVersion") == rt.api_version:
            return obj
        return self.converter.convert(rt.conversion, rt.kind, [obj], rt.api_version)[0]

    def _to_storage(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        if not rt.custom or obj.get("apiVersion") == rt.storage_api_version:
            return obj
        return self.converter.convert(rt.conversion, rt.kind, [obj], rt.storage_api_version)[0]

    def _stored_view(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored object at ``rt``'s version (what writes through ``rt`` merge into), or None."""
        obj = self.store.get(rt.key, namespace, name)
        return None if obj is None else self.present(rt, obj)

    def _require(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self._stored_view(rt, namespace, name)
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

    def _prepare(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
    ) -> None:
        """The kind's create/update preparation. It assumes well-typed fields, which kube-apiserver
        guarantees by decoding first: a body it cannot digest is answered with its type errors."""
        try:
            if old is None:
                self.strategies.prepare_create(rt, obj)
            else:
                self.strategies.prepare_update(rt, obj, old)
        except (TypeError, AttributeError, KeyError, ValueError):
            causes = rest.apply_schema(rt, copy.deepcopy(obj), old, ctx)
            if not causes:
                raise
            name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
            raise errors.invalid(rt.kind, name, causes, rt.group) from None

    def _validate(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
    ) -> None:
        meta = obj["metadata"]
        for key in rest.OMITTED_WHEN_EMPTY:  # Go's omitempty: an emptied map or list is not stored
            if key in meta and meta[key] in (None, {}, []):
                del meta[key]
        causes = validate_object_meta(meta, namespaced=rt.namespaced, name_rule=rt.name_rule)
        if old is not None:
            causes += metadata.validate_meta_update(old["metadata"], obj["metadata"])
        schema_causes = rest.apply_schema(rt, obj, old, ctx)
        causes += schema_causes
        if not schema_causes:  # a mistyped body stops at its types, as kube-apiserver's decoding does
            causes += self.strategies.validate(rt, obj, old)
        if causes:
            name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
            raise errors.invalid(rt.kind, name, causes, rt.group)

    def _commit(
        self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, ctx: RequestContext
    ) -> dict[str, Any]:
        if ctx.dry_run:
            obj["metadata"].setdefault("resourceVersion", old["metadata"]["resourceVersion"] if old else "")
            return obj
        stored = self.store.put(rt.key, self._to_storage(rt, obj), old)
        self.strategies.after_write(rt, stored, old)
        return stored

    # -- reads ---------------------------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return self._require(rt, namespace, name)

    def list_objects(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
        limit: int = 0,
        continue_token: str = "",
    ) -> ListResult:
        resource_version = self.store.resource_version
        objs = self.store.iter(rt.key, namespace)
        batched = rt.conversion is not None  # one ConversionReview for the page, as kube batches it
        page = list_page(
            objs,
            (lambda obj: obj) if batched else (lambda obj: self.present(rt, obj)),
            resource_version,
            label_selector,
            field_selector,
            limit,
            continue_token,
        )
        if batched:
            page.items = self.converter.convert(rt.conversion, rt.kind, page.items, rt.api_version)
        return page

    # -- create --------------------------------------------------------------------------------
    def create(self, rt: ResourceType, namespace: str, body: Any, ctx: RequestContext) -> dict[str, Any]:
        return self.prepare_create(rt, namespace, body, ctx).commit()

    def prepare_create(
        self, rt: ResourceType, namespace: str, body: Any, ctx: RequestContext
    ) -> PreparedWrite:
        """:meth:`create` up to the store; ``body`` becomes the prepared object."""
        rest.note_duplicates(ctx, body)
        obj = rest.check_body(rt, body)
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
        rest.generate_name(
            rt, meta, lambda name: self.store.get(rt.key, str(meta.get("namespace", "")), name) is not None
        )
        self._prepare_new(rt, obj, ctx)
        self._check_absent(rt, obj)
        meta.pop("managedFields", None)
        managed_fields.record_update(None, obj, manager=ctx.manager(), now=self.clock())
        return self._prepared_create(rt, namespace, obj, ctx)

    def _check_absent(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        if self.store.get(rt.key, meta.get("namespace", ""), meta["name"]) is not None:
            raise errors.already_exists(rt.plural, meta["name"], rt.group)

    def _prepared_create(
        self, rt: ResourceType, namespace: str, obj: dict[str, Any], ctx: RequestContext
    ) -> PreparedWrite:
        def commit() -> dict[str, Any]:
            # again: the namespace may be going and the name taken since (admission interleaves)
            self._check_namespace(rt, namespace, creating=True)
            self._check_absent(rt, obj)
            return self.present(rt, self._commit(rt, obj, None, ctx))

        return PreparedWrite(self.present(rt, obj), None, commit)

    def _prepare_new(self, rt: ResourceType, obj: dict[str, Any], ctx: RequestContext) -> None:
        """Server-owned metadata of a new object, type defaults, then validation."""
        meta = obj["metadata"]
        for key in rest.SERVER_OWNED_META:
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self.clock()
        meta["generation"] = 1
        if rt.status_subresource:
            obj.pop("status", None)
        self._prepare(rt, obj, None, ctx)
        self._validate(rt, obj, None, ctx)

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
        return self.prepare_update(rt, namespace, name, body, ctx, subresource, require_version).commit()

    def prepare_update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        ctx: RequestContext,
        subresource: str = "",
        require_version: bool | None = None,
    ) -> PreparedWrite:
        """:meth:`update` up to the store."""
        rest.note_duplicates(ctx, body)
        obj = rest.check_body(rt, body)
        rest.check_update_target(rt, namespace, name, obj["metadata"])
        old = self._require(rt, namespace, name)
        rest.check_update_version(rt, name, obj["metadata"], old, require_version)
        new = rest.merge_for_update(rt, old, obj, subresource)
        return self._prepare_finish(rt, old, new, ctx, subresource)

    def _prepare_finish(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        ctx: RequestContext,
        subresource: str,
        apply_manager: bool = True,
    ) -> PreparedWrite:
        meta = new["metadata"]
        rest.no_new_finalizers_while_deleting(rt, old, new)
        self._prepare(rt, new, old, ctx)
        self._validate(rt, new, old, ctx)
        meta["generation"] = rest.next_generation(new, old)
        if apply_manager:
            managed_fields.record_update(
                old, new, manager=ctx.manager(), now=self.clock(), subresource=subresource
            )
        if rest.strip_volatile(new) == rest.strip_volatile(old):
            unchanged = self.present(rt, old)  # no-op: no new resourceVersion, no watch event
            return PreparedWrite(unchanged, old, lambda: unchanged)
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and self.strategies.may_remove(rt, new)
        ):

            def remove() -> dict[str, Any]:
                if not ctx.dry_run:
                    self.store.delete(rt.key, meta.get("namespace", ""), meta["name"])
                    self.strategies.after_delete(rt, new)
                return self.present(rt, new)

            return PreparedWrite(self.present(rt, new), old, remove)
        return PreparedWrite(
            self.present(rt, new), old, lambda: self.present(rt, self._commit(rt, new, old, ctx))
        )

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
        prepared, created = self.prepare_patch(
            rt, namespace, name, patch_type, body, ctx, subresource, force
        )
        return prepared.commit(), created

    def prepare_patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch_type: str,
        body: Any,
        ctx: RequestContext,
        subresource: str = "",
        force: bool = False,
    ) -> tuple[PreparedWrite, bool]:
        """:meth:`patch` up to the store; returns (the prepared write, whether it creates)."""
        rest.note_duplicates(ctx, body)
        old = self._stored_view(rt, namespace, name)
        if patch_type == "apply":
            return self._apply(rt, namespace, name, old, body, ctx, subresource, force)
        if old is None:
            raise errors.not_found(rt.plural, name, rt.group)
        current = self.present(rt, old)
        obj = patched_object(rt, name, current, old["metadata"]["resourceVersion"], patch_type, body)
        new = rest.merge_for_update(rt, old, obj, subresource)
        return self._prepare_finish(rt, old, new, ctx, subresource), False

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
    ) -> tuple[PreparedWrite, bool]:
        applied = apply_configuration(rt, namespace, name, old, body, ctx)
        live = self.present(rt, old) if old is not None else None
        merged = server_side_apply(
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
            self._check_namespace(rt, namespace, creating=True)
            self._prepare_new(rt, merged, ctx)
            if managed is not None:
                meta["managedFields"] = managed
            return self._prepared_create(rt, namespace, merged, ctx), True
        new = rest.merge_for_update(rt, old, merged, subresource)
        if subresource == "status":
            new["metadata"]["managedFields"] = merged["metadata"].get("managedFields", [])
        return self._prepare_finish(rt, old, new, ctx, subresource, apply_manager=False), False

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
            check_preconditions(rt, name, meta, preconditions)
        finalizers = finalizers_after_delete(meta, propagation)
        held = bool(finalizers) or not self.strategies.may_remove(rt, old)
        if not held:
            if not ctx.dry_run:
                gone = self.store.delete(rt.key, namespace, name)
                self.strategies.after_delete(rt, old)
                return DeleteResult(self.present(rt, gone or old), True)
            return DeleteResult(self.present(rt, old), True)
        if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []):
            return DeleteResult(self.present(rt, old), False)
        new = marked_for_deletion(old, finalizers, self.clock())
        self.strategies.prepare_delete(rt, new)
        if rest.spec_part(new) != rest.spec_part(old):
            new["metadata"]["generation"] = int(meta.get("generation", 1)) + 1
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
        return scale_of(rt, self._require(rt, namespace, name))

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
        replicas = replicas_from(rt, name, obj, body, patch_type)
        assert rt.scale is not None
        new = copy.deepcopy(obj)
        set_path(new, rt.scale["specReplicasPath"], replicas)
        updated = self._prepare_finish(rt, obj, new, ctx, "scale").commit()
        return scale_of(rt, updated)
