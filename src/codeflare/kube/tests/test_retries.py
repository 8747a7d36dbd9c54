"""Temporary errors are resent with backoff when that is safe; permanent ones never are.

The policy is checked on its own (:func:`send_with_retries` with stand-in requests) and through
:class:`AsyncKube` against :class:`ScriptedAPI`, which answers with Kubernetes ``Status`` bodies
and counts what the client actually sent.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.config import from_token
from codeflare.kube.retry import RetryPolicy, send_with_retries, transport_error
from codeflare.kube.tests.scripted_api import Answer, ScriptedAPI, status_answer

FAST = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.002)


def failing(*failures: errors.KubeError) -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A request that fails with ``failures`` in turn, then succeeds; and the count of sends."""
    sent = [0]

    async def send() -> str:
        sent[0] += 1
        if sent[0] <= len(failures):
            raise failures[sent[0] - 1]
        return "ok"

    return send, sent


waits: list[float] = []


async def no_sleep(seconds: float) -> None:
    """Stands in for asyncio.sleep: records the backoff instead of waiting it."""
    waits.append(seconds)


@pytest.mark.parametrize(
    "error",
    [
        errors.BadRequest("bad", status=400),
        errors.Forbidden("no", status=403),
        errors.NotFound("gone", status=404),
        errors.Invalid("invalid", status=422),
        errors.AlreadyExists("exists", status=409),
        errors.Conflict("stale", status=409),
        errors.Gone("expired", status=410),
        errors.TimedOut("slow"),
    ],
)
async def test_permanent_errors_are_never_resent(error: errors.KubeError) -> None:
    send, sent = failing(error)
    with pytest.raises(type(error)):
        await send_with_retries(send, FAST, idempotent=True, sleep=no_sleep)
    assert sent == [1]


async def test_temporary_errors_are_resent_with_doubling_backoff() -> None:
    waits.clear()
    policy = RetryPolicy(attempts=4, base_delay=0.5, max_delay=1.5)
    send, sent = failing(errors.ServerError("503", status=503), errors.Unreachable("down"),
                         errors.TooManyRequests("slow down", status=429))
    assert await send_with_retries(send, policy, idempotent=True, sleep=no_sleep) == "ok"
    assert sent == [4] and waits == [0.5, 1.0, 1.5]


async def test_a_server_retry_after_hint_is_honoured_up_to_the_cap() -> None:
    waits.clear()
    send, _ = failing(errors.TooManyRequests("wait", retry_after=0.7),
                      errors.TooManyRequests("wait", retry_after=60))
    await send_with_retries(send, RetryPolicy(base_delay=0.1, max_delay=2.0), idempotent=True, sleep=no_sleep)
    assert waits == [0.7, 2.0]


async def test_attempts_are_bounded() -> None:
    send, sent = failing(*[errors.ServerError("503", status=503)] * 10)
    with pytest.raises(errors.ServerError):
        await send_with_retries(send, FAST, idempotent=True, sleep=no_sleep)
    assert sent == [4]


async def test_non_idempotent_requests_are_resent_only_when_never_processed() -> None:
    for error, resent in [
        (errors.ServerError("500", status=500), False),
        (errors.Unreachable("reset", sent=True), False),
        (errors.Unreachable("refused", sent=False), True),
        (errors.TooManyRequests("429", status=429), True),
    ]:
        send, sent = failing(error)
        if resent:
            assert await send_with_retries(send, FAST, idempotent=False, sleep=no_sleep) == "ok"
        else:
            with pytest.raises(type(error)):
                await send_with_retries(send, FAST, idempotent=False, sleep=no_sleep)
        assert sent == [2 if resent else 1], error


def test_status_bodies_map_to_types() -> None:
    cases = {400: errors.BadRequest, 401: errors.Unauthorized, 403: errors.Forbidden, 404: errors.NotFound,
             410: errors.Gone, 422: errors.Invalid, 429: errors.TooManyRequests, 500: errors.ServerError,
             503: errors.ServerError, 418: errors.KubeError}
    for code, cls in cases.items():
        assert type(errors.from_status({"code": code})) is cls
    assert type(errors.from_status({"code": 409, "reason": "AlreadyExists"})) is errors.AlreadyExists
    assert type(errors.from_status({"code": 409, "reason": "Conflict"})) is errors.Conflict
    throttled = errors.from_status({"code": 429, "details": {"retryAfterSeconds": 3}})
    assert isinstance(throttled, errors.TooManyRequests) and throttled.retry_after == 3
    codes = (400, 404, 409, 410, 422, 429, 503)
    assert all(errors.from_status({"code": c}).temporary == (c >= 429) for c in codes)


def test_transport_failures_say_whether_the_request_was_sent() -> None:
    import httpx2

    refused = transport_error(ConnectionRefusedError("refused"))
    assert isinstance(refused, errors.Unreachable) and not refused.sent
    assert isinstance(transport_error(httpx2.ConnectError("no route")), errors.Unreachable)
    reset = transport_error(httpx2.ReadError("reset"))
    assert isinstance(reset, errors.Unreachable) and reset.sent
    assert isinstance(transport_error(httpx2.ReadTimeout("slow")), errors.TimedOut)
    assert isinstance(transport_error(TimeoutError()), errors.TimedOut)


# -- through AsyncKube, against a server that scripts its answers ---------------------------------


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[ScriptedAPI, AsyncKube]]:
    with ScriptedAPI(default=Answer(200, CONFIGMAP)).serving() as server:
        kube = AsyncKube(from_token(server.url, "t", namespace="ns"), retry=FAST)
        try:
            yield server, kube
        finally:
            await kube.aclose()


async def test_reads_are_resent_after_server_errors(scripted: tuple[ScriptedAPI, AsyncKube]) -> None:
    server, kube = scripted
    server.script("GET", status_answer(503), status_answer(500), Answer(200, CONFIGMAP))
    assert (await kube.get(kinds.CONFIGMAP, "cm", "ns"))["metadata"]["name"] == "cm"
    assert server.methods() == ["GET", "GET", "GET"]


async def test_not_found_is_raised_after_one_request(scripted: tuple[ScriptedAPI, AsyncKube]) -> None:
    server, kube = scripted
    server.script("GET", status_answer(404, "NotFound"))
    assert await kube.find(kinds.CONFIGMAP, "cm", "ns") is None
    assert server.methods() == ["GET"]


async def test_a_create_is_resent_after_429_but_not_after_500(
    scripted: tuple[ScriptedAPI, AsyncKube],
) -> None:
    server, kube = scripted
    server.script("POST", status_answer(429, "TooManyRequests"), Answer(201, CONFIGMAP))
    await kube.create(kinds.CONFIGMAP, CONFIGMAP, "ns")
    assert server.methods() == ["POST", "POST"]
    server.received.clear()
    server.script("POST", status_answer(500), Answer(201, CONFIGMAP))
    with pytest.raises(errors.ServerError):
        await kube.create(kinds.CONFIGMAP, CONFIGMAP, "ns")
    assert server.methods() == ["POST"]


async def test_an_unreachable_server_is_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kube = AsyncKube(from_token(f"http://127.0.0.1:{port}", "t"), retry=FAST)
    try:
        with pytest.raises(errors.Unreachable) as caught:
            await kube.get(kinds.CONFIGMAP, "cm", "ns")
        assert not caught.value.sent and caught.value.temporary
    finally:
        await kube.aclose()


async def test_a_proxys_plain_text_503_is_resent_like_the_servers(
    scripted: tuple[ScriptedAPI, AsyncKube],
) -> None:
    server, kube = scripted
    server.script("GET", Answer(503, "upstream connect error", "text/plain"), Answer(200, CONFIGMAP))
    assert (await kube.get(kinds.CONFIGMAP, "cm", "ns"))["metadata"]["name"] == "cm"
    assert server.methods() == ["GET", "GET"]
