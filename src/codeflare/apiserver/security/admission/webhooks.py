"""Admission webhooks: the parsed configuration entries and the calls to them.

A stored configuration becomes a list of :class:`Webhook` values with Kubernetes' defaults
filled in (:func:`parse_configuration`); :class:`WebhookCaller` posts an ``admission.k8s.io/v1``
AdmissionReview to one webhook over HTTPS (trusting ``caBundle``, else the system roots) and
checks the answer's shape, raising :class:`WebhookCallError` for anything ``failurePolicy`` has to
judge. This is the server side of the webhook protocol, not a Kubernetes API client.

``clientConfig`` is resolved by :mod:`codeflare.apiserver.webhook_endpoints` (local mode: loopback
services only); anything it cannot resolve is a call failure.
"""

from __future__ import annotations

import json
import logging
import ssl
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from codeflare.apiserver import errors, webhook_endpoints
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.registry.selectors import LabelSelector
from codeflare.apiserver.registry.webhook_configurations import DEFAULT_TIMEOUT, validate_configuration
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s import bulkjson

log = logging.getLogger(__name__)

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


def parse_configuration(obj: dict[str, Any], mutating: bool) -> list[Webhook]:
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


class WebhookCaller:
    """Posts AdmissionReviews to webhooks: one HTTP session, one TLS context per CA bundle."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store  # Services and Endpoints resolve ``clientConfig.service``
        self._session: aiohttp.ClientSession | None = None
        self._ssl: dict[str, ssl.SSLContext] = {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def review(
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

    async def call(
        self, hook: Webhook, req: AdmissionRequest, target: ResourceType, obj: dict[str, Any] | None
    ) -> dict[str, Any]:
        """POST the AdmissionReview to ``hook``; its ``response``, or :class:`WebhookCallError`."""
        url, server_hostname = self._endpoint(hook)
        uid = str(uuid.uuid4())
        body = bulkjson.dumps(self.review(req, target, obj, uid))
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
        try:
            return webhook_endpoints.ssl_context(bundle, self._ssl)
        except webhook_endpoints.EndpointError as exc:
            raise WebhookCallError(str(exc)) from exc

    def _endpoint(self, hook: Webhook) -> tuple[str, str | None]:
        """(URL to post to, TLS server name to check when it differs from the URL's host)."""
        try:
            return webhook_endpoints.resolve(self.store, hook.url, hook.service)
        except webhook_endpoints.EndpointError as exc:
            raise WebhookCallError(str(exc)) from exc


def call_failed(hook: Webhook, detail: str) -> errors.ApiError:
    return errors.ApiError(
        500, "InternalError", f'Internal error occurred: failed calling webhook "{hook.name}": {detail}'
    )


def denied(hook: Webhook, status: Any) -> errors.ApiError:
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
