"""ConfigMap and Secret keys as kube-apiserver validates them (ValidateConfigMap, ValidateSecret).

Every key of ``data`` and ``binaryData`` (``data`` only, for Secrets) is a valid config key
(:func:`codeflare.k8s.names.is_config_map_key`), and a ConfigMap key may not be in both maps.
Errors name the key as Kubernetes does: ``data[bad key]``. Sizes are not checked here.
"""

from __future__ import annotations

from typing import Any

from codeflare.k8s.names import is_config_map_key
from codeflare.k8s.schema.field import ErrorType, FieldError


def _keys(obj: dict[str, Any], field: str) -> list[FieldError]:
    value = obj.get(field)
    if not isinstance(value, dict):
        return []
    return [
        FieldError(ErrorType.INVALID, f"{field}[{key}]", msg, key)
        for key in value
        for msg in is_config_map_key(key)
    ]


def validate_config_map(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    errs = _keys(obj, "data") + _keys(obj, "binaryData")
    data, binary = obj.get("data"), obj.get("binaryData")
    if isinstance(data, dict) and isinstance(binary, dict):
        for key in data.keys() & binary.keys():
            message = "duplicate of key present in data"
            errs.append(FieldError(ErrorType.INVALID, f"binaryData[{key}]", message, key))
    return errs


def validate_secret(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _keys(obj, "data")
