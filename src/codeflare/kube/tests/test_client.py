"""What callers of the client rely on: each failure's error type, conflict handling, the sync facade.

Every test talks over real HTTP to :class:`ScriptedAPI`, which answers with the status, reason
and body the test scripts and records what the client sent. Error types are checked with
retries off (``NO_RETRIES``): which of them are resent is ``test_retries.py``'s subject.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube, Kube
from codeflare.kube.config import Connection, from_token
from codeflare.kube.retry import NO_RETRIES
from codeflare.kube.tests.scripted_api import Answer, ScriptedAPI, status_answer, watch_answer

CM_PATH = "/api/v1/namespaces/ns/configmaps/cm"


def configmap(rv: str = "1", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns", "resourceVersion": rv},
        "data": dict(data),
    }


def configmap_list(*items: dict[str, Any]) -> Answer:
    return Answer(200, {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "7"},
                        "items": list(items)})


@pytest.fixture
def api() -> Iterator[ScriptedAPI]:
    with ScriptedAPI(default=Answer(200, configmap())).serving() as server:
        yield server


@pytest.fixture
def connection(api: ScriptedAPI) -> Connection:
    return from_token(api.url, "token", namespace="ns")


@pytest.fixture
async def kube(connection: Connection) -> Any:
    client = AsyncKube(connection, retry=NO_RETRIES)
    yield client
    await client.aclose()


@pytest.fixture
def sync_kube(connection: Connection) -> Iterator[Kube]:
    with Kube(connection, retry=NO_RETRIES) as client:
        yield client


# -- each failure becomes its error type, with the server's words ----------------------------------

MAPPING = [
    (400, "BadRequest", errors.BadRequest),
    (401, "Unauthorized", errors.Unauthorized),
    (403, "Forbidden", errors.Forbidden),
    (404, "NotFound", errors.NotFound),
    (409, "Conflict", errors.Conflict),
    (409, "AlreadyExists", errors.AlreadyExists),
    (410, "Expired", errors.Gone),
    (422, "Invalid", errors.Invalid),
    (429, "TooManyRequests", errors.TooManyRequests),
    (500, "InternalError", errors.ServerError),
    (503, "ServiceUnavailable", errors.ServerError),
    (418, "", errors.KubeError),
]


@pytest.mark.parametrize(("code", "reason", "expected"), MAPPING)
async def test_each_failure_becomes_its_type_with_the_servers_message(
    api: ScriptedAPI, kube: AsyncKube, code: int, reason: str, expected: type[errors.KubeError]
) -> None:
    api.script("GET", status_answer(code, reason, f"the server says {code}"))

    with pytest.raises(errors.KubeError) as caught:
        await kube.get(kinds.CONFIGMAP, "cm")

    error = caught.value
    assert type(error) is expected
    assert (error.status, error.reason, error.message) == (code, reason, f"the server says {code}")
    assert (error.kind, error.namespace, error.name) == ("ConfigMap", "ns", "cm")
    assert str(error) == f"ConfigMap ns/cm: the server says {code}"
    assert api.methods() == ["GET"]


async def test_a_create_of_an_existing_name_is_already_exists_a_stale_replace_is_a_conflict(
    api: ScriptedAPI, kube: AsyncKube
) -> None:
    api.script("POST", status_answer(409, "AlreadyExists", 'configmaps "cm" already exists'))
    api.script("PUT", status_answer(409, "Conflict", "the object has been modified"))

    with pytest.raises(errors.AlreadyExists, match="already exists"):
        await kube.create(kinds.CONFIGMAP, configmap())
    with pytest.raises(errors.Conflict, match="has been modified"):
        await kube.replace(kinds.CONFIGMAP, configmap())


async def test_an_invalid_object_keeps_the_fields_the_server_names(api: ScriptedAPI, kube: AsyncKube) -> None:
    causes = [{"reason": "FieldValueInvalid", "message": "must be no more than 63 characters",
               "field": "metadata.labels"}]
    api.script("POST", status_answer(422, "Invalid", "ConfigMap \"cm\" is invalid", name="cm", causes=causes))

    with pytest.raises(errors.Invalid) as caught:
        await kube.create(kinds.CONFIGMAP, configmap())

    assert caught.value.causes == causes
    assert caught.value.message == 'ConfigMap "cm" is invalid'


async def test_throttling_carries_the_servers_retry_after(api: ScriptedAPI, kube: AsyncKube) -> None:
    api.script("GET", status_answer(429, "TooManyRequests", "slow down", retryAfterSeconds=4))

    with pytest.raises(errors.TooManyRequests) as caught:
        await kube.get(kinds.CONFIGMAP, "cm")

    assert caught.value.retry_after == 4


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Answer(403, {"kind": "Status", "message": "no code in the body"}), "no code in the body"),
        (Answer(403, "denied by the proxy\n", "text/plain"), "denied by the proxy"),
        (Answer(403, {"kind": "Status", "code": 403, "message": "with a charset"},
                "application/json; charset=utf-8"), "with a charset"),
    ],
)
async def test_the_http_code_decides_when_the_body_is_not_a_plain_status(
    api: ScriptedAPI, kube: AsyncKube, answer: Answer, message: str
) -> None:
    # a proxy in front of the server, or a server that adds a charset: still Forbidden, not Unreachable
    api.script("GET", answer)

    with pytest.raises(errors.Forbidden) as caught:
        await kube.get(kinds.CONFIGMAP, "cm")

    assert caught.value.status == 403 and caught.value.message == message and not caught.value.temporary


async def test_an_error_event_ends_a_watch_with_its_type(api: ScriptedAPI, kube: AsyncKube) -> None:
    expired = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired",
               "message": "too old resource version: 5 (9)"}
    api.script("GET", watch_answer(("ADDED", configmap("6")), ("ERROR", expired)),
               path="/api/v1/namespaces/ns/configmaps")

    seen: list[str] = []
    with pytest.raises(errors.Gone, match="too old resource version"):
        async for event_type, obj in kube.watch(kinds.CONFIGMAP, "ns", resource_version="5"):
            seen.append(f"{event_type} {obj['metadata']['resourceVersion']}")

    assert seen == ["ADDED 6"]
    assert api.sent("GET")[0].query["resourceVersion"] == "5"


async def test_a_discovery_failure_is_typed_with_the_servers_message(
    api: ScriptedAPI, kube: AsyncKube
) -> None:
    api.script("GET", status_answer(404, "NotFound", "the server could not find the requested resource"))

    with pytest.raises(errors.NotFound) as caught:
        await kube.api_resources("example.com/v1")

    assert caught.value.message == "the server could not find the requested resource"
    assert api.sent()[0].path == "/apis/example.com/v1"


async def test_find_and_delete_treat_a_missing_object_as_none(api: ScriptedAPI, kube: AsyncKube) -> None:
    api.script("GET", status_answer(404, "NotFound"))
    api.script("DELETE", status_answer(404, "NotFound"))

    assert await kube.find(kinds.CONFIGMAP, "cm") is None
    await kube.delete(kinds.CONFIGMAP, "cm")  # missing_ok by default
    with pytest.raises(errors.NotFound):
        await kube.delete(kinds.CONFIGMAP, "cm", missing_ok=False)


# -- conflicts: update() reads again and redoes the change --------------------------------------


def add_owner_label(obj: dict[str, Any]) -> dict[str, Any]:
    obj["data"]["owner"] = "me"
    return obj


async def test_update_redoes_the_change_on_a_fresh_read_after_a_conflict(
    api: ScriptedAPI, kube: AsyncKube
) -> None:
    api.script("GET", Answer(200, configmap("1", a="old")), Answer(200, configmap("2", a="new")))
    api.script("PUT", status_answer(409, "Conflict", "the object has been modified"),
               Answer(200, configmap("3", a="new", owner="me")))

    result = await kube.update(kinds.CONFIGMAP, "cm", "ns", add_owner_label)

    assert api.methods() == ["GET", "PUT", "GET", "PUT"]
    first, second = (r.body for r in api.sent("PUT"))
    assert first["metadata"]["resourceVersion"] == "1" and first["data"] == {"a": "old", "owner": "me"}
    assert second["metadata"]["resourceVersion"] == "2" and second["data"] == {"a": "new", "owner": "me"}
    assert result is not None and result["metadata"]["resourceVersion"] == "3"


async def test_update_gives_up_after_its_attempts_naming_the_object(
    api: ScriptedAPI, kube: AsyncKube
) -> None:
    api.script("PUT", status_answer(409, "Conflict", "the object has been modified"))

    with pytest.raises(errors.Conflict) as caught:
        await kube.update(kinds.CONFIGMAP, "cm", "ns", add_owner_label, attempts=3)

    assert api.methods() == ["GET", "PUT"] * 3
    assert (caught.value.kind, caught.value.namespace, caught.value.name) == ("ConfigMap", "ns", "cm")
    assert "3 conflicting updates" in str(caught.value)


async def test_update_writes_nothing_when_the_change_declines_or_the_object_is_gone(
    api: ScriptedAPI, kube: AsyncKube
) -> None:
    current = await kube.update(kinds.CONFIGMAP, "cm", "ns", lambda obj: None)
    assert current is not None and current["metadata"]["resourceVersion"] == "1"

    api.script("GET", status_answer(404, "NotFound"))
    assert await kube.update(kinds.CONFIGMAP, "cm", "ns", add_owner_label) is None

    assert api.methods() == ["GET", "GET"]


async def test_update_raises_other_errors_at_once(api: ScriptedAPI, kube: AsyncKube) -> None:
    api.script("PUT", status_answer(422, "Invalid", "data: Invalid value"))

    with pytest.raises(errors.Invalid, match="Invalid value"):
        await kube.update(kinds.CONFIGMAP, "cm", "ns", add_owner_label)

    assert api.methods() == ["GET", "PUT"]


async def test_a_status_update_writes_the_status_subresource(api: ScriptedAPI, kube: AsyncKube) -> None:
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
               "metadata": {"name": "rc", "namespace": "ns", "resourceVersion": "1"}, "status": {}}
    api.script("GET", Answer(200, cluster))
    api.script("PUT", Answer(200, cluster))

    def ready(obj: dict[str, Any]) -> dict[str, Any]:
        obj["status"]["state"] = "ready"
        return obj

    await kube.update(kinds.RAYCLUSTER, "rc", "ns", ready, status=True)

    write = api.sent("PUT")[0]
    assert write.path == "/apis/ray.io/v1/namespaces/ns/rayclusters/rc/status"
    assert write.body["status"] == {"state": "ready"}


# -- the sync facade: the same calls, the same requests, the same errors ---------------------------

RAYCLUSTER = {"metadata": {"name": "rc", "namespace": "ns"}, "status": {"state": "ready"}}

CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("api_groups", (), {}),
    ("api_resources", ("v1",), {}),
    ("get_raw", ("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads?limit=5",), {}),
    ("get", (kinds.CONFIGMAP, "cm"), {}),
    ("find", (kinds.CONFIGMAP, "cm", "other"), {}),
    ("list", (kinds.CONFIGMAP,), {"labels": {"app": "x"}, "fields": {"metadata.name": "cm"}}),
    ("list", (kinds.CONFIGMAP,), {"all_namespaces": True}),
    ("list_with_version", (kinds.CONFIGMAP, "ns"), {}),
    ("create", (kinds.CONFIGMAP, configmap()), {}),
    ("replace", (kinds.CONFIGMAP, configmap()), {}),
    ("replace_status", (kinds.RAYCLUSTER, RAYCLUSTER), {}),
    ("patch", (kinds.CONFIGMAP, "cm", {"data": {"a": "1"}}), {}),
    ("patch", (kinds.CONFIGMAP, "cm", [{"op": "add", "path": "/data/a", "value": "1"}]),
     {"patch_type": "json"}),
    ("patch", (kinds.RAYCLUSTER, "rc", {"status": {"state": "ready"}}), {"status": True}),
    ("apply", (kinds.CONFIGMAP, configmap()), {"force": False, "field_manager": "someone"}),
    ("delete", (kinds.CONFIGMAP, "cm"), {"propagation": "Foreground"}),
    ("update", (kinds.CONFIGMAP, "cm", "ns", add_owner_label), {}),
]


def request_methods(cls: type) -> dict[str, inspect.Signature]:
    """The public request methods of ``cls`` and their signatures (``self`` left out)."""
    found = {}
    for name, member in inspect.getmembers(cls, callable):
        if name.startswith("_") or name in ("close", "aclose", "with_rate_limit"):  # not requests
            continue
        signature = inspect.signature(member)
        found[name] = signature.replace(parameters=list(signature.parameters.values())[1:])
    return found


def script_lists(api: ScriptedAPI) -> None:
    for path in ("/api/v1/namespaces/ns/configmaps", "/api/v1/configmaps"):
        api.script("GET", configmap_list(configmap()), path=path)


def test_every_request_method_but_watch_is_on_the_facade_with_the_same_parameters() -> None:
    asynchronous = request_methods(AsyncKube)
    del asynchronous["watch"]  # a stream, not one call: used by the asyncio informers only

    assert request_methods(Kube) == asynchronous
    assert {name for name, _, _ in CALLS} == set(asynchronous)


async def test_the_facade_sends_the_requests_the_async_client_sends(
    api: ScriptedAPI, kube: AsyncKube, connection: Connection
) -> None:
    script_lists(api)
    expected = [await getattr(kube, name)(*args, **kwargs) for name, args, kwargs in CALLS]
    sent_by_async = list(api.received)
    api.received.clear()

    def run_sync() -> list[Any]:
        with Kube(connection, retry=NO_RETRIES) as client:
            return [getattr(client, name)(*args, **kwargs) for name, args, kwargs in CALLS]

    results = await asyncio.to_thread(run_sync)  # a plain thread: no loop of its own

    assert api.received == sent_by_async
    assert results == expected


def test_the_facade_raises_the_errors_unchanged(api: ScriptedAPI, sync_kube: Kube) -> None:
    api.script("GET", status_answer(403, "Forbidden", 'configmaps "cm" is forbidden: User "u" cannot get'))

    with pytest.raises(errors.Forbidden) as caught:
        sync_kube.get(kinds.CONFIGMAP, "cm")

    error = caught.value
    assert (error.status, error.reason, error.kind, error.namespace, error.name) == (
        403, "Forbidden", "ConfigMap", "ns", "cm")
    assert error.message == 'configmaps "cm" is forbidden: User "u" cannot get'


def test_one_facade_serves_many_threads_at_once(api: ScriptedAPI, sync_kube: Kube) -> None:
    results: list[str] = []
    failures: list[BaseException] = []

    def read() -> None:
        try:
            results.append(sync_kube.get(kinds.CONFIGMAP, "cm")["metadata"]["name"])
        except BaseException as exc:  # reported below, with the thread's error
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert not failures and results == ["cm"] * 8
    assert api.methods() == ["GET"] * 8


def test_the_facade_works_inside_a_running_event_loop(sync_kube: Kube) -> None:
    # as in a notebook: the caller's thread runs a loop, the call must not try to run another on it
    async def notebook_cell() -> str:
        return str(sync_kube.get(kinds.CONFIGMAP, "cm")["metadata"]["name"])

    assert asyncio.run(notebook_cell()) == "cm"


def test_close_is_idempotent(connection: Connection) -> None:
    client = Kube(connection)
    client.close()
    client.close()
    assert not client._thread.is_alive()
