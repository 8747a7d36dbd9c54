"""Watches give back what they hold: memory returns to its pre-watch level after 100 close.

Issue 15 observed the memory held by 100 watches not released when they closed. The server runs
in this process, so ``tracemalloc`` sees its allocations; the 100 watches come from a child
process over real HTTP (httpx), so what the clients hold is not counted. One round of watches
warms the server up (lazy imports, caches); then 100 watches open, each receives an event, the
child exits (its connections close), and the server's traced memory must come back to within
10% of what the watches held at their peak - far tighter than 10% of the whole traced memory.
The hub's watcher count is the signal that the server has let go of them.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from codeflare.apiserver.server import ApiServer
from tests.support.polling import async_wait_for

WATCHES = 100

# The child: open N watches, create one ConfigMap once all are registered (their response
# headers are sent after registration), read its ADDED event on every watch, say so, and exit
# when told (the OS closes its connections).
CLIENT = """
import asyncio, json, sys
import httpx

async def main(url, token, ca, count, name):
    cms = "/api/v1/namespaces/default/configmaps"
    limits = httpx.Limits(max_connections=count + 5)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer " + token},
                                 limits=limits, timeout=60, verify=ca) as http:
        rv = (await http.get(cms)).json()["metadata"]["resourceVersion"]
        streams = [await http.send(http.build_request("GET", cms, params={"watch": "true",
                   "resourceVersion": rv}), stream=True) for _ in range(count)]
        assert all(s.status_code == 200 for s in streams)
        created = await http.post(cms, json={"metadata": {"name": name}, "data": {"k": "v" * 1024}})
        assert created.status_code == 201, created.text
        readers = [stream.aiter_lines() for stream in streams]  # kept: a dropped reader closes
        for reader in readers:
            line = ""
            while not line.strip():
                line = await reader.__anext__()
            assert json.loads(line)["type"] == "ADDED"
        print("held", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]))
"""


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ApiServer]:
    api = ApiServer(tmp_path / "state", gc_resync=3600.0)  # TLS, as served
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def watches_from_a_child(server: ApiServer, count: int, name: str) -> int:
    """Open ``count`` watches from a child process; the traced memory while they are held."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENT,
        server.url,
        server.admin_token,
        str(server.ca_path),
        str(count),
        name,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    line = await asyncio.wait_for(child.stdout.readline(), 120)
    assert line.strip() == b"held", line
    assert server.hub.count == count
    held = traced()
    child.stdin.write(b"done\n")
    await child.stdin.drain()
    assert await asyncio.wait_for(child.wait(), 60) == 0
    await async_wait_for(lambda: server.hub.count == 0, what="every watch closed on the server")
    return held


async def test_memory_returns_after_100_watches_close(server: ApiServer) -> None:
    tracemalloc.start()
    try:
        await watches_from_a_child(server, 1, "warm-up")
        before = traced()
        held = await watches_from_a_child(server, WATCHES, "seen") - before
        after = traced() - before
    finally:
        tracemalloc.stop()
    assert held > 0, "the open watches held no memory: the measurement saw nothing"
    assert after <= 0.1 * held, (
        f"before {before} B, while {WATCHES} watches were open +{held} B, after +{after} B"
    )
