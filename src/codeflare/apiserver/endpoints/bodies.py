"""Decoding request bodies into plain JSON values the rest of the server can trust.

``json.loads`` and ``yaml.safe_load`` accept more than Kubernetes does: NaN and infinities,
lone UTF-16 surrogates (which cannot be written back out), YAML timestamps, binary, sets,
non-string keys, anchors that alias one node many times (a "billion laughs" document) or
itself, and nesting deep enough to exhaust Python's recursion further down; and they keep the
last of repeated keys silently. This module turns a body into JSON-compatible dicts, lists,
strings, numbers, booleans and None, or raises :class:`ValueError` naming the problem; the HTTP
layer maps that to 400. Repeated keys are not an error here: an object that has some comes back
as a :class:`DecodedObject` listing them (``fieldValidation`` decides later whether they refuse
the write). No HTTP here.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
import re
from typing import Any

import yaml

MAX_DEPTH = 100
MAX_NODES = 1_000_000


# The end of a key: a quote not escaped (after an even run of backslashes) followed by a colon.
# Every key's closing quote matches; inside strings only an opening quote can (a string that
# starts with a colon), so a fieldsV1 key such as ``"k:{\"name\":\"main\"}"``, which holds
# ``\":``, no longer sends every managed object to the exact second pass.
_KEY_END = re.compile(r'(?<!\\)(?:\\\\)*"\s*:')


class DecodedObject(dict[str, Any]):
    """A decoded JSON or YAML object whose text repeated some keys.

    ``duplicate_fields`` holds one ``(path, message)`` per repeat, worded as kube-apiserver
    words it: ``("spec.paused", 'duplicate field "paused"')`` for JSON, and for YAML (whose
    paths are not tracked, so the path is empty) ``'line 3: key "paused" already set in map'``.
    """

    duplicate_fields: list[tuple[str, str]]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _has_escaped_surrogate(text: str) -> bool:
    lowered = text.lower()
    return (
        "\\ud8" in lowered
        or "\\ud9" in lowered
        or "\\uda" in lowered
        or "\\udb" in lowered
        or ("\\udc" in lowered or "\\udd" in lowered or "\\ude" in lowered or "\\udf" in lowered)
    )


def decode_json(text: str) -> Any:
    """Parse JSON text strictly: no NaN/Infinity, no out-of-range numbers, no lone surrogates."""
    value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    nodes = [0, 0]
    if _has_escaped_surrogate(text):
        _check(value, 0, nodes, check_strings=True, convert=False)
    else:  # nothing to check in the strings: walk the containers only
        nodes[0] = 1
        if isinstance(value, dict | list):
            _count_containers(value, 0, nodes)
    # Every key ends with an unescaped `"` then `:`; more of those than keys decoded means a
    # repeated key (or a string value starting with `:`, which the exact second pass tells
    # apart). Counting the colons first (one C loop) settles the common case.
    keys = nodes[1]
    if isinstance(value, dict) and text.count(":") > keys and len(_KEY_END.findall(text)) > keys:
        duplicates = _json_duplicates(text)
        if duplicates:
            value = DecodedObject(value)
            value.duplicate_fields = duplicates
    return value


def _count_containers(value: dict[str, Any] | list[Any], depth: int, nodes: list[int]) -> None:
    """:func:`_check` for decoded JSON whose strings need no check: the same budgets and counts,
    visiting only dicts and lists (most values are scalars, and a call per scalar was most of a
    write's decoding cost)."""
    if value and depth >= MAX_DEPTH:  # its values are one level deeper
        raise ValueError(f"the body is nested deeper than {MAX_DEPTH} levels")
    nodes[0] += len(value)
    if nodes[0] > MAX_NODES:
        raise ValueError(f"the body has more than {MAX_NODES} values")
    items = value.values() if isinstance(value, dict) else value
    if isinstance(value, dict):
        nodes[1] += len(value)
    for item in items:
        if type(item) is dict or type(item) is list:
            _count_containers(item, depth + 1, nodes)


def _json_duplicates(text: str) -> list[tuple[str, str]]:
    """``(path, message)`` of the keys repeated within one object of ``text`` (valid JSON)."""
    found: list[tuple[str, str]] = []
    tree = json.loads(text, object_pairs_hook=_Pairs, parse_constant=_reject_constant)
    _collect_duplicates(tree, "", found)
    return found


class _Pairs(list[tuple[str, Any]]):
    """An object's members in text order (the second pass keeps repeats)."""


def _collect_duplicates(node: Any, path: str, found: list[tuple[str, str]]) -> None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, child in node:
            sub = f"{path}.{key}" if path else key
            if key in seen and all(sub != p for p, _ in found):
                found.append((sub, f"duplicate field {json.dumps(key)}"))
            seen.add(key)
            _collect_duplicates(child, sub, found)
    elif isinstance(node, list):
        for i, child in enumerate(node):
            _collect_duplicates(child, f"{path}[{i}]", found)


class _DuplicateKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader noting repeated mapping keys with their lines."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, str]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key in seen:
                line = key_node.start_mark.line + 1
                self.duplicates.append(("", f"line {line}: key {json.dumps(key)} already set in map"))
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def decode_yaml(text: str) -> Any:
    """Parse one YAML document and convert it to the JSON value Kubernetes would see.

    JSON is YAML, and clients send JSON as YAML (client-go's server-side apply bodies are JSON
    sent as ``application/apply-patch+yaml``): a body that starts with ``{`` is tried as JSON first
    (C speed instead of PyYAML's pure-Python scanner, about 40 times faster for a Workload);
    anything the JSON decoder refuses or finds repeated keys in goes to the YAML parser, so
    YAML's answer (value, error or duplicate message) is the one given. Where they could differ
    on a JSON text, the JSON reading is kept: an exponent without a dot (``1e3``) is a number,
    as in Kubernetes' YAML decoder, where PyYAML's YAML 1.1 makes it a string.
    """
    if text.lstrip().startswith("{"):
        try:
            value = decode_json(text)
        except ValueError:  # json.JSONDecodeError is one
            pass
        else:
            if not isinstance(value, DecodedObject):
                return value
    loader = _DuplicateKeyLoader(text)
    try:
        raw = loader.get_single_data()
    finally:
        loader.dispose()
    value = _check(raw, 0, [0, 0], check_strings=True, convert=True)
    if isinstance(value, dict) and loader.duplicates:
        value = DecodedObject(value)
        value.duplicate_fields = loader.duplicates
    return value


def _scalar(value: Any, check_strings: bool) -> Any:
    if isinstance(value, str):
        if check_strings:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError("the body contains an invalid Unicode string (a lone surrogate)") from exc
        return value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError("NaN and infinite numbers are not allowed")
        return value
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise ValueError(f"unsupported value of type {type(value).__name__}")


def _key(key: Any, check_strings: bool) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, str | int | float):
        return str(_scalar(key, check_strings))
    raise ValueError(f"unsupported mapping key of type {type(key).__name__}")


def _check(value: Any, depth: int, nodes: list[int], *, check_strings: bool, convert: bool) -> Any:
    """Walk ``value`` within the depth and node budgets; convert YAML-only types when asked."""
    nodes[0] += 1
    if nodes[0] > MAX_NODES:
        raise ValueError(f"the body has more than {MAX_NODES} values")
    if depth > MAX_DEPTH:
        raise ValueError(f"the body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        nodes[1] += len(value)
        if not convert:
            for item in value.values():
                _check(item, depth + 1, nodes, check_strings=check_strings, convert=False)
            if check_strings:
                for key in value:
                    _scalar(key, True)
            return value
        return {
            _key(k, check_strings): _check(v, depth + 1, nodes, check_strings=check_strings, convert=True)
            for k, v in value.items()
        }
    if isinstance(value, list | set | tuple):
        if not convert:
            for item in value:
                _check(item, depth + 1, nodes, check_strings=check_strings, convert=False)
            return value
        items = sorted(value, key=repr) if isinstance(value, set) else value
        return [_check(v, depth + 1, nodes, check_strings=check_strings, convert=True) for v in items]
    return _scalar(value, check_strings) if convert or check_strings else value
