"""Lists: which version a list reads, selecting objects, pages, and the continue tokens between.

A page holds the objects after the continue position that match the label and field selectors,
at most ``limit`` of them, with the list's resourceVersion (the one of the first page, carried
in the token so every page of one list reads as one snapshot's version) and the number of
matching objects left. Tokens are opaque to clients: base64 of the last name seen and the
version (-1: "the latest", the token a 410 hands back). :func:`plan_list` and
:func:`check_list_read` apply kube-apiserver's rules for ``resourceVersion``,
``resourceVersionMatch`` and ``continue`` (``storage.ValidateListOptions``,
``delegator.ShouldDelegateList``, etcd3's ``interpretListError``). Pure functions; waiting for
the store to reach a version is the caller's.
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

EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"
LATEST = -1  # a continue token's version: go on at the latest version (after a 410)
#: How long a read at a version the store has not reached waits, and the retry it then advises
#: (kube-apiserver's watch cache: ``blockTimeout`` 3 s, ``resourceVersionTooHighRetrySeconds`` 1).
FRESHNESS_WAIT_SECONDS = 3.0
TOO_LARGE_RETRY_SECONDS = 1

EXPIRED_LIST = "The resourceVersion for the provided list is too old."
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
_UINT64_MAX = 2**64 - 1


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
        start_after, token_rv = decode_continue(continue_token)
        if token_rv != LATEST:
            list_rv = token_rv
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
    """(position after which the page starts, list resourceVersion); 400 for a bad token,
    worded as kube-apiserver's ``storage.DecodeContinue`` errors."""
    invalid = "invalid continue token: continue key is not valid"
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"{invalid}: {exc}") from exc
    if data.get("v") != "meta.k8s.io/v1":
        raise errors.bad_request(f"{invalid}: server does not recognize this encoded version {data.get('v')}")
    rv = data.get("rv")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0 or rv < LATEST:
        raise errors.bad_request(
            f"{invalid}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    start = data.get("start")
    if not (isinstance(start, list) and len(start) == 2 and all(isinstance(s, str) for s in start)):
        raise errors.bad_request(f"{invalid}: encoded start key empty (version meta.k8s.io/v1)")
    return (start[0], start[1]), rv


def parse_resource_version(value: str) -> int:
    """A resourceVersion parameter as a number ("" and "0": 0); 400 worded as kube-apiserver's
    ``APIObjectVersioner.ParseResourceVersion`` (Go's ``strconv.ParseUint``)."""
    if value in ("", "0"):
        return 0
    reason = "invalid syntax"
    if value.isascii() and value.isdigit():
        number = int(value)
        if number <= _UINT64_MAX:
            return number
        reason = "value out of range"
    quoted = json.dumps(value, ensure_ascii=False)
    raise errors.bad_request(
        f"invalid resource version: resourceVersion: Invalid value: {quoted}: "
        f"strconv.ParseUint: parsing {quoted}: {reason}"
    )


@dataclass(frozen=True)
class ListRead:
    """Which version a list request reads: exactly one, at least one, or where its token says."""

    exact: int = 0  # Exact match (or a legacy paged list): this version, or an error
    minimum: int = 0  # NotOlderThan: the store must have reached this version
    continue_at: tuple[str, str] | None = None
    continue_rv: int = 0


def plan_list(resource_version: str, match: str, limit: int, continue_token: str) -> ListRead:
    """The read a list asks for (``storage.ValidateListOptions`` + ``ShouldDelegateList``); 400s.

    ``resourceVersionMatch`` has been validated (``list_options``) before. A legacy list with a
    limit and a non-zero resourceVersion reads that exact version, as kube-apiserver's does.
    """
    if continue_token:
        at, rv = decode_continue(continue_token)
        if resource_version not in ("", "0"):
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        return ListRead(continue_at=at, continue_rv=rv)
    rv = parse_resource_version(resource_version)
    if match == EXACT or (not match and limit > 0 and rv > 0):
        return ListRead(exact=rv)
    return ListRead(minimum=rv)


def check_list_read(read: ListRead, current: int, oldest: int, changed_since: Callable[[int], bool]) -> int:
    """The version the list is served at; refuses a read the store cannot serve: 504 for an
    exact version not reached yet, 410 for one it no longer holds or a continue token older than
    the retained history. ``changed_since(rv)``: whether the listed resource changed after rv.

    Deliberate difference: kube-apiserver serves an exact older version (and a continue token's)
    from etcd until compaction; this store keeps no snapshots, so an exact read of an older
    version is served only while the resource has not changed since (its state then is today's),
    else 410; a continue token inside the retained history goes on at the current state.
    """
    if read.exact and read.exact > current:
        raise errors.too_large_resource_version(read.exact, current, 0)
    if read.exact and read.exact < current and (read.exact < oldest or changed_since(read.exact)):
        raise errors.gone(EXPIRED_LIST)
    if read.continue_at is not None and read.continue_rv != LATEST and read.continue_rv < oldest:
        raise errors.gone(INCONSISTENT_CONTINUE, encode_continue(read.continue_at, LATEST))
    return read.exact or current
