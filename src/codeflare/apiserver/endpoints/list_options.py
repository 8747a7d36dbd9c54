"""The query options of a list or watch, parsed and validated as kube-apiserver does.

``limit``, ``timeoutSeconds``, ``resourceVersion``, ``resourceVersionMatch``,
``sendInitialEvents``, ``allowWatchBookmarks`` and ``continue`` become one :class:`ListOptions`;
:func:`validate_list_options` is apimachinery's ``internalversion/validation``
``ValidateListOptions`` (its combinations answer 422 ``ListOptions.meta.k8s.io "" is invalid``),
and malformed numbers are 400. Which version a list then reads is
:mod:`codeflare.apiserver.registry.listing`'s; how a watch starts is the hub's. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from codeflare.apiserver import errors
from codeflare.apiserver.endpoints.request import query_bool
from codeflare.apiserver.registry.listing import EXACT, NOT_OLDER_THAN
from codeflare.k8s.schema.field import ErrorType, FieldError

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class ListOptions:
    """``metav1.ListOptions`` as a request gives them (booleans already parsed)."""

    watch: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    send_initial_events: bool | None = None
    allow_watch_bookmarks: bool = False
    limit: int = 0  # 0 or negative: no limit (kube-apiserver pages only for a positive limit)
    continue_token: str = ""
    timeout_seconds: int | None = None


def parse_int64(query: Mapping[str, str], name: str) -> int | None:
    """An int64 query parameter (Go's ``strconv.ParseInt``); 400 naming it when malformed."""
    value = query.get(name)
    if value in (None, ""):
        return None
    text = value.strip()
    digits = text[1:] if text[:1] in "+-" else text
    reason = "invalid syntax"
    if text == value and digits.isascii() and digits.isdigit():
        number = int(text)
        if _INT64_MIN <= number <= _INT64_MAX:
            return number
        reason = "value out of range"
    raise errors.bad_request(
        f"{name}: strconv.ParseInt: parsing {json.dumps(value, ensure_ascii=False)}: {reason}"
    )


def list_options(query: Mapping[str, str], watch: bool) -> ListOptions:
    """The options of a list (``watch`` False) or watch request, validated; 400 or 422."""
    send_initial_events = query_bool(query, "sendInitialEvents") if "sendInitialEvents" in query else None
    timeout = parse_int64(query, "timeoutSeconds")
    if timeout is not None and timeout < 0:
        # Deliberate difference: kube-apiserver starts a watch that ends at once.
        raise errors.bad_request("timeoutSeconds: must be >= 0")
    opts = ListOptions(
        watch=watch,
        resource_version=query.get("resourceVersion", ""),
        resource_version_match=query.get("resourceVersionMatch", ""),
        send_initial_events=send_initial_events,
        allow_watch_bookmarks=query_bool(query, "allowWatchBookmarks"),
        limit=parse_int64(query, "limit") or 0,
        continue_token=query.get("continue", ""),
        timeout_seconds=timeout,
    )
    causes = validate_list_options(opts)
    if causes:
        raise errors.invalid("ListOptions", "", causes, "meta.k8s.io")
    return opts


def _forbidden(name: str, why: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, name, why)


def _not_supported(name: str, value: str, supported: tuple[str, ...]) -> FieldError:
    listed = ", ".join(json.dumps(s) for s in supported)
    return FieldError(ErrorType.NOT_SUPPORTED, name, f"supported values: {listed}", value)


def validate_list_options(opts: ListOptions) -> list[FieldError]:
    """apimachinery's ``ValidateListOptions`` with the WatchList feature on (its default)."""
    if opts.watch:
        return _validate_watch_options(opts)
    errs: list[FieldError] = []
    match = opts.resource_version_match
    if match:
        if not opts.resource_version:
            errs.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if opts.continue_token:
            errs.append(
                _forbidden(
                    "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
                )
            )
        if match not in (EXACT, NOT_OLDER_THAN):
            errs.append(_not_supported("resourceVersionMatch", match, (EXACT, NOT_OLDER_THAN, "")))
        if match == EXACT and opts.resource_version == "0":
            errs.append(
                _forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if opts.send_initial_events is not None:
        errs.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return errs


def _validate_watch_options(opts: ListOptions) -> list[FieldError]:
    errs: list[FieldError] = []
    match = opts.resource_version_match
    if opts.send_initial_events is not None and match != NOT_OLDER_THAN:
        errs.append(
            _forbidden(
                "resourceVersionMatch",
                f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}",
            )
        )
    if match:
        if opts.send_initial_events is None:
            errs.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        if match != NOT_OLDER_THAN:
            errs.append(_not_supported("resourceVersionMatch", match, (NOT_OLDER_THAN,)))
        if opts.continue_token:
            errs.append(
                _forbidden(
                    "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
                )
            )
    return errs
