"""The admission chain: built-in checks, then Mutating and Validating webhooks, for every write.

:class:`Admission` keeps the stored webhook configurations parsed (rebuilt when one changes) and,
for a candidate object the HTTP layer computed, calls each matching webhook. Matching follows
Kubernetes: rules (operations, groups, versions, resources incl. ``*/sub`` forms, scope),
``matchPolicy`` (Equivalent also matches other served versions), namespace and object selectors.
Mutating webhooks run in order (configurations by name) and may return a JSONPatch; validating
ones run concurrently; ``failurePolicy`` decides what a failed call means; warnings go to the
client. Configurations are never sent to webhooks, mutating webhooks are not reinvoked, and the
calls themselves are :mod:`~codeflare.apiserver.security.admission.webhooks`'.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import json
import logging
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry import patch
from codeflare.apiserver.registry.resources import ResourceRegistry, ResourceType
from codeflare.apiserver.registry.webhook_configurations import MUTATING_KEY, WEBHOOK_KEYS
from codeflare.apiserver.security.admission.webhooks import (
    AdmissionRequest,
    Webhook,
    WebhookCaller,
    WebhookCallError,
    call_failed,
    denied,
    parse_configuration,
)
from codeflare.apiserver.storage.store import Change, ObjectStore

log = logging.getLogger(__name__)


class Admission:
    """Built-in checks plus the webhooks of one store, applied to candidate writes."""

    def __init__(self, store: ObjectStore, registry: ResourceRegistry, authorization: Any = None) -> None:
        self.store = store
        self.registry = registry
        self.authorization = authorization
        self._configs: dict[tuple[str, str], dict[str, Any]] = {}
        self._hooks: tuple[list[Webhook], list[Webhook]] | None = None
        self.caller = WebhookCaller(store)
        for key in WEBHOOK_KEYS:
            for obj in store.iter(key):
                self._configs[(key, obj["metadata"]["name"])] = obj
        store.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.key not in WEBHOOK_KEYS:
            return
        if change.type == "DELETED":
            self._configs.pop((change.key, change.name), None)
        else:
            self._configs[(change.key, change.name)] = change.obj
        self._hooks = None

    def webhooks(self) -> tuple[list[Webhook], list[Webhook]]:
        """(mutating, validating) webhooks, configurations in name order."""
        if self._hooks is None:
            mutating: list[Webhook] = []
            validating: list[Webhook] = []
            for (key, _), obj in sorted(self._configs.items(), key=lambda kv: kv[0][1]):
                (mutating if key == MUTATING_KEY else validating).extend(
                    parse_configuration(obj, key == MUTATING_KEY)
                )
            self._hooks = (mutating, validating)
        return self._hooks

    async def close(self) -> None:
        await self.caller.close()

    # -- matching --------------------------------------------------------------------------------

    def _match_version(
        self, hook: Webhook, operation: str, rt: ResourceType, sub: str
    ) -> ResourceType | None:
        """The served version the webhook wants the object in, or None when no rule matches."""

        def hit(candidate: ResourceType) -> bool:
            return any(
                r.matches(
                    operation, candidate.group, candidate.version, candidate.plural, sub, candidate.namespaced
                )
                for r in hook.rules
            )

        if hit(rt):
            return rt
        if hook.match_policy == "Equivalent":
            for other in sorted(self.registry.by_key(rt.key), key=lambda r: r.version):
                if other is not rt and hit(other):
                    return other
        return None

    def _builtin_applies(self, rt: ResourceType, ctx: RequestContext) -> bool:
        return (
            self.authorization is not None
            and rt.group == "rbac.authorization.k8s.io"
            and "system:masters" not in ctx.user.groups
        )

    def wants(self, operation: str, rt: ResourceType, sub: str, ctx: RequestContext) -> bool:
        """Cheap pre-check: could anything act on this write? (False means: skip admission.)"""
        if operation in ("CREATE", "UPDATE") and self._builtin_applies(rt, ctx):
            return True
        if rt.key in WEBHOOK_KEYS:
            return False
        mutating, validating = self.webhooks()
        return any(self._match_version(h, operation, rt, sub) for h in (*mutating, *validating))

    def _selected(self, hook: Webhook, req: AdmissionRequest) -> bool:
        labels_of = [
            (o.get("metadata") or {}).get("labels") or {} for o in (req.obj, req.old) if isinstance(o, dict)
        ]
        if not hook.object_selector.empty and not any(hook.object_selector.matches(lbl) for lbl in labels_of):
            return False
        if hook.namespace_selector.empty:
            return True
        if req.rt.key == "core/namespaces":
            return any(hook.namespace_selector.matches(lbl) for lbl in labels_of)
        if not req.rt.namespaced:
            return True
        ns = self.store.get("core/namespaces", "", req.namespace)
        labels = ((ns or {}).get("metadata") or {}).get("labels") or {}
        return hook.namespace_selector.matches(labels)

    # -- the chain --------------------------------------------------------------------------------

    async def admit(self, req: AdmissionRequest) -> dict[str, Any] | None:
        """Run the chain; returns the (possibly mutated) object, or raises the refusal."""
        mutating, validating = self.webhooks() if req.rt.key not in WEBHOOK_KEYS else ([], [])
        obj = req.obj
        for hook in mutating:
            target = self._match_version(hook, req.operation, req.rt, req.subresource)
            if target is None or not self._selected(hook, req):
                continue
            answer = await self._call_guarded(hook, req, target, obj)
            if answer is None or obj is None or req.operation == "DELETE":
                continue
            obj = self._mutate(hook, answer, obj, req, target)
        if (
            self._builtin_applies(req.rt, req.ctx)
            and obj is not None
            and req.operation in ("CREATE", "UPDATE")
        ):
            self.authorization.check_rbac_write(req.ctx.user, req.rt, req.namespace, obj)
        calls = []
        for hook in validating:
            target = self._match_version(hook, req.operation, req.rt, req.subresource)
            if target is not None and self._selected(hook, req):
                calls.append(self._call_guarded(hook, req, target, obj))
        results = await asyncio.gather(*calls, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return obj

    def _mutate(
        self,
        hook: Webhook,
        answer: dict[str, Any],
        obj: dict[str, Any],
        req: AdmissionRequest,
        target: ResourceType,
    ) -> dict[str, Any]:
        raw_patch = answer.get("patch")
        if raw_patch in (None, ""):
            return obj
        try:
            if answer.get("patchType") != "JSONPatch":
                raise WebhookCallError(f"unsupported patchType {answer.get('patchType')!r}")
            try:
                ops = json.loads(base64.b64decode(str(raw_patch), validate=True))
            except (ValueError, binascii.Error) as exc:
                raise WebhookCallError(f"the patch is not base64-encoded JSON: {exc}") from exc
            shown = dict(obj, apiVersion=target.api_version)
            try:
                patched = patch.apply_json_patch(copy.deepcopy(shown), ops)
            except errors.ApiError as exc:
                raise WebhookCallError(f"the patch could not be applied: {exc.message}") from exc
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise WebhookCallError("the patch did not produce an object with metadata")
            patched["apiVersion"] = obj.get("apiVersion", req.rt.api_version)
            return patched
        except WebhookCallError as exc:
            if hook.failure_policy == "Ignore":
                log.warning("ignoring webhook %s: %s", hook.name, exc)
                return obj
            raise call_failed(hook, str(exc)) from exc

    async def _call_guarded(
        self, hook: Webhook, req: AdmissionRequest, target: ResourceType, obj: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """Call one webhook; refusal raises, failures follow failurePolicy; returns the response."""
        try:
            answer = await self.caller.call(hook, req, target, obj)
        except WebhookCallError as exc:
            if hook.failure_policy == "Ignore":
                log.warning("webhook %s failed, ignored by its failurePolicy: %s", hook.name, exc)
                return None
            raise call_failed(hook, str(exc)) from exc
        for warning in answer.get("warnings") or []:
            if isinstance(warning, str) and warning.strip():
                req.ctx.warnings.append(warning.strip()[:1024])
        if answer.get("allowed") is not True:
            raise denied(hook, answer.get("status"))
        return answer
