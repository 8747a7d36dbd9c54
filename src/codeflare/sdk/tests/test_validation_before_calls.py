"""A mistake the SDK can see is reported before any request leaves, with the field it is about.

The client points at a real HTTP server that records every request it receives (and would answer
each with a 500); after each refused call the server has received nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from codeflare.api.validation import ManifestError
from codeflare.errors import CodeFlareError
from codeflare.kube.config import from_token
from codeflare.kube.tests.scripted_api import ScriptedAPI, status_answer
from codeflare.sdk import (
    Client,
    Cluster,
    ClusterConfiguration,
    ConfigurationError,
    FlavorQuota,
    RayJob,
    create_cluster_queue,
    create_local_queue,
    create_priority_class,
    create_resource_flavor,
)


@pytest.fixture
def api() -> Iterator[ScriptedAPI]:
    failing = status_answer(500, "InternalError", "this test expects no requests")
    with ScriptedAPI(default=failing).serving() as server:
        yield server


@pytest.fixture
def client(api: ScriptedAPI) -> Iterator[Client]:
    with Client(from_token(api.url, "token", namespace="ns")) as client:
        yield client


def good_config(**kwargs: Any) -> ClusterConfiguration:
    return ClusterConfiguration("demo", namespace="ns", local_queue="lq", **kwargs)


REFUSED: dict[str, tuple[Callable[[Client], object], str]] = {
    "job name": (  # the namespace's default queue is looked up only once the job is known to be valid
        lambda c: RayJob("Bad_Name", "python x.py", cluster_config=ClusterConfiguration("demo"), client=c),
        "job_name"),
    "job with both clusters": (
        lambda c: RayJob("job", "python x.py", cluster_name="c", cluster_config=good_config(), client=c),
        "cluster_name"),
    "queued job on an existing cluster": (
        lambda c: RayJob("job", "python x.py", cluster_name="c", local_queue="lq", client=c), "local_queue"),
    "empty entrypoint": (lambda c: RayJob("job", " ", cluster_name="c", client=c), "entrypoint"),
    "flavor name": (lambda c: create_resource_flavor("GPU Nodes", client=c), "name"),
    "negative quota": (
        lambda c: create_cluster_queue("cq", [FlavorQuota("f", {"cpu": "-1"})], client=c), "cpu"),
    "queueing strategy": (
        lambda c: create_cluster_queue("cq", [FlavorQuota("f", {"cpu": "1"})], queueing_strategy="LIFO",
                                       client=c), "queueing_strategy"),
    "cluster queue reference": (lambda c: create_local_queue("lq", "Not A Queue", "ns", client=c),
                                "cluster_queue"),
    "annotations over the server's 256 KiB": (
        lambda c: Cluster(good_config(annotations={"notes": "x" * 300_000}), c).apply(),
        "metadata.annotations"),
    "priority value": (lambda c: create_priority_class("p", 2**40, client=c), "value"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_before_any_request(api: ScriptedAPI, client: Client, case: str) -> None:
    call, field = REFUSED[case]

    with pytest.raises(ManifestError) as caught:
        call(client)

    assert isinstance(caught.value, CodeFlareError)
    assert any(field in where for where, _ in caught.value.problems), caught.value.problems
    assert api.received == []


def test_a_configuration_changed_after_it_was_checked_is_checked_again_before_apply(
    api: ScriptedAPI, client: Client
) -> None:
    config = good_config()
    cluster = Cluster(config, client)
    config.worker_memory_limits = "1Gi"  # below the 2Gi requested

    with pytest.raises(ConfigurationError) as caught:
        cluster.apply()

    assert [where for where, _ in caught.value.problems] == ["worker_memory_limits"]
    assert api.received == []
