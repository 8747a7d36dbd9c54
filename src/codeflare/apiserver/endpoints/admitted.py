"""Writes that pass admission: prepare the candidate, admit it, then commit it.

The object API is synchronous, admission is not: webhooks may take seconds and may mutate the
candidate, and other requests interleave meanwhile. So a write under admission is first prepared
(computed and validated, not stored), the candidate is admitted, and the commit is guarded by the
resourceVersion the candidate was computed from: updates answer 409 when it moved, patches are
recomputed (up to five times). A candidate no webhook mutated is committed as prepared; a mutated
one is written again through the object API, which validates it. Writes nothing under admission
wants go straight to the object API.
"""

from __future__ import annotations

import copy
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.endpoints.request import RequestAttributes, attrs_of, scratch
from codeflare.apiserver.registry.objects import ObjectAPI, PreparedWrite
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.security.admission import Admission, AdmissionRequest

_PATCH_ATTEMPTS = 5


def _committed(prepared: PreparedWrite, own: RequestContext, ctx: RequestContext) -> dict[str, Any]:
    """Commit a prepared write; its warnings become the request's."""
    result = prepared.commit()
    ctx.warnings.extend(own.warnings)
    return result


class AdmittedWrites:
    """The write paths of the HTTP layer, with admission in front of the object API."""

    def __init__(self, api: ObjectAPI, admission: Admission | None) -> None:
        self.api = api
        self.admission = admission

    def wanted(self, operation: str, rt: ResourceType, sub: str, ctx: RequestContext) -> bool:
        """Whether anything in admission acts on this write (False: write it straight away)."""
        return self.admission is not None and self.admission.wants(operation, rt, sub, ctx)

    async def admit(
        self,
        operation: str,
        rt: ResourceType,
        attrs: RequestAttributes,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        ctx: RequestContext,
        options_kind: str,
    ) -> Any:
        """Run the admission chain over a candidate; returns it, possibly mutated, or raises."""
        assert self.admission is not None
        name = attrs.name or str(((obj or {}).get("metadata") or {}).get("name") or "")
        req = AdmissionRequest(
            operation, rt, attrs.subresource, attrs.namespace, name, obj, old, ctx, options_kind
        )
        return await self.admission.admit(req)

    async def create(
        self, rt: ResourceType, attrs: RequestAttributes, body: Any, ctx: RequestContext
    ) -> dict[str, Any]:
        api = self.api
        if not self.wanted("CREATE", rt, "", ctx):
            return api.create(rt, attrs.namespace, body, ctx)
        own = scratch(ctx)
        prepared = api.prepare_create(rt, attrs.namespace, body, own)
        admitted = await self.admit("CREATE", rt, attrs, prepared.shown, None, ctx, "CreateOptions")
        if admitted is prepared.shown:  # nothing mutated it: store what was prepared
            return _committed(prepared, own, ctx)
        return api.create(rt, attrs.namespace, admitted, ctx)

    async def update(
        self, rt: ResourceType, attrs: RequestAttributes, body: Any, ctx: RequestContext, sub: str
    ) -> dict[str, Any]:
        api, ns, name = self.api, attrs.namespace, attrs.name
        if not self.wanted("UPDATE", rt, sub, ctx):
            return api.update(rt, ns, name, body, ctx, subresource=sub)
        own = scratch(ctx)
        prepared = api.prepare_update(rt, ns, name, body, own, subresource=sub)
        assert prepared.old is not None
        base = api.present(rt, prepared.old)
        admitted = await self.admit("UPDATE", rt, attrs, prepared.shown, base, ctx, "UpdateOptions")
        base_rv = self._unchanged_since(rt, ns, name, prepared.old)
        if admitted is prepared.shown:
            return _committed(prepared, own, ctx)
        admitted["metadata"]["resourceVersion"] = base_rv
        return api.update(rt, ns, name, admitted, ctx, subresource=sub, require_version=True)

    def _unchanged_since(self, rt: ResourceType, ns: str, name: str, old: dict[str, Any]) -> str:
        """The resourceVersion of ``old``, if it is still the stored object (404/409 otherwise)."""
        current = self.api.store.get(rt.key, ns, name)
        base_rv = str(old["metadata"]["resourceVersion"])
        if current is None:
            raise errors.not_found(rt.plural, name, rt.group)
        if current["metadata"]["resourceVersion"] != base_rv:
            raise errors.conflict(rt.plural, name, rt.group)
        return base_rv

    async def patch(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        patch_type: str,
        body: Any,
        ctx: RequestContext,
        sub: str,
        force: bool,
    ) -> tuple[dict[str, Any], bool]:
        """Apply a patch (or server-side apply, which may create); returns (object, created)."""
        api = self.api
        attrs = attrs_of(rt, ns, name, sub)
        for _ in range(_PATCH_ATTEMPTS):
            base = api.store.get(rt.key, ns, name)
            operation = "CREATE" if base is None else "UPDATE"
            if not self.wanted(operation, rt, sub, ctx):
                return api.patch(rt, ns, name, patch_type, body, ctx, subresource=sub, force=force)
            own = scratch(ctx)
            prepared, created = api.prepare_patch(
                rt, ns, name, patch_type, copy.deepcopy(body), own, subresource=sub, force=force
            )
            old = api.present(rt, base) if base is not None else None
            admitted = await self.admit(operation, rt, attrs, prepared.shown, old, ctx, "PatchOptions")
            current = api.store.get(rt.key, ns, name)
            base_rv = base["metadata"]["resourceVersion"] if base is not None else None
            current_rv = current["metadata"]["resourceVersion"] if current is not None else None
            if current_rv != base_rv:
                continue  # changed while the webhooks ran: recompute the patch on the new object
            if admitted is prepared.shown:
                return _committed(prepared, own, ctx), created
            if created:
                return api.create(rt, ns, admitted, ctx), True
            admitted["metadata"]["resourceVersion"] = base_rv
            return api.update(rt, ns, name, admitted, ctx, subresource=sub, require_version=True), False
        raise errors.conflict(rt.plural, name, rt.group)

    async def delete_collection(
        self,
        rt: ResourceType,
        ns: str,
        ctx: RequestContext,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
        propagation: str,
    ) -> None:
        if not self.wanted("DELETE", rt, "", ctx):
            self.api.delete_collection(rt, ns or None, ctx, labels, fields, propagation)
            return
        for obj in self.api.list_objects(rt, ns or None, labels, fields).items:
            meta = obj["metadata"]
            obj_ns, obj_name = meta.get("namespace", ""), meta["name"]
            await self.admit("DELETE", rt, attrs_of(rt, obj_ns, obj_name), None, obj, ctx, "DeleteOptions")
            try:
                self.api.delete(rt, obj_ns, obj_name, ctx, propagation)
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise

    async def delete(
        self, rt: ResourceType, ns: str, name: str, ctx: RequestContext, options: dict[str, Any]
    ) -> Any:
        if self.wanted("DELETE", rt, "", ctx):
            old = self.api.get(rt, ns, name)
            await self.admit("DELETE", rt, attrs_of(rt, ns, name), None, old, ctx, "DeleteOptions")
        return self.api.delete(
            rt, ns, name, ctx, options.get("propagationPolicy") or "", options.get("preconditions")
        )
