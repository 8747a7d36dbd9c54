"""CRD version conversion: objects stored at the storage version, converted on the way in and out.

A custom resource's objects are stored at its CRD's storage version (``storage: true``) and shown
at the version a request names. Strategy ``None`` rewrites ``apiVersion`` only; strategy
``Webhook`` posts one ``apiextensions.k8s.io/v1`` ConversionReview per batch (a whole list page is
one review, as kube-apiserver batches it) and checks the answer as kube-apiserver's webhook
converter does: the uid, ``result.status``, the count, each object's apiVersion and kind, and an
unchanged name, namespace and uid; from the converted metadata only labels and annotations are
kept, the rest is the original's. Any failure is a 500 Status ``conversion webhook for <gvk>
failed: <why>`` and nothing is written. The call is synchronous, as the object API is: it holds the
server for its length, so a conversion webhook must not be served from the API server's own event
loop (the operator is a process of its own). Which version a request asks for is the endpoints'
business; migrating stored objects is :mod:`storage_migration`'s.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from codeflare.apiserver import errors, webhook_endpoints
from codeflare.apiserver.storage import codec
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s import bulkjson
from codeflare.k8s.schema.field import ErrorType, FieldError

REVIEW_VERSIONS = ("v1", "v1beta1")  # ConversionReview versions kube-apiserver speaks, preferred first
DEFAULT_TIMEOUT = 30.0  # kube-apiserver's conversion webhook timeout


@dataclass(frozen=True)
class ConversionWebhook:
    """``spec.conversion.webhook`` of a CRD with strategy Webhook."""

    url: str = ""
    service: dict[str, Any] = field(default_factory=dict)
    ca_bundle: str = ""
    review_version: str = "v1"
    timeout: float = DEFAULT_TIMEOUT


def parse_conversion(spec: dict[str, Any]) -> ConversionWebhook | None:
    """The webhook of a (validated) CRD spec, or None for strategy None."""
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    hook = conversion.get("webhook") or {}
    config = hook.get("clientConfig") or {}
    versions = [v for v in hook.get("conversionReviewVersions") or [] if v in REVIEW_VERSIONS]
    return ConversionWebhook(
        url=str(config.get("url") or ""),
        service=dict(config.get("service") or {}),
        ca_bundle=str(config.get("caBundle") or ""),
        review_version=versions[0] if versions else "v1",
    )


def deprecation_warning(group: str, kind: str, version: dict[str, Any]) -> str:
    """The Warning a deprecated CRD version sends (kube's default text when none is given), or ""."""
    if not version.get("deprecated"):
        return ""
    return str(version.get("deprecationWarning") or f"{group}/{version.get('name', '')} {kind} is deprecated")


def validate_conversion(spec: dict[str, Any]) -> list[FieldError]:
    """kube-apiserver's checks of ``spec.conversion`` (apiextensions validation.go)."""
    conversion = spec.get("conversion")
    if conversion is None:
        return []
    path = "spec.conversion"
    if not isinstance(conversion, dict):
        return [FieldError(ErrorType.TYPE_INVALID, path, "must be an object", conversion)]
    strategy = conversion.get("strategy", "None")
    hook = conversion.get("webhook")
    if strategy not in ("None", "Webhook"):
        return [
            FieldError(
                ErrorType.NOT_SUPPORTED, f"{path}.strategy", 'supported values: "None", "Webhook"', strategy
            )
        ]
    if strategy == "None":
        if hook is not None:
            return [
                FieldError(
                    ErrorType.FORBIDDEN,
                    f"{path}.webhook",
                    "should not be set when strategy is not set to Webhook",
                )
            ]
        return []
    if not isinstance(hook, dict):
        return [FieldError(ErrorType.REQUIRED, f"{path}.webhook", "required when strategy is set to Webhook")]
    out: list[FieldError] = []
    versions = hook.get("conversionReviewVersions")
    if not isinstance(versions, list) or not versions:
        out.append(FieldError(ErrorType.REQUIRED, f"{path}.webhook.conversionReviewVersions", ""))
    elif not any(v in REVIEW_VERSIONS for v in versions):
        out.append(
            FieldError(
                ErrorType.INVALID,
                f"{path}.webhook.conversionReviewVersions",
                "must include at least one of v1, v1beta1",
                versions,
            )
        )
    config = hook.get("clientConfig")
    cpath = f"{path}.webhook.clientConfig"
    if not isinstance(config, dict):
        out.append(FieldError(ErrorType.REQUIRED, cpath, "required when strategy is set to Webhook"))
        return out
    url, service = config.get("url"), config.get("service")
    if bool(url) == bool(service):
        out.append(FieldError(ErrorType.REQUIRED, cpath, "exactly one of url or service is required"))
    elif url and (not isinstance(url, str) or urlsplit(url).scheme != "https"):
        out.append(
            FieldError(ErrorType.INVALID, f"{cpath}.url", "'https' is the only allowed URL scheme", url)
        )
    elif service is not None:
        if not isinstance(service, dict) or not service.get("name"):
            out.append(FieldError(ErrorType.REQUIRED, f"{cpath}.service.name", "service name is required"))
        elif not service.get("namespace"):
            out.append(
                FieldError(ErrorType.REQUIRED, f"{cpath}.service.namespace", "service namespace is required")
            )
        elif service.get("path") and not str(service["path"]).startswith("/"):
            out.append(
                FieldError(
                    ErrorType.INVALID, f"{cpath}.service.path", "must start with a '/'", service["path"]
                )
            )
    return out


class _Connection(http.client.HTTPSConnection):
    """HTTPS to an address, checking the certificate for another name (a Service's DNS name)."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, server_name: str, timeout: float):
        super().__init__(host, port, context=context, timeout=timeout)
        self._server_name = server_name
        self._ctx = context

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._ctx.wrap_socket(sock, server_hostname=self._server_name)


class ConversionFailed(Exception):
    """The webhook could not convert; the message is the part after ``failed: ``."""


class Converter:
    """Converts custom objects between the served versions of their CRD."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store  # Services and Endpoints resolve ``clientConfig.service``
        self._ssl: dict[str, ssl.SSLContext] = {}

    def convert(
        self, hook: ConversionWebhook | None, kind: str, objs: list[dict[str, Any]], api_version: str
    ) -> list[dict[str, Any]]:
        """``objs`` at ``api_version``: rewritten (strategy None) or converted in one review."""
        todo = [i for i, obj in enumerate(objs) if obj.get("apiVersion") != api_version]
        if not todo:
            return objs
        out = list(objs)
        if hook is None:
            for i in todo:
                out[i] = dict(objs[i], apiVersion=api_version)
            return out
        originals = [objs[i] for i in todo]
        try:
            converted = self._review(hook, originals, api_version)
            for n, (i, original) in enumerate(zip(todo, originals, strict=True)):
                out[i] = _checked(original, converted[n], api_version, n)
        except (ConversionFailed, webhook_endpoints.EndpointError) as exc:
            gvk = f"{api_version}, Kind={kind}" if "/" in api_version else f"/{api_version}, Kind={kind}"
            raise errors.ApiError(
                500, "InternalError", f"Internal error occurred: conversion webhook for {gvk} failed: {exc}"
            ) from exc
        return out

    def _review(self, hook: ConversionWebhook, objs: list[dict[str, Any]], api_version: str) -> list[Any]:
        uid = str(uuid.uuid4())
        review_api = f"apiextensions.k8s.io/{hook.review_version}"
        body = codec.dumps_bytes(
            {
                "apiVersion": review_api,
                "kind": "ConversionReview",
                "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objs},
            }
        )
        review = self._post(hook, body)
        answer = review.get("response") if isinstance(review, dict) else None
        if not isinstance(answer, dict):
            raise ConversionFailed("the response has no ConversionReview response")
        if answer.get("uid") != uid:
            raise ConversionFailed(f"expected response.uid={uid!r}, got {answer.get('uid')!r}")
        result = answer.get("result")
        result = result if isinstance(result, dict) else {}
        if result.get("status") != "Success":
            raise ConversionFailed(str(result.get("message") or "conversion failed without a message"))
        converted = answer.get("convertedObjects")
        if not isinstance(converted, list):
            raise ConversionFailed("the response has no convertedObjects")
        if len(converted) != len(objs):
            raise ConversionFailed(f"returned {len(converted)} objects, expected {len(objs)}")
        return converted

    def _post(self, hook: ConversionWebhook, body: bytes) -> Any:
        url, server_name = webhook_endpoints.resolve(self.store, hook.url, hook.service)
        parts = urlsplit(url)
        context = webhook_endpoints.ssl_context(hook.ca_bundle, self._ssl)
        host = parts.hostname or ""
        conn = _Connection(host, parts.port or 443, context, server_name or host, hook.timeout)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        try:
            conn.request(
                "POST", target, body, {"Content-Type": "application/json", "Accept": "application/json"}
            )
            resp = conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ConversionFailed(f'Post "{url}": {exc}') from exc
        finally:
            conn.close()
        if resp.status != 200:
            raise ConversionFailed(f"the server responded with status {resp.status}: {raw[:200]!r}")
        try:
            return bulkjson.loads(raw)  # a whole list page: parsed with the GC paused
        except ValueError as exc:
            raise ConversionFailed(f"the response is not JSON: {exc}") from exc


def _checked(original: dict[str, Any], converted: Any, api_version: str, index: int) -> dict[str, Any]:
    """One converted object after kube's checks, with the original metadata except labels/annotations."""

    def invalid(why: str) -> ConversionFailed:
        return ConversionFailed(f"returned invalid converted object at index {index}: {why}")

    if not isinstance(converted, dict):
        raise invalid("not an object")
    if converted.get("apiVersion") != api_version:
        raise invalid(f"invalid apiVersion {converted.get('apiVersion')!r}, expected {api_version!r}")
    if converted.get("kind") != original.get("kind"):
        raise invalid(f"must have the same kind: {original.get('kind')} != {converted.get('kind')}")
    meta, before = converted.get("metadata"), original.get("metadata") or {}
    if not isinstance(meta, dict):
        raise invalid("missing metadata in converted object")
    for key in ("name", "namespace", "uid"):
        if meta.get(key, "") != before.get(key, ""):
            raise invalid(f"must have the same {key}: {before.get(key, '')} != {meta.get(key, '')}")
    restored = dict(before)
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            restored.pop(key, None)
        elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            restored[key] = value
        else:
            raise invalid(f"invalid metadata.{key} in converted object")
    converted["metadata"] = restored
    return converted
