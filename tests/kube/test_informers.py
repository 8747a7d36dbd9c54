"""Shared informers against a real API server: one watch per kind, many subscribers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from codeflare.kube import config, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import SharedInformers
from tests.support.apiserver import ServerProcess
from tests.support.polling import async_wait_for

Event = tuple[str, str]


def _recorder(into: list[Event]) -> Callable[[str, dict[str, Any], dict[str, Any] | None], None]:
    return lambda event, obj, old: into.append((event, obj["metadata"]["name"]))


async def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    await async_wait_for(check, timeout, interval=0.02)


def _configmap(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": {"k": "v"}}


async def _scenario(server: ServerProcess) -> None:
    kube = AsyncKube(config.from_kubeconfig(server.kubeconfig))
    shared = SharedInformers(kube)
    first: list[Event] = []
    late: list[Event] = []
    for ns in ("inf-a", "inf-b"):
        await kube.create(kinds.NAMESPACE, {"metadata": {"name": ns}})
    await kube.create(kinds.CONFIGMAP, _configmap("before", "inf-a", app="x"))
    informer = shared.subscribe(kinds.CONFIGMAP, _recorder(first))
    assert shared.get(kinds.CONFIGMAP) is informer  # one informer per kind
    runner = asyncio.create_task(shared.run())
    try:
        await asyncio.wait_for(informer.synced.wait(), 10)
        assert ("ADDED", "before") in first

        # a subscriber arriving after the sync is told about what is cached already
        shared.subscribe(kinds.CONFIGMAP, _recorder(late))
        assert ("ADDED", "before") in late

        await kube.create(kinds.CONFIGMAP, _configmap("other-ns", "inf-b", app="x"))
        await kube.create(kinds.CONFIGMAP, _configmap("unlabelled", "inf-a"))
        await _until(lambda: ("ADDED", "unlabelled") in late and ("ADDED", "other-ns") in first)
        assert [o["metadata"]["name"] for o in informer.select("inf-a", {"app": "x"})] == ["before"]
        assert [o["metadata"]["name"] for o in informer.select("inf-b", {"app": "x"})] == ["other-ns"]
        assert len(informer.select("inf-a", {})) == 2

        await kube.delete(kinds.CONFIGMAP, "before", "inf-a")
        await _until(lambda: ("DELETED", "before") in first and ("DELETED", "before") in late)
        assert informer.select("inf-a", {"app": "x"}) == []
        assert ("inf-a", "before") not in informer.cache

        # a kind asked for after run() started is listed and watched too
        secrets = shared.get(kinds.SECRET)
        await asyncio.wait_for(secrets.synced.wait(), 10)
        await kube.create(kinds.SECRET, {"metadata": {"name": "s", "namespace": "inf-b"}})
        await _until(lambda: ("inf-b", "s") in secrets.cache)
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await kube.aclose()


def test_shared_informers_fan_out_index_by_namespace_and_run_late_kinds(apiserver: ServerProcess) -> None:
    asyncio.run(_scenario(apiserver))
