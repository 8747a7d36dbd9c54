"""The dashboard's guard over real HTTP (aiohttp's test server): host, token, CSRF, headers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from codeflare.dashboard.security import COOKIE, CSRF_HEADER, HEADERS, Guard, is_loopback


async def answered(request: web.Request) -> web.Response:
    return web.Response(text="answered")


async def client_for(guard: Guard) -> TestClient:
    app = web.Application(middlewares=[guard.middleware])
    app.router.add_get("/", answered)
    app.router.add_post("/act", answered)
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    return client


@pytest.fixture
async def loopback() -> AsyncIterator[tuple[TestClient, Guard]]:
    guard = Guard.for_host("127.0.0.1", None)
    client = await client_for(guard)
    yield client, guard
    await client.close()


@pytest.fixture
async def exposed() -> AsyncIterator[tuple[TestClient, Guard]]:
    guard = Guard.for_host("0.0.0.0", None)
    client = await client_for(guard)
    yield client, guard
    await client.close()


def test_a_token_is_generated_off_loopback_only() -> None:
    assert Guard.for_host("127.0.0.1", None).token is None
    assert Guard.for_host("::1", None).token is None
    assert Guard.for_host("0.0.0.0", None).token
    assert Guard.for_host("10.1.2.3", "given").token == "given"
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and not is_loopback("example.com")


async def test_loopback_pages_answer_with_the_security_headers(loopback: tuple[TestClient, Guard]) -> None:
    client, _ = loopback
    resp = await client.get("/")
    assert resp.status == 200 and await resp.text() == "answered"
    for name, value in HEADERS.items():
        assert resp.headers[name] == value


async def test_a_rebound_host_name_is_refused(loopback: tuple[TestClient, Guard]) -> None:
    client, _ = loopback
    resp = await client.get("/", headers={"Host": "attacker.example:8686"})
    assert resp.status == 403 and "not this dashboard's loopback address" in await resp.text()


async def test_actions_need_the_csrf_token_a_same_origin_and_a_same_site_fetch(
    loopback: tuple[TestClient, Guard],
) -> None:
    client, guard = loopback
    host = f"127.0.0.1:{client.port}"
    assert (await client.post("/act")).status == 403
    assert (await client.post("/act", headers={CSRF_HEADER: "guess"})).status == 403
    wrong_origin = {CSRF_HEADER: guard.csrf, "Origin": "http://attacker.example"}
    assert (await client.post("/act", headers=wrong_origin)).status == 403
    cross_site = {CSRF_HEADER: guard.csrf, "Origin": f"http://{host}", "Sec-Fetch-Site": "cross-site"}
    assert (await client.post("/act", headers=cross_site)).status == 403
    ours = {CSRF_HEADER: guard.csrf, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
    resp = await client.post("/act", headers=ours)
    assert resp.status == 200 and await resp.text() == "answered"


async def test_off_loopback_the_token_is_required_and_then_kept_in_a_strict_cookie(
    exposed: tuple[TestClient, Guard],
) -> None:
    client, guard = exposed
    refused = await client.get("/")
    assert refused.status == 401 and "token is required" in await refused.text()
    assert (await client.get("/?token=wrong")).status == 401
    assert (await client.get("/", headers={"Authorization": f"Bearer {guard.token}"})).status == 200
    resp = await client.get(f"/?token={guard.token}&namespace=a", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/?namespace=a"
    cookie = resp.headers["Set-Cookie"]
    assert f"{COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert (await client.get("/")).status == 200  # the cookie jar now carries it
