"""Which version a list reads, and its continue tokens, as kube-apiserver decides them.

Cases from k8s.io/apiserver: ``pkg/storage/continue.go`` (``DecodeContinue``'s errors; its test
``continue_test.go`` ``Test_decodeContinue``: empty and invalid version, invalid RV, no start
key), ``pkg/storage/interfaces.go`` (``ValidateListOptions``: no resourceVersion with continue),
``pkg/storage/api_object_versioner.go`` (``ParseResourceVersion``),
``pkg/storage/cacher/delegator/interface.go`` (``ShouldDelegateList``: Exact and legacy paged
lists read one version, NotOlderThan waits), ``pkg/storage/etcd3/errors.go`` (the 410 with a
fresh continue token) and ``pkg/storage/errors.go`` (``NewTooLargeResourceVersionError``).
Our tokens hold (namespace, name), not an etcd key, so the path-traversal cases do not apply.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.apiserver import errors
from codeflare.apiserver.registry.listing import (
    INCONSISTENT_CONTINUE,
    LATEST,
    ListRead,
    check_list_read,
    decode_continue,
    encode_continue,
    list_page,
    parse_resource_version,
    plan_list,
)


def token(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def raises(code: int, call: object, *args: object) -> errors.ApiError:
    with pytest.raises(errors.ApiError) as caught:
        call(*args)  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    return caught.value


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("abc", "invalid syntax"),
        ("-5", "invalid syntax"),
        ("1.0", "invalid syntax"),
        ("18446744073709551616", "value out of range"),
    ],
)
def test_a_malformed_resource_version_is_400_worded_as_kube(value: str, reason: str) -> None:
    err = raises(400, parse_resource_version, value)
    assert err.message == (
        f'invalid resource version: resourceVersion: Invalid value: "{value}": '
        f'strconv.ParseUint: parsing "{value}": {reason}'
    )


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_every_uint64_resource_version_parses(rv: int) -> None:
    assert parse_resource_version(str(rv)) == rv


@pytest.mark.parametrize(
    ("tok", "why"),
    [
        ("%%%", "continue key is not valid"),
        (
            token({"v": "meta.k8s.io/v2", "rv": 1, "start": ["a", "b"]}),
            "server does not recognize this encoded version",
        ),
        (
            token({"v": "meta.k8s.io/v1", "rv": 0, "start": ["a", "b"]}),
            "incorrect encoded start resourceVersion",
        ),
        (token({"v": "meta.k8s.io/v1", "rv": 3, "start": []}), "encoded start key empty"),
        (token({"rv": 1, "start": ["a", "b"]}), "server does not recognize this encoded version"),
        (token([1, 2]), "continue key is not valid"),
    ],
)
def test_bad_continue_tokens_are_400(tok: str, why: str) -> None:
    err = raises(400, decode_continue, tok)
    assert err.message.startswith("invalid continue token: continue key is not valid") and why in err.message


@given(
    st.text(max_size=20), st.text(max_size=20), st.integers(min_value=1, max_value=2**40) | st.just(LATEST)
)
def test_continue_tokens_round_trip(ns: str, name: str, rv: int) -> None:
    assert decode_continue(encode_continue((ns, name), rv)) == ((ns, name), rv)


def test_continue_with_a_resource_version_is_400() -> None:
    tok = encode_continue(("default", "a"), 5)
    err = raises(400, plan_list, "7", "", 10, tok)
    assert err.message == "specifying resource version is not allowed when using continue"
    assert plan_list("0", "", 10, tok) == ListRead(continue_at=("default", "a"), continue_rv=5)


@pytest.mark.parametrize(
    ("rv", "match", "limit", "expected"),
    [
        ("", "", 0, ListRead()),
        ("0", "", 500, ListRead()),
        ("7", "", 0, ListRead(minimum=7)),  # legacy, unpaged: not older than
        ("7", "", 500, ListRead(exact=7)),  # legacy, paged: exact (delegated to etcd upstream)
        ("7", "NotOlderThan", 500, ListRead(minimum=7)),
        ("7", "Exact", 0, ListRead(exact=7)),
    ],
)
def test_which_version_a_list_reads(rv: str, match: str, limit: int, expected: ListRead) -> None:
    assert plan_list(rv, match, limit, "") == expected


def never_changed(rv: int) -> bool:
    return False


def test_an_exact_version_not_reached_is_504_too_large() -> None:
    status = raises(504, check_list_read, ListRead(exact=50), 12, 0, never_changed).status()
    assert status["reason"] == "Timeout"
    assert status["message"] == "Timeout: Too large resource version: 50, current: 12"
    assert status["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    }


def test_an_exact_older_version_is_served_only_while_unchanged() -> None:
    assert check_list_read(ListRead(exact=8), 12, 0, never_changed) == 8
    assert check_list_read(ListRead(exact=12), 12, 0, lambda rv: True) == 12
    assert raises(410, check_list_read, ListRead(exact=8), 12, 0, lambda rv: True).reason == "Expired"
    assert raises(410, check_list_read, ListRead(exact=8), 12, 10, never_changed).reason == "Expired"


def test_a_continue_token_older_than_the_history_is_410_with_a_token_to_go_on() -> None:
    read = ListRead(continue_at=("default", "m"), continue_rv=5)
    status = raises(410, check_list_read, read, 100, 50, never_changed).status()
    assert status["reason"] == "Expired" and status["message"] == INCONSISTENT_CONTINUE
    assert decode_continue(status["metadata"]["continue"]) == (("default", "m"), LATEST)
    assert (
        check_list_read(ListRead(continue_at=("default", "m"), continue_rv=LATEST), 100, 50, never_changed)
        == 100
    )
    assert (
        check_list_read(ListRead(continue_at=("default", "m"), continue_rv=60), 100, 50, never_changed) == 100
    )


def test_the_fresh_token_goes_on_at_the_latest_version() -> None:
    objs = [{"metadata": {"namespace": "default", "name": n}} for n in ("a", "m", "z")]
    page = list_page(objs, lambda o: o, 100, continue_token=encode_continue(("default", "m"), LATEST))
    assert [o["metadata"]["name"] for o in page.items] == ["z"] and page.resource_version == 100
    page = list_page(objs, lambda o: o, 100, continue_token=encode_continue(("default", "a"), 60))
    assert page.resource_version == 60
