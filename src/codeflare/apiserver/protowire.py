"""Decoding of the few Kubernetes protobuf request bodies that kubectl sends without a JSON option.

``kubectl auth can-i``, ``auth whoami`` and ``create token`` post their reviews and TokenRequests
as ``application/vnd.kubernetes.protobuf`` (while accepting JSON answers). This module reads that
envelope (``k8s\\0`` + ``runtime.Unknown``) and the protobuf wire format of exactly those kinds
into the JSON-shaped dicts the review handlers take. It encodes nothing and knows no other kinds;
anything it cannot read is a 400/415, as before.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver import errors

MAGIC = b"k8s\x00"

# message name -> field number -> (json name, type); type: "str", "int", "strs", or a message name
_MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes")},
    "TypeMeta": {1: ("apiVersion", "str"), 2: ("kind", "str")},
    "ObjectMeta": {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str")},
    "ResourceAttributes": {
        1: ("namespace", "str"),
        2: ("verb", "str"),
        3: ("group", "str"),
        4: ("version", "str"),
        5: ("resource", "str"),
        6: ("subresource", "str"),
        7: ("name", "str"),
    },
    "NonResourceAttributes": {1: ("path", "str"), 2: ("verb", "str")},
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "SubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
        3: ("user", "str"),
        4: ("groups", "strs"),
        6: ("uid", "str"),
    },
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "str")},
    "TokenReviewSpec": {1: ("token", "str"), 2: ("audiences", "strs")},
    "TokenRequestSpec": {1: ("audiences", "strs"), 4: ("expirationSeconds", "int")},
}
_TOP: dict[str, dict[int, tuple[str, str]]] = {
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec")},
    "LocalSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta")},
    "TokenReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenReviewSpec")},
    "TokenRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenRequestSpec")},
}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            out.append((number, data[pos : pos + length]))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _decode(data: bytes, schema: dict[int, tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        if number not in schema:
            continue
        name, kind = schema[number]
        if kind == "int":
            if not isinstance(value, int):
                raise ValueError(f"{name}: expected an integer")
            out[name] = value - (1 << 64) if value >= 1 << 63 else value
            continue
        if not isinstance(value, bytes):
            raise ValueError(f"{name}: expected bytes")
        if kind == "bytes":
            out[name] = value
        elif kind == "str":
            out[name] = value.decode("utf-8")
        elif kind == "strs":
            out.setdefault(name, []).append(value.decode("utf-8"))
        else:
            out[name] = _decode(value, _MESSAGES[kind])
    return out


def decode_request(raw: bytes, kind: str) -> dict[str, Any]:
    """The JSON-shaped object of a protobuf-encoded request body of ``kind``; 400/415 otherwise."""
    schema = _TOP.get(kind)
    if schema is None:
        raise errors.unsupported_media_type("application/json, application/yaml")
    if not raw.startswith(MAGIC):
        raise errors.bad_request("protobuf body without the k8s envelope")
    try:
        envelope = _decode(raw[len(MAGIC) :], _MESSAGES["Unknown"])
        body = _decode(envelope.get("raw", b""), schema)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise errors.bad_request(f"the protobuf body could not be decoded: {exc}") from exc
    type_meta = envelope.get("typeMeta") or {}
    if type_meta.get("kind") not in (None, "", kind):
        raise errors.bad_request(f"the kind in the data ({type_meta.get('kind')}) does not match {kind}")
    body["apiVersion"] = type_meta.get("apiVersion", "")
    body["kind"] = kind
    return body
