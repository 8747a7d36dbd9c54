"""List and watch options validated as kube-apiserver validates them.

The cases of ``TestValidateListOptions`` in kubernetes/apimachinery
``pkg/apis/meta/internalversion/validation/validation_test.go``, ported as data (the WatchList
feature on, its default; the cases that need it off are left out: it is always on here), plus the
integer parsing of ``limit``/``timeoutSeconds`` (Go's ``strconv.ParseInt``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.apiserver import errors
from codeflare.apiserver.endpoints.list_options import (
    ListOptions,
    list_options,
    parse_int64,
    validate_list_options,
)

SEND_NEEDS_MATCH = (
    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
)

# (test name upstream, options, expected error messages in order)
CASES: list[tuple[str, ListOptions, list[str]]] = [
    ("valid-default", ListOptions(), []),
    (
        "valid-resourceversionmatch-exact",
        ListOptions(resource_version="1", resource_version_match="Exact"),
        [],
    ),
    (
        "invalid-resourceversionmatch-exact",
        ListOptions(resource_version="0", resource_version_match="Exact"),
        [
            "resourceVersionMatch: Forbidden: "
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
        ],
    ),
    (
        "valid-resourceversionmatch-notolderthan",
        ListOptions(resource_version="0", resource_version_match="NotOlderThan"),
        [],
    ),
    (
        "invalid-resourceversionmatch",
        ListOptions(resource_version="0", resource_version_match="foo"),
        ['resourceVersionMatch: Unsupported value: "foo": supported values: "Exact", "NotOlderThan", ""'],
    ),
    (
        "list-sendInitialEvents-forbidden",
        ListOptions(send_initial_events=True),
        ["sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"],
    ),
    ("valid-watch-default", ListOptions(watch=True), []),
    (
        "valid-watch-sendInitialEvents-on",
        ListOptions(
            watch=True,
            send_initial_events=True,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
        ),
        [],
    ),
    (
        "valid-watch-sendInitialEvents-off",
        ListOptions(
            watch=True,
            send_initial_events=False,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
        ),
        [],
    ),
    (
        "watch-resourceversionmatch-without-sendInitialEvents-forbidden",
        ListOptions(watch=True, resource_version_match="NotOlderThan"),
        [
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
            "sendInitialEvents is provided"
        ],
    ),
    (
        "watch-sendInitialEvents-with-exact-resourceversionmatch-forbidden",
        ListOptions(
            watch=True, send_initial_events=True, resource_version_match="Exact", allow_watch_bookmarks=True
        ),
        [
            SEND_NEEDS_MATCH,
            'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"',
        ],
    ),
    (
        "watch-sendInitialEvents-with-incorrect-resourceversionmatch-forbidden",
        ListOptions(
            watch=True,
            send_initial_events=True,
            resource_version_match="incorrect",
            allow_watch_bookmarks=True,
        ),
        [
            SEND_NEEDS_MATCH,
            'resourceVersionMatch: Unsupported value: "incorrect": supported values: "NotOlderThan"',
        ],
    ),
    (
        "watch-sendInitialEvents-no-allowWatchBookmark",
        ListOptions(watch=True, send_initial_events=True, resource_version_match="NotOlderThan"),
        [],
    ),
    (
        "watch-sendInitialEvents-no-watchlist-fg-disabled (the one with continue)",
        ListOptions(
            watch=True,
            send_initial_events=True,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
            continue_token="123",
        ),
        ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"],
    ),
    # not upstream: the first rule of the list branch, and the send-initial-events-without-match
    # cases upstream with the feature on (upstream also expects the feature-gate error)
    (
        "list-match-without-resourceversion",
        ListOptions(resource_version_match="Exact"),
        [
            "resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden unless resourceVersion is provided"
        ],
    ),
    (
        "watch-sendInitialEvents-without-resourceversionmatch-forbidden",
        ListOptions(watch=True, send_initial_events=True),
        [SEND_NEEDS_MATCH],
    ),
]


@pytest.mark.parametrize(("name", "opts", "expected"), CASES, ids=[c[0] for c in CASES])
def test_validate_list_options(name: str, opts: ListOptions, expected: list[str]) -> None:
    assert [e.message() for e in validate_list_options(opts)] == expected


def test_invalid_options_are_422_on_list_options() -> None:
    with pytest.raises(errors.ApiError) as caught:
        list_options({"resourceVersionMatch": "NotOlderThan"}, watch=False)
    status = caught.value.status()
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"].startswith(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden'
    )
    assert status["details"]["kind"] == "ListOptions" and status["details"]["group"] == "meta.k8s.io"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("9223372036854775807", 9223372036854775807),
        ("-9223372036854775808", -9223372036854775808),
        ("+5", 5),
        ("007", 7),
        ("-1", -1),
    ],
)
def test_int64_parameters(value: str, expected: int) -> None:
    assert parse_int64({"limit": value}, "limit") == expected


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("x", "invalid syntax"),
        ("1.5", "invalid syntax"),
        (" 1", "invalid syntax"),
        ("\u0661", "invalid syntax"),
        ("9223372036854775808", "value out of range"),
    ],
)
def test_malformed_int64_parameters_are_400(value: str, reason: str) -> None:
    with pytest.raises(errors.ApiError) as caught:
        parse_int64({"limit": value}, "limit")
    assert caught.value.code == 400
    quoted = json.dumps(value, ensure_ascii=False)
    assert caught.value.message == f"limit: strconv.ParseInt: parsing {quoted}: {reason}"


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_every_int64_round_trips(number: int) -> None:
    assert parse_int64({"limit": str(number)}, "limit") == number
