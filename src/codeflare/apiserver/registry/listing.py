"""Lists: selecting objects, cutting them into pages, and the continue tokens between pages.

A page holds the objects after the continue position that match the label and field selectors,
at most ``limit`` of them, with the list's resourceVersion (the one of the first page, carried
in the token so every page of one list reads as one snapshot's version) and the number of
matching objects left. Tokens are opaque to clients: base64 of the last name seen and the
version. Pure functions over an iterable of stored objects.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector


@dataclass
class ListResult:
    """One page of a list: the objects, the list resourceVersion and the continue token."""

    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


def list_page(
    objs: Iterable[dict[str, Any]],
    present: Callable[[dict[str, Any]], dict[str, Any]],
    resource_version: int,
    label_selector: LabelSelector | None = None,
    field_selector: FieldSelector | None = None,
    limit: int = 0,
    continue_token: str = "",
) -> ListResult:
    """The page of ``objs`` (sorted by namespace and name) a list request asks for."""
    start_after: tuple[str, str] | None = None
    list_rv = resource_version
    if continue_token:
        start_after, list_rv = decode_continue(continue_token)
    items: list[dict[str, Any]] = []
    pinned_name = field_selector.exact_value("metadata.name") if field_selector else None
    total_after = 0
    for obj in objs:
        meta = obj["metadata"]
        pos = (meta.get("namespace", ""), meta["name"])
        if start_after is not None and pos <= start_after:
            continue
        if pinned_name is not None and meta["name"] != pinned_name:
            continue
        if label_selector is not None and not label_selector.matches(meta.get("labels") or {}):
            continue
        if field_selector is not None and not field_selector.matches(obj):
            continue
        if limit and len(items) >= limit:
            total_after += 1
            continue
        items.append(present(obj))
    token = ""
    remaining = None
    if limit and total_after:
        last = items[-1]["metadata"]
        token = encode_continue((last.get("namespace", ""), last["name"]), list_rv)
        remaining = total_after
    return ListResult(items, list_rv, token, remaining)


def encode_continue(after: tuple[str, str], rv: int) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(after)})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[tuple[str, str], int]:
    """(position after which the page starts, list resourceVersion); 400 for a bad token."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        start = data["start"]
        if not (isinstance(start, list) and len(start) == 2 and all(isinstance(s, str) for s in start)):
            raise ValueError("start")
        rv = int(data["rv"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}") from exc
    return (start[0], start[1]), rv
