"""Small shared checks of the built-in rules: port numbers, named ports, enums, lists of objects."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from codeflare.k8s.names import is_port_name
from codeflare.k8s.schema.field import ErrorType, FieldError

PORT_RANGE = "must be between 1 and 65535, inclusive"
PROTOCOLS = ("SCTP", "TCP", "UDP")


def objects(value: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path[i], item)`` for each object of a list (anything else yields nothing)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield f"{path}[{i}]", item


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def port_number(value: Any, path: str, required: bool) -> list[FieldError]:
    """A port number: 1-65535 (0 or absent: required, when ``required``)."""
    if value in (None, 0):
        return [FieldError(ErrorType.REQUIRED, path, "")] if required else []
    if is_int(value) and not 1 <= value <= 65535:
        return [FieldError(ErrorType.INVALID, path, PORT_RANGE, value)]
    return []


def port_name(value: Any, path: str) -> list[FieldError]:
    if not isinstance(value, str) or not value:
        return []
    return [FieldError(ErrorType.INVALID, path, msg, value) for msg in is_port_name(value)]


def one_of(value: Any, path: str, allowed: Sequence[str]) -> list[FieldError]:
    """Kubernetes' NotSupported error unless ``value`` (when set) is one of ``allowed``."""
    if not isinstance(value, str) or not value or value in allowed:
        return []
    shown = ", ".join(f'"{a}"' for a in allowed)
    return [FieldError(ErrorType.NOT_SUPPORTED, path, f"supported values: {shown}", value)]


def duplicate_names(items: list[tuple[str, dict[str, Any]]], key: str = "name") -> list[FieldError]:
    """A Duplicate error for each item whose ``key`` an earlier item already used."""
    seen: set[str] = set()
    errs = []
    for path, item in items:
        name = item.get(key)
        if isinstance(name, str) and name:
            if name in seen:
                errs.append(FieldError(ErrorType.DUPLICATE, f"{path}.{key}", "", name))
            seen.add(name)
    return errs
