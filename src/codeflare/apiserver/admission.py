"""Admission: built-in checks and Mutating then Validating admission webhooks for every write.

:class:`Admission` keeps the stored MutatingWebhookConfigurations and
ValidatingWebhookConfigurations parsed (rebuilt when one changes) and, for a candidate object
the HTTP layer computed, calls each matching webhook with an ``admission.k8s.io/v1``
AdmissionReview over HTTPS (trusting ``caBundle``, else the system roots). Matching follows
Kubernetes: rules (operations, apiGroups, apiVersions, resources incl. ``*/sub`` forms, scope),
``matchPolicy`` (Equivalent also matches other served versions of the same resource),
namespaceSelector and objectSelector. Mutating webhooks run in order (configurations by name) and
may return a JSONPatch; validating ones run concurrently. ``failurePolicy`` decides what an
unreachable, slow (``timeoutSeconds``) or malformed webhook means. Warnings go to the client.

``clientConfig.service`` is resolved for local mode only: to ``https://127.0.0.1:<port><path>``
when the Service carries the annotation ``codeflare.dev/loopback-port: "<port>"``, or when an
Endpoints object of the same name lists a loopback address (its port is used); TLS then checks the
certificate for ``<service>.<namespace>.svc``. Anything else is a call failure. Webhook
configurations themselves are never sent to webhooks. It does not reinvoke mutating webhooks.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import json
import logging
import ssl
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from codeflare.apiserver import errors, patch
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.errors import FieldError
from codeflare.apiserver.resources import ResourceRegistry, ResourceType
from codeflare.apiserver.selectors import LabelSelector, validate_label_selector_dict
from codeflare.apiserver.store import Change, ObjectStore

log = logging.getLogger(__name__)

MUTATING_KEY = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING_KEY = "admissionregistration.k8s.io/validatingwebhookconfigurations"
WEBHOOK_KEYS = frozenset({MUTATING_KEY, VALIDATING_KEY})
LOOPBACK_PORT_ANNOTATION = "codeflare.dev/loopback-port"
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
DEFAULT_TIMEOUT = 10
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


class WebhookCallError(Exception):
    """A webhook could not be called or answered nonsense; ``failurePolicy`` decides what it means."""


@dataclass(frozen=True)
class RuleSpec:
    operations: tuple[str, ...]
    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str = "*"

    def matches(
        self, operation: str, group: str, version: str, resource: str, sub: str, namespaced: bool
    ) -> bool:
        if "*" not in self.operations and operation not in self.operations:
            return False
        if "*" not in self.api_groups and group not in self.api_groups:
            return False
        if "*" not in self.api_versions and version not in self.api_versions:
            return False
        if (self.scope == "Cluster" and namespaced) or (self.scope == "Namespaced" and not namespaced):
            return False
        for candidate in self.resources:
            if sub:
                if candidate in ("*/*", f"{resource}/*", f"*/{sub}", f"{resource}/{sub}"):
                    return True
            elif candidate in ("*", "*/*", resource):
                return True
        return False


@dataclass
class Webhook:
    """One webhook of a configuration, with Kubernetes' defaults filled in."""

    configuration: str
    mutating: bool
    name: str
    rules: list[RuleSpec]
    url: str = ""
    service: dict[str, Any] = field(default_factory=dict)
    ca_bundle: str = ""
    failure_policy: str = "Fail"
    match_policy: str = "Equivalent"
    timeout: int = DEFAULT_TIMEOUT
    side_effects: str = "None"
    namespace_selector: LabelSelector = field(default_factory=LabelSelector)
    object_selector: LabelSelector = field(default_factory=LabelSelector)


@dataclass
class AdmissionRequest:
    """What is being written, as admission sees it."""

    operation: str
    rt: ResourceType
    subresource: str
    namespace: str
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    ctx: RequestContext
    options_kind: str = "CreateOptions"


# -- validation of configurations ------------------------------------------------------------
def _strings(value: Any, path: str, out: list[FieldError], allowed: tuple[str, ...] = ()) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        out.append(FieldError(errors.FIELD_INVALID, path, "must be a list of strings", value))
        return ()
    for n, item in enumerate(value):
        if allowed and item not in allowed:
            out.append(
                FieldError(
                    errors.FIELD_NOT_SUPPORTED,
                    f"{path}[{n}]",
                    "supported values: " + ", ".join(f'"{a}"' for a in allowed),
                    item,
                )
            )
    return tuple(value)


def _validate_rule(rule: Any, path: str, out: list[FieldError]) -> None:
    if not isinstance(rule, dict):
        out.append(FieldError(errors.FIELD_INVALID, path, "must be an object", rule))
        return
    _strings(rule.get("operations"), f"{path}.operations", out, (*OPERATIONS, "*"))
    _strings(rule.get("apiGroups"), f"{path}.apiGroups", out)
    _strings(rule.get("apiVersions"), f"{path}.apiVersions", out)
    resources = _strings(rule.get("resources"), f"{path}.resources", out)
    for n, res in enumerate(resources):
        if not res or res.count("/") > 1 or res.startswith("/") or res.endswith("/"):
            out.append(
                FieldError(
                    errors.FIELD_INVALID,
                    f"{path}.resources[{n}]",
                    "must be resource or resource/subresource",
                    res,
                )
            )
    scope = rule.get("scope", "*")
    if scope not in ("*", "Cluster", "Namespaced", None):
        out.append(
            FieldError(
                errors.FIELD_NOT_SUPPORTED,
                f"{path}.scope",
                'supported values: "*", "Cluster", "Namespaced"',
                scope,
            )
        )


def _validate_client_config(cc: Any, path: str, out: list[FieldError]) -> None:
    if not isinstance(cc, dict):
        out.append(FieldError(errors.FIELD_REQUIRED, path, "a clientConfig is required"))
        return
    url, service = cc.get("url"), cc.get("service")
    if (url is None) == (service is None):
        out.append(FieldError(errors.FIELD_REQUIRED, path, "exactly one of url or service is required"))
    if url is not None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme != "https" or not parts.hostname:
            out.append(
                FieldError(errors.FIELD_INVALID, f"{path}.url", "must be an https URL with a host", url)
            )
        elif parts.fragment or parts.query or parts.username:
            out.append(
                FieldError(
                    errors.FIELD_INVALID,
                    f"{path}.url",
                    "fragments, query parameters and user information are not allowed",
                    url,
                )
            )
    if service is not None:
        if not isinstance(service, dict):
            out.append(FieldError(errors.FIELD_INVALID, f"{path}.service", "must be an object", service))
        else:
            for key in ("namespace", "name"):
                if not isinstance(service.get(key), str) or not service.get(key):
                    out.append(
                        FieldError(
                            errors.FIELD_REQUIRED, f"{path}.service.{key}", "service " + key + " is required"
                        )
                    )
            svc_path = service.get("path")
            if svc_path is not None and (not isinstance(svc_path, str) or not svc_path.startswith("/")):
                out.append(
                    FieldError(
                        errors.FIELD_INVALID, f"{path}.service.path", "must start with a '/'", svc_path
                    )
                )
            port = service.get("port", 443)
            if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
                out.append(
                    FieldError(
                        errors.FIELD_INVALID, f"{path}.service.port", "must be between 1 and 65535", port
                    )
                )
    bundle = cc.get("caBundle")
    if bundle is not None:
        try:
            if not isinstance(bundle, str):
                raise ValueError
            base64.b64decode(bundle, validate=True)
        except (ValueError, binascii.Error):
            out.append(
                FieldError(errors.FIELD_INVALID, f"{path}.caBundle", "must be base64-encoded PEM", "<bytes>")
            )


def validate_configuration(obj: dict[str, Any], mutating: bool) -> list[FieldError]:
    """Every problem of a Mutating/ValidatingWebhookConfiguration, with field paths."""
    out: list[FieldError] = []
    hooks = obj.get("webhooks")
    if hooks is None:
        return out
    if not isinstance(hooks, list):
        return [FieldError(errors.FIELD_INVALID, "webhooks", "must be a list", hooks)]
    names: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            out.append(FieldError(errors.FIELD_INVALID, path, "must be an object", hook))
            continue
        name = hook.get("name")
        if not isinstance(name, str) or len(name.split(".")) < 3 or not all(name.split(".")):
            out.append(
                FieldError(
                    errors.FIELD_INVALID,
                    f"{path}.name",
                    "should be a domain with at least three segments separated by dots",
                    name,
                )
            )
        elif name in names:
            out.append(FieldError(errors.FIELD_DUPLICATE, f"{path}.name", "", name))
        else:
            names.add(name)
        _validate_client_config(hook.get("clientConfig"), f"{path}.clientConfig", out)
        rules = hook.get("rules") or []
        if not isinstance(rules, list):
            out.append(FieldError(errors.FIELD_INVALID, f"{path}.rules", "must be a list", rules))
        else:
            for n, rule in enumerate(rules):
                _validate_rule(rule, f"{path}.rules[{n}]", out)
        checks = (
            ("failurePolicy", ("Fail", "Ignore")),
            ("matchPolicy", ("Exact", "Equivalent")),
            ("sideEffects", ("None", "NoneOnDryRun")),
        ) + ((("reinvocationPolicy", ("Never", "IfNeeded")),) if mutating else ())
        for key, allowed in checks:
            value = hook.get(key)
            if value is not None and value not in allowed:
                out.append(
                    FieldError(
                        errors.FIELD_NOT_SUPPORTED,
                        f"{path}.{key}",
                        "supported values: " + ", ".join(f'"{a}"' for a in allowed),
                        value,
                    )
                )
        if hook.get("sideEffects") is None:
            out.append(
                FieldError(
                    errors.FIELD_REQUIRED, f"{path}.sideEffects", 'must specify one of "None", "NoneOnDryRun"'
                )
            )
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and (
            not isinstance(timeout, int) or isinstance(timeout, bool) or not 1 <= timeout <= 30
        ):
            out.append(
                FieldError(
                    errors.FIELD_INVALID,
                    f"{path}.timeoutSeconds",
                    "the timeout value must be between 1 and 30 seconds",
                    timeout,
                )
            )
        versions = hook.get("admissionReviewVersions")
        if not isinstance(versions, list) or "v1" not in versions:
            out.append(
                FieldError(
                    errors.FIELD_REQUIRED,
                    f"{path}.admissionReviewVersions",
                    'must include "v1" (the only version this server speaks)',
                )
            )
        for key in ("namespaceSelector", "objectSelector"):
            if hook.get(key) is not None:
                out += validate_label_selector_dict(hook[key], f"{path}.{key}")
    return out


def _parse(obj: dict[str, Any], mutating: bool) -> list[Webhook]:
    """Webhooks of a stored configuration; entries that fail validation are skipped."""
    if validate_configuration(obj, mutating):
        log.warning("ignoring invalid webhook configuration %s", (obj.get("metadata") or {}).get("name"))
        return []
    config = str((obj.get("metadata") or {}).get("name") or "")
    out = []
    for hook in obj.get("webhooks") or []:
        cc = hook.get("clientConfig") or {}
        rules = [
            RuleSpec(
                tuple(r.get("operations") or ()),
                tuple(r.get("apiGroups") or ()),
                tuple(r.get("apiVersions") or ()),
                tuple(r.get("resources") or ()),
                r.get("scope") or "*",
            )
            for r in hook.get("rules") or []
        ]
        out.append(
            Webhook(
                configuration=config,
                mutating=mutating,
                name=hook["name"],
                rules=rules,
                url=cc.get("url") or "",
                service=dict(cc.get("service") or {}),
                ca_bundle=cc.get("caBundle") or "",
                failure_policy=hook.get("failurePolicy") or "Fail",
                match_policy=hook.get("matchPolicy") or "Equivalent",
                timeout=hook.get("timeoutSeconds") or DEFAULT_TIMEOUT,
                side_effects=hook.get("sideEffects") or "None",
                namespace_selector=LabelSelector.from_dict(hook.get("namespaceSelector") or {}),
                object_selector=LabelSelector.from_dict(hook.get("objectSelector") or {}),
            )
        )
    return out


# -- the admission chain -----------------------------------------------------------------------
class Admission:
    """Built-in checks plus the webhooks of one store, applied to candidate writes."""

    def __init__(self, store: ObjectStore, registry: ResourceRegistry, authorization: Any = None) -> None:
        self.store = store
        self.registry = registry
        self.authorization = authorization
        self._configs: dict[tuple[str, str], dict[str, Any]] = {}
        self._hooks: tuple[list[Webhook], list[Webhook]] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ssl: dict[str, ssl.SSLContext] = {}
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
                (mutating if key == MUTATING_KEY else validating).extend(_parse(obj, key == MUTATING_KEY))
            self._hooks = (mutating, validating)
        return self._hooks

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

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
            raise _call_failed(hook, str(exc)) from exc

    async def _call_guarded(
        self, hook: Webhook, req: AdmissionRequest, target: ResourceType, obj: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """Call one webhook; refusal raises, failures follow failurePolicy; returns the response."""
        try:
            answer = await self._call(hook, req, target, obj)
        except WebhookCallError as exc:
            if hook.failure_policy == "Ignore":
                log.warning("webhook %s failed, ignored by its failurePolicy: %s", hook.name, exc)
                return None
            raise _call_failed(hook, str(exc)) from exc
        for warning in answer.get("warnings") or []:
            if isinstance(warning, str) and warning.strip():
                req.ctx.warnings.append(warning.strip()[:1024])
        if answer.get("allowed") is not True:
            raise _denied(hook, answer.get("status"))
        return answer

    def _review(
        self, req: AdmissionRequest, target: ResourceType, obj: dict[str, Any] | None, uid: str
    ) -> dict[str, Any]:
        def shown(o: dict[str, Any] | None) -> dict[str, Any] | None:
            return None if o is None else dict(o, apiVersion=target.api_version)

        request: dict[str, Any] = {
            "uid": uid,
            "kind": {"group": target.group, "version": target.version, "kind": target.kind},
            "resource": {"group": target.group, "version": target.version, "resource": target.plural},
            "requestKind": {"group": req.rt.group, "version": req.rt.version, "kind": req.rt.kind},
            "requestResource": {"group": req.rt.group, "version": req.rt.version, "resource": req.rt.plural},
            "name": req.name,
            "operation": req.operation,
            "userInfo": req.ctx.user.to_dict(),
            "object": shown(obj),
            "oldObject": shown(req.old),
            "dryRun": req.ctx.dry_run,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": req.options_kind},
        }
        if req.subresource:
            request["subResource"] = req.subresource
            request["requestSubResource"] = req.subresource
        if req.rt.namespaced:
            request["namespace"] = req.namespace
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}

    async def _call(
        self, hook: Webhook, req: AdmissionRequest, target: ResourceType, obj: dict[str, Any] | None
    ) -> dict[str, Any]:
        url, server_hostname = self._endpoint(hook)
        uid = str(uuid.uuid4())
        body = json.dumps(self._review(req, target, obj, uid), separators=(",", ":")).encode()
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                url,
                data=body,
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                ssl=self._ssl_context(hook.ca_bundle),
                server_hostname=server_hostname,
                timeout=aiohttp.ClientTimeout(total=hook.timeout),
            ) as resp:
                raw = await resp.read()
                if resp.status != 200:
                    raise WebhookCallError(f"the server responded with status {resp.status}: {raw[:200]!r}")
        except TimeoutError as exc:
            raise WebhookCallError(
                f'Post "{url}": context deadline exceeded (timeout {hook.timeout}s)'
            ) from exc
        except (aiohttp.ClientError, OSError, ssl.SSLError, ValueError) as exc:
            raise WebhookCallError(f'Post "{url}": {exc}') from exc
        try:
            review = json.loads(raw)
        except ValueError as exc:
            raise WebhookCallError(f"the response is not JSON: {exc}") from exc
        answer = review.get("response") if isinstance(review, dict) else None
        if not isinstance(answer, dict):
            raise WebhookCallError("the response has no AdmissionReview response")
        if review.get("apiVersion") != "admission.k8s.io/v1" or review.get("kind") != "AdmissionReview":
            raise WebhookCallError("expected response of kind AdmissionReview in admission.k8s.io/v1")
        if answer.get("uid") != uid:
            raise WebhookCallError(f"expected response.uid={uid!r}, got {answer.get('uid')!r}")
        return answer

    def _ssl_context(self, bundle: str) -> ssl.SSLContext:
        ctx = self._ssl.get(bundle)
        if ctx is None:
            ctx = ssl.create_default_context()
            if bundle:
                try:
                    ctx = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
                except (ValueError, binascii.Error, ssl.SSLError) as exc:
                    raise WebhookCallError(f"caBundle holds no usable certificate: {exc}") from exc
            self._ssl[bundle] = ctx
        return ctx

    def _endpoint(self, hook: Webhook) -> tuple[str, str | None]:
        """(URL to post to, TLS server name to check when it differs from the URL's host)."""
        if hook.url:
            return hook.url, None
        ref = hook.service
        namespace, name = ref.get("namespace", ""), ref.get("name", "")
        path, port = ref.get("path") or "/", ref.get("port") or 443
        service = self.store.get("core/services", namespace, name)
        if service is None:
            raise WebhookCallError(f'service "{namespace}/{name}" not found')
        local_port = self._loopback_port(service, port)
        if local_port is None:
            raise WebhookCallError(
                f'service "{namespace}/{name}" has no loopback endpoint (annotate it with '
                f"{LOOPBACK_PORT_ANNOTATION} or give it Endpoints on 127.0.0.1)"
            )
        return f"https://127.0.0.1:{local_port}{path}", f"{name}.{namespace}.svc"

    def _loopback_port(self, service: dict[str, Any], port: int) -> int | None:
        meta = service.get("metadata") or {}
        annotated = (meta.get("annotations") or {}).get(LOOPBACK_PORT_ANNOTATION)
        if annotated is not None:
            try:
                value = int(annotated)
            except (TypeError, ValueError):
                return None
            return value if 1 <= value <= 65535 else None
        endpoints = self.store.get("core/endpoints", meta.get("namespace", ""), meta.get("name", ""))
        if endpoints is None:
            return None
        port_name = ""
        for entry in (service.get("spec") or {}).get("ports") or []:
            if isinstance(entry, dict) and entry.get("port") == port:
                port_name = str(entry.get("name") or "")
        for subset in endpoints.get("subsets") or []:
            if not isinstance(subset, dict):
                continue
            ips = [a.get("ip") for a in subset.get("addresses") or [] if isinstance(a, dict)]
            if not any(ip in _LOOPBACK for ip in ips):
                continue
            ports = [
                p for p in subset.get("ports") or [] if isinstance(p, dict) and isinstance(p.get("port"), int)
            ]
            named = [p for p in ports if str(p.get("name") or "") == port_name]
            chosen = named or (ports if len(ports) == 1 else [])
            if chosen:
                return int(chosen[0]["port"])
        return None


def _call_failed(hook: Webhook, detail: str) -> errors.ApiError:
    return errors.ApiError(
        500, "InternalError", f'Internal error occurred: failed calling webhook "{hook.name}": {detail}'
    )


def _denied(hook: Webhook, status: Any) -> errors.ApiError:
    status = status if isinstance(status, dict) else {}
    code = status.get("code")
    if not isinstance(code, int) or isinstance(code, bool) or not 400 <= code <= 599:
        code = 403
    message, reason = status.get("message"), status.get("reason")
    prefix = f'admission webhook "{hook.name}" denied the request'
    if isinstance(message, str) and message:
        text = f"{prefix}: {message}"
    elif isinstance(reason, str) and reason:
        text = f"{prefix}: {reason}"
    else:
        text = f"{prefix} without explanation"
    if not isinstance(reason, str) or not reason:
        reason = "Forbidden" if code == 403 else ""
    return errors.ApiError(code, reason, text)
