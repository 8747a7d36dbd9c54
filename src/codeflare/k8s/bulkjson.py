"""JSON for large documents (a ConversionReview of a whole list page): parse with the GC paused.

Parsing 10,000 objects allocates some million dicts and lists; each allocation burst triggers the
cyclic garbage collector, which then walks the whole heap of a process holding caches (an
operator's informers, a server's objects): measured five times the parse itself. Parsed JSON
holds no reference cycles, so pausing the collector for the parse loses nothing; it is resumed
(when it was on) before :func:`loads` returns. ``orjson`` is used where it can (integers beyond
64 bits fall back to the standard library). Small documents need none of this.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import orjson


def loads(raw: bytes) -> Any:
    """``raw`` parsed, the cyclic GC paused meanwhile; ValueError when it is not JSON."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return json.loads(raw)  # e.g. integers beyond 64 bits, which orjson refuses
    finally:
        if was_enabled:
            gc.enable()


def dumps(obj: Any) -> bytes:
    """``obj`` as compact UTF-8 JSON (orjson; the standard library for what orjson refuses)."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
