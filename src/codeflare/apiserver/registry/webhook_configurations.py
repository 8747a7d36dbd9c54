"""Validation of Mutating/ValidatingWebhookConfigurations: the registry's rules for those kinds.

A webhook configuration is checked field by field when it is written, with Kubernetes' paths and
messages: webhook names (domains of three or more segments, unique), ``clientConfig`` (exactly
one of an https ``url`` or a ``service``, a base64 ``caBundle``), rules, policies, side effects,
timeouts, review versions and selectors. Admission (:mod:`codeflare.apiserver.security.admission`)
reads only configurations that pass. Pure; it calls no webhook.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlsplit

from codeflare.apiserver.registry.selectors import validate_label_selector_dict
from codeflare.k8s.schema.field import ErrorType, FieldError

MUTATING_KEY = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING_KEY = "admissionregistration.k8s.io/validatingwebhookconfigurations"
WEBHOOK_KEYS = frozenset({MUTATING_KEY, VALIDATING_KEY})
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
DEFAULT_TIMEOUT = 10


def _strings(value: Any, path: str, out: list[FieldError], allowed: tuple[str, ...] = ()) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        out.append(FieldError(ErrorType.INVALID, path, "must be a list of strings", value))
        return ()
    for n, item in enumerate(value):
        if allowed and item not in allowed:
            out.append(
                FieldError(
                    ErrorType.NOT_SUPPORTED,
                    f"{path}[{n}]",
                    "supported values: " + ", ".join(f'"{a}"' for a in allowed),
                    item,
                )
            )
    return tuple(value)


def _validate_rule(rule: Any, path: str, out: list[FieldError]) -> None:
    if not isinstance(rule, dict):
        out.append(FieldError(ErrorType.INVALID, path, "must be an object", rule))
        return
    _strings(rule.get("operations"), f"{path}.operations", out, (*OPERATIONS, "*"))
    _strings(rule.get("apiGroups"), f"{path}.apiGroups", out)
    _strings(rule.get("apiVersions"), f"{path}.apiVersions", out)
    resources = _strings(rule.get("resources"), f"{path}.resources", out)
    for n, res in enumerate(resources):
        if not res or res.count("/") > 1 or res.startswith("/") or res.endswith("/"):
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.resources[{n}]",
                    "must be resource or resource/subresource",
                    res,
                )
            )
    scope = rule.get("scope", "*")
    if scope not in ("*", "Cluster", "Namespaced", None):
        out.append(
            FieldError(
                ErrorType.NOT_SUPPORTED,
                f"{path}.scope",
                'supported values: "*", "Cluster", "Namespaced"',
                scope,
            )
        )


def _validate_client_config(cc: Any, path: str, out: list[FieldError]) -> None:
    if not isinstance(cc, dict):
        out.append(FieldError(ErrorType.REQUIRED, path, "a clientConfig is required"))
        return
    url, service = cc.get("url"), cc.get("service")
    if (url is None) == (service is None):
        out.append(FieldError(ErrorType.REQUIRED, path, "exactly one of url or service is required"))
    if url is not None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme != "https" or not parts.hostname:
            out.append(FieldError(ErrorType.INVALID, f"{path}.url", "must be an https URL with a host", url))
        elif parts.fragment or parts.query or parts.username:
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.url",
                    "fragments, query parameters and user information are not allowed",
                    url,
                )
            )
    if service is not None:
        if not isinstance(service, dict):
            out.append(FieldError(ErrorType.INVALID, f"{path}.service", "must be an object", service))
        else:
            for key in ("namespace", "name"):
                if not isinstance(service.get(key), str) or not service.get(key):
                    out.append(
                        FieldError(
                            ErrorType.REQUIRED, f"{path}.service.{key}", "service " + key + " is required"
                        )
                    )
            svc_path = service.get("path")
            if svc_path is not None and (not isinstance(svc_path, str) or not svc_path.startswith("/")):
                out.append(
                    FieldError(ErrorType.INVALID, f"{path}.service.path", "must start with a '/'", svc_path)
                )
            port = service.get("port", 443)
            if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
                out.append(
                    FieldError(ErrorType.INVALID, f"{path}.service.port", "must be between 1 and 65535", port)
                )
    bundle = cc.get("caBundle")
    if bundle is not None:
        try:
            if not isinstance(bundle, str):
                raise ValueError
            base64.b64decode(bundle, validate=True)
        except (ValueError, binascii.Error):
            out.append(
                FieldError(ErrorType.INVALID, f"{path}.caBundle", "must be base64-encoded PEM", "<bytes>")
            )


def validate_configuration(obj: dict[str, Any], mutating: bool) -> list[FieldError]:
    """Every problem of a Mutating/ValidatingWebhookConfiguration, with field paths."""
    out: list[FieldError] = []
    hooks = obj.get("webhooks")
    if hooks is None:
        return out
    if not isinstance(hooks, list):
        return [FieldError(ErrorType.INVALID, "webhooks", "must be a list", hooks)]
    names: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            out.append(FieldError(ErrorType.INVALID, path, "must be an object", hook))
            continue
        name = hook.get("name")
        if not isinstance(name, str) or len(name.split(".")) < 3 or not all(name.split(".")):
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.name",
                    "should be a domain with at least three segments separated by dots",
                    name,
                )
            )
        elif name in names:
            out.append(FieldError(ErrorType.DUPLICATE, f"{path}.name", "", name))
        else:
            names.add(name)
        _validate_client_config(hook.get("clientConfig"), f"{path}.clientConfig", out)
        rules = hook.get("rules") or []
        if not isinstance(rules, list):
            out.append(FieldError(ErrorType.INVALID, f"{path}.rules", "must be a list", rules))
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
                        ErrorType.NOT_SUPPORTED,
                        f"{path}.{key}",
                        "supported values: " + ", ".join(f'"{a}"' for a in allowed),
                        value,
                    )
                )
        if hook.get("sideEffects") is None:
            out.append(
                FieldError(
                    ErrorType.REQUIRED, f"{path}.sideEffects", 'must specify one of "None", "NoneOnDryRun"'
                )
            )
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and (
            not isinstance(timeout, int) or isinstance(timeout, bool) or not 1 <= timeout <= 30
        ):
            out.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.timeoutSeconds",
                    "the timeout value must be between 1 and 30 seconds",
                    timeout,
                )
            )
        versions = hook.get("admissionReviewVersions")
        if not isinstance(versions, list) or "v1" not in versions:
            out.append(
                FieldError(
                    ErrorType.REQUIRED,
                    f"{path}.admissionReviewVersions",
                    'must include "v1" (the only version this server speaks)',
                )
            )
        for key in ("namespaceSelector", "objectSelector"):
            if hook.get(key) is not None:
                out += validate_label_selector_dict(hook[key], f"{path}.{key}")
    return out
