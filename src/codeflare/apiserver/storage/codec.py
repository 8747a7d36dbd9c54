"""The server's one compact JSON encoder: what it stores and what it answers.

``orjson`` where it can encode the value (several times faster than the standard library, which
was a visible share of every write and every watch event); the standard library where orjson
refuses, so nothing that encoded before fails now: integers beyond 64 bits (schema-free fields
may hold them), non-string keys, values orjson does not know. Both write compact JSON with UTF-8
text as is (no ``\\u`` escapes of non-ASCII) and keep key order; they may spell a float
differently (``1e16`` / ``1e+16``), which decodes to the same number. Nothing here decides what
is encoded.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps_bytes(obj: Any) -> bytes:
    """``obj`` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # orjson.JSONEncodeError is one: too big an int, a non-string key, ...
        return _stdlib(obj).encode()


def dumps(obj: Any) -> str:
    """``obj`` as compact JSON text."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return _stdlib(obj)


def _stdlib(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
