"""Decoding of the Kubernetes protobuf request bodies that kubectl sends without a JSON option.

Typed client-go clients, and so kubectl, post built-in objects as
``application/vnd.kubernetes.protobuf``: the reviews and TokenRequests of ``kubectl auth can-i``,
``auth whoami`` and ``create token``, and the objects its generator commands build (``kubectl create
configmap|secret|namespace|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding|quota|
priorityclass|service|deployment|job``). This module reads that envelope (``k8s\\0`` +
``runtime.Unknown``) and the protobuf wire format of exactly those kinds into the JSON-shaped dicts
a JSON client would send: empty strings, zero numbers and false booleans are left out as
``omitempty`` does (except where the Go field is a pointer or required: the ``!`` kinds below),
``map<string, bytes>`` values become base64 strings, quantities and int-or-strings become their
JSON scalars, and unknown fields are skipped. The field tables are generated from the upstream
``generated.proto`` files (k8s.io/api, k8s.io/apimachinery) by ``scripts/gen_protowire_tables.py``
into :mod:`protowire_tables`, which names the files and versions they were read from.

It encodes nothing, and the handlers use it only for the review/token requests and for creates
(POST); a protobuf PUT or status/scale write stays a 415. A kind outside the table (or known
under another apiVersion) is a 415 naming the accepted media types; a body that is not
well-formed protobuf of its kind, or whose envelope names another kind, is a 400; a known field
this decoder cannot turn into JSON (volumes, probes, security contexts, ...) is a 415 naming the
field rather than being dropped. Status (field 3 of most kinds) is never decoded.
"""

from __future__ import annotations

import base64
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.endpoints.protowire_tables import MESSAGES, TOP, Schema

MAGIC = b"k8s\x00"
ACCEPTED = "application/json, application/yaml"

# A schema (protowire_tables.Schema) maps a field number to (json name, decoding kind). Kinds:
#   "str" / "int" / "bool"     scalars, left out when empty/zero/false (Go omitempty)
#   "int!" / "bool!"           kept even when zero/false (pointer or required Go fields)
#   "strs"                     repeated string (empty elements kept: apiGroups [""])
#   "map" / "bmap" / "qmap"    map<string, string | bytes (base64) | Quantity>
#   "intstr"                   intstr.IntOrString as a JSON number or string
#   "bytes"                    raw bytes (the envelope's payload)
#   "reject"                   a known field with no JSON mapping here: 415 when set
#   "Name" / "[]Name"          a nested message / a repeated one


class _Rejected(Exception):
    """A known field present in the body that this decoder cannot express as JSON."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of every field; fixed-width values come back as bytes."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 2, 5):
            if wire == 2:
                length, pos = _varint(data, pos)
            else:
                length = 8 if wire == 1 else 4
            if pos + length > len(data):
                raise ValueError("truncated field")
            value = data[pos : pos + length]
            pos += length
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    """int32/int64 varints carry negative numbers as 64-bit two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: invalid UTF-8") from exc


def _scalars(
    value: bytes, where: str, strings: tuple[int, ...], varints: tuple[int, ...] = ()
) -> dict[int, Any]:
    """The last value of each known field of a small message, wire types checked; others skipped."""
    out: dict[int, Any] = {}
    for number, wire, item in _fields(value):
        if number in strings or number in varints:
            if wire != (2 if number in strings else 0):
                raise ValueError(f"{where}: unexpected wire type {wire} for field {number}")
            out[number] = item
    return out


def _entry(value: bytes, where: str) -> tuple[str, bytes]:
    """Key and raw value of one map entry (key = 1, value = 2); a missing value is empty."""
    fields = _scalars(value, where, strings=(1, 2))
    return _text(fields.get(1, b""), where), fields.get(2, b"")


def _quantity(value: bytes, where: str) -> str:
    """resource.Quantity: its canonical string is field 1."""
    return _text(_scalars(value, where, strings=(1,)).get(1, b""), where)


def _intstr(value: bytes, where: str) -> int | str:
    """intstr.IntOrString: type (1; 0 = Int, 1 = String), intVal (2), strVal (3)."""
    fields = _scalars(value, where, strings=(3,), varints=(1, 2))
    if fields.get(1, 0) == 1:
        return _text(fields.get(3, b""), where)
    return _signed(fields.get(2, 0))


def _decode(data: bytes, schema: Schema, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        fields = _fields(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}" if path else str(exc)) from exc
    for number, wire, value in fields:
        if number not in schema:
            continue  # unknown (newer or unused) field
        name, kind = schema[number]
        where = f"{path}.{name}" if path else name
        if kind == "reject":
            if value:  # an empty message (a non-nil pointer to a zero struct) means nothing
                raise _Rejected(where)
            continue
        if kind in ("int", "int!", "bool", "bool!"):
            if wire != 0 or not isinstance(value, int):
                raise ValueError(f"{where}: expected a varint")
            scalar: int | bool = bool(value) if kind.startswith("bool") else _signed(value)
            if scalar or kind.endswith("!"):
                out[name] = scalar
            continue
        if wire != 2 or not isinstance(value, bytes):
            raise ValueError(f"{where}: expected a length-delimited field")
        if kind == "bytes":
            out[name] = value
        elif kind == "str":
            text = _text(value, where)
            if text:
                out[name] = text
        elif kind == "strs":
            out.setdefault(name, []).append(_text(value, where))
        elif kind in ("map", "bmap", "qmap"):
            key, raw = _entry(value, where)
            entries = out.setdefault(name, {})
            if kind == "map":
                entries[key] = _text(raw, f"{where}[{key}]")
            elif kind == "bmap":
                entries[key] = base64.b64encode(raw).decode("ascii")
            else:
                entries[key] = _quantity(raw, f"{where}[{key}]")
        elif kind == "intstr":
            out[name] = _intstr(value, where)
        elif kind.startswith("[]"):
            items = out.setdefault(name, [])
            items.append(_decode(value, MESSAGES[kind[2:]], f"{where}[{len(items)}]"))
        else:
            out[name] = _decode(value, MESSAGES[kind], where)
    return out


def decode_request(raw: bytes, kind: str, api_version: str | None = None) -> dict[str, Any]:
    """The JSON-shaped object of a protobuf-encoded request body of ``kind``.

    ``api_version``, when given, must be the one the table knows ``kind`` under (so a custom
    resource that happens to share a built-in kind is never decoded as the built-in). 415 for
    kinds (or fields) this module cannot decode, 400 for bodies that are not valid protobuf.
    """
    entry = TOP.get(kind)
    if entry is None or (api_version is not None and api_version != entry[0]):
        raise errors.unsupported_media_type(ACCEPTED)
    known_version, schema = entry
    if not raw.startswith(MAGIC):
        raise errors.bad_request("protobuf body without the k8s envelope")
    try:
        envelope = _decode(raw[len(MAGIC) :], MESSAGES["Unknown"], "")
    except ValueError as exc:
        raise errors.bad_request(f"the protobuf envelope could not be decoded: {exc}") from exc
    type_meta = envelope.get("typeMeta") or {}
    if not type_meta.get("kind"):
        raise errors.bad_request("the protobuf envelope does not name the kind of its object")
    if type_meta["kind"] != kind:
        raise errors.bad_request(f"the kind in the data ({type_meta['kind']}) does not match {kind}")
    if envelope.get("contentEncoding"):
        raise errors.unsupported_media_type(ACCEPTED)
    try:
        body = _decode(envelope.get("raw", b""), schema, "")
    except _Rejected as exc:
        raise errors.ApiError(
            415,
            "UnsupportedMediaType",
            f"the protobuf body sets {exc}, which this server does not decode from protobuf - "
            f"accepted media types include: {ACCEPTED}",
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise errors.bad_request(f"the protobuf body could not be decoded: {exc}") from exc
    body["apiVersion"] = type_meta.get("apiVersion") or known_version
    body["kind"] = kind
    return body
