"""Kueue's visibility API served by the operator through the API server's aggregation layer.

A real API server process (with static-token users) and a real operator: the operator registers
``v1beta2``/``v1beta1.visibility.kueue.x-k8s.io`` APIServices pointing at its own HTTPS server,
and kubectl, the official client and a plain HTTP client read pending workloads through the API
server. Positions must be the engine's queue order (priority, then creation), as Kueue's
pkg/visibility/storage tests expect them (pending_workloads_cq_test.go: positions in the
ClusterQueue and per LocalQueue, offset/limit windows). Authorization is checked twice, as on a
real cluster: RBAC at the API server before proxying, and the operator's SubjectAccessReview
(shown by calling the operator directly with the front proxy's certificate). The metrics part
scrapes the operator's ``/metrics`` for Kueue's gauges and checks the reason codes written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import config as k8s_config

from codeflare.k8s.constants import LOOPBACK_PORT_ANNOTATION
from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from codeflare.operator.visibility.controller import SERVICE_NAME
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.control_plane import OPERATOR_NAMESPACE, ThreadedOperator, ensure_namespace
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl
from tests.support.polling import wait_for
from tests.support.queue_objects import cluster_queue, local_queue, workload

pytestmark = NEEDS_KUBECTL

TOKENS = 'bob-token,bob,1002,"team"\neve-token,eve,1003,"others"\n'
NS, GROUP, RBAC = "team", "visibility.kueue.x-k8s.io", "rbac.authorization.k8s.io"
LQ_PATH = f"/apis/{GROUP}/v1beta2/namespaces/{NS}/localqueues/lq-a/pendingworkloads"
CQ_PATH = f"/apis/{GROUP}/v1beta2/clusterqueues/cq/pendingworkloads"
# name, LocalQueue, priority; created in this order (creation time then name breaks priority ties)
PENDING = [("w-low", "lq-a", 0), ("w-high", "lq-a", 10), ("w-mid", "lq-b", 5), ("w-low2", "lq-a", 0)]
# the engine's order: priority first, then creation time (same second here) and key
CQ_ORDER = ["w-high", "w-mid", "w-low", "w-low2"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("visibility"), TOKENS) as proc:
        yield proc


@pytest.fixture(scope="module")
def operator(server: ServerProcess) -> Iterator[ThreadedOperator]:
    config_doc = {"queueing": {"backoffTime": "1s", "capacityCheck": False}, "appwrapper": {"enabled": False}}
    op = ThreadedOperator(server, config_doc).start(60)
    try:
        yield op
    finally:
        op.stop()


@pytest.fixture(scope="module")
def queued(server: ServerProcess, operator: ThreadedOperator) -> Iterator[Kube]:
    """One admitted workload filling ClusterQueue cq, then the PENDING ones behind it."""
    kube = Kube(config.from_kubeconfig(server.kubeconfig))
    ensure_namespace(kube, NS)
    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    kube.create(kinds.CLUSTER_QUEUE, cluster_queue("cq", "1"))
    for lq in ("lq-a", "lq-b"):
        kube.create(kinds.LOCAL_QUEUE, local_queue(lq, NS, "cq"))
    kube.create(kinds.WORKLOAD, workload("w-admitted", NS, "lq-a", "1"))
    wait_for(lambda: (kube.get(kinds.WORKLOAD, "w-admitted", NS).get("status") or {}).get("admission"),
             60, what="the first workload admitted")  # fmt: skip
    for name, lq, priority in PENDING:
        kube.create(kinds.WORKLOAD, workload(name, NS, lq, "1", priority=priority))
    # RBAC for bob: "view" in the namespace (Kueue's lq-viewer role is aggregated into it)
    binding = {"metadata": {"name": "bob-view", "namespace": NS},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "User", "name": "bob", "apiGroup": RBAC}]}  # fmt: skip
    from codeflare.local.mode.operator_identity import _RBAC_KINDS, install_rbac

    install_rbac(kube)  # deploy/'s roles, the visibility viewer roles among them
    kube.create(_RBAC_KINDS["RoleBinding"], binding)
    try:
        yield kube
    finally:
        kube.close()


def names(summary: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in summary["items"]]


def test_discovery_lists_the_group_and_its_resources(
    server: ServerProcess, queued: Kube, tmp_path: Path
) -> None:
    kubectl = Kubectl(server, tmp_path)
    groups = json.loads(kubectl.run("get", "--raw", "/apis").stdout)
    served = {g["name"]: [v["version"] for v in g["versions"]] for g in groups["groups"]}
    assert set(served[GROUP]) == {"v1beta2", "v1beta1"}
    listing = json.loads(kubectl.run("get", "--raw", f"/apis/{GROUP}/v1beta2").stdout)
    resources = {r["name"]: r["verbs"] for r in listing["resources"]}
    assert resources == {"clusterqueues": [], "clusterqueues/pendingworkloads": ["get"],
                         "localqueues": [], "localqueues/pendingworkloads": ["get"]}  # fmt: skip


def test_positions_follow_the_engines_order(server: ServerProcess, queued: Kube, tmp_path: Path) -> None:
    kubectl = Kubectl(server, tmp_path)

    def cluster_queue_summary() -> dict[str, Any] | None:
        found = json.loads(kubectl.run("get", "--raw", CQ_PATH).stdout)
        return found if len(found["items"]) == len(PENDING) else None

    summary = wait_for(cluster_queue_summary, 60, what="every pending workload in the ClusterQueue")
    assert (summary["kind"], summary["apiVersion"]) == ("PendingWorkloadsSummary", f"{GROUP}/v1beta2")
    assert names(summary) == CQ_ORDER
    in_lq: dict[str, int] = {}
    for index, item in enumerate(summary["items"]):
        lq = item["localQueueName"]
        assert item["positionInClusterQueue"] == index
        assert item["positionInLocalQueue"] == in_lq.get(lq, 0)
        in_lq[lq] = in_lq.get(lq, 0) + 1
        assert item["priority"] == dict((n, p) for n, _, p in PENDING)[item["metadata"]["name"]]
        assert item["metadata"]["namespace"] == NS
    local = json.loads(kubectl.run("get", "--raw", LQ_PATH).stdout)
    assert names(local) == ["w-high", "w-low", "w-low2"]
    assert [(i["positionInClusterQueue"], i["positionInLocalQueue"]) for i in local["items"]] == [
        (0, 0), (2, 1), (3, 2)]  # fmt: skip
    # the same through the official client, with Kueue's limit/offset window
    api = k8s_config.new_client_from_config(str(server.kubeconfig))
    try:
        data, status, _ = api.call_api(LQ_PATH, "GET", query_params=[("limit", 1), ("offset", 1)],
                                       auth_settings=["BearerToken"], response_type="object",
                                       _return_http_data_only=False)  # fmt: skip
    except TypeError:  # newer clients: param_serialize + call_api + response_deserialize
        params = api.param_serialize("GET", LQ_PATH, query_params=[("limit", 1), ("offset", 1)],
                                     auth_settings=["BearerToken"])  # fmt: skip
        response = api.call_api(*params)
        response.read()
        data, status = json.loads(response.data), response.status
    finally:
        api.close()
    assert status == 200
    assert [(i["metadata"]["name"], i["positionInLocalQueue"]) for i in data["items"]] == [("w-low", 1)]
    # v1beta1 answers the same shape under its own apiVersion
    old = json.loads(kubectl.run("get", "--raw", LQ_PATH.replace("v1beta2", "v1beta1")).stdout)
    assert old["apiVersion"] == f"{GROUP}/v1beta1" and names(old) == names(local)


def test_unknown_queue_and_bad_options(server: ServerProcess, queued: Kube, tmp_path: Path) -> None:
    kubectl = Kubectl(server, tmp_path)
    missing = kubectl.run("get", "--raw", LQ_PATH.replace("lq-a", "nope"), check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr
    bad = kubectl.run("get", "--raw", LQ_PATH + "?limit=many", check=False)
    assert bad.returncode != 0 and "limit" in bad.stderr


def test_rights_on_the_namespace_decide(server: ServerProcess, queued: Kube, tmp_path: Path) -> None:
    kubectl = Kubectl(server, tmp_path)
    bob = kubectl.run("--token", "bob-token", "get", "--raw", LQ_PATH, check=False)
    assert bob.returncode == 0, bob.stderr
    assert names(json.loads(bob.stdout))[0] == "w-high"
    eve = kubectl.run("--token", "eve-token", "get", "--raw", LQ_PATH, check=False)
    assert eve.returncode != 0 and "forbidden" in eve.stderr.lower()
    cq = kubectl.run("--token", "bob-token", "get", "--raw", CQ_PATH, check=False)
    assert cq.returncode != 0 and "forbidden" in cq.stderr.lower()  # ClusterQueues: admins only


def test_the_operator_authorizes_each_request_itself(server: ServerProcess, queued: Kube) -> None:
    """Past the API server's RBAC, the operator asks its own SubjectAccessReview (a proxy that let
    eve through would still be refused), and refuses callers without the front proxy's certificate."""
    svc = queued.get(kinds.SERVICE, SERVICE_NAME, OPERATOR_NAMESPACE)
    port = svc["metadata"]["annotations"][LOOPBACK_PORT_ANNOTATION]
    url = f"https://127.0.0.1:{port}{LQ_PATH}"
    state = server.state_dir
    cert = (str(state / "front-proxy-client.crt"), str(state / "front-proxy-client.key"))
    with httpx.Client(verify=False, cert=cert) as proxy:
        assert proxy.get(url, headers={"X-Remote-User": "eve", "X-Remote-Group": "others"}).status_code == 403
        allowed = proxy.get(url, headers={"X-Remote-User": "bob", "X-Remote-Group": "team"})
        assert allowed.status_code == 200, allowed.text
    with httpx.Client(verify=False) as stranger:
        answer = stranger.get(url, headers={"X-Remote-User": "bob"})
        assert answer.status_code == 401 and answer.json()["reason"] == "Unauthorized"


def test_reason_codes_and_kueue_gauges(
    server: ServerProcess, operator: ThreadedOperator, queued: Kube
) -> None:
    def reason(name: str) -> tuple[str, str] | None:
        status = queued.get(kinds.WORKLOAD, name, NS).get("status") or {}
        conds = {c["type"]: c for c in status.get("conditions") or []}
        if "QuotaReserved" not in conds or "Admitted" not in conds:
            return None
        return conds["QuotaReserved"]["reason"], conds["Admitted"]["reason"]

    assert wait_for(
        lambda: reason("w-high") == ("WaitingForQuota", "NoReservation"), 60, what="w-high's reason"
    )
    queued.create(kinds.WORKLOAD, workload("w-huge", NS, "lq-a", "2"))  # more than cq could ever hold
    wait_for(lambda: reason("w-huge") == ("ExceedsMaxQuota", "NoReservation"), 60, what="w-huge's reason")
    queued.create(kinds.WORKLOAD, workload("w-lost", NS, "no-such-queue", "1"))
    wait_for(lambda: reason("w-lost") == ("Misconfigured", "NoReservation"), 60, what="w-lost's reason")
    metrics = OperatorMetricsReader(operator.metrics_port)
    role = {"replica_role": "standalone"}

    def gauges_settled() -> bool:
        samples = metrics.scrape() or {}
        cause = {"reason": "NoReservation", **role}
        exceeds = {"cluster_queue": "cq", "underlying_cause": "ExceedsMaxQuota", **cause}
        lost = {"name": "no-such-queue", "namespace": NS, "cluster_queue": "",
                "underlying_cause": "Misconfigured", **cause}  # fmt: skip
        by_cq = samples.get(("kueue_unadmitted_workloads", frozenset(exceeds.items())))
        by_lq = samples.get(("kueue_local_queue_unadmitted_workloads", frozenset(lost.items())))
        return by_cq == 1 and by_lq == 1

    wait_for(gauges_settled, 60, what="the unadmitted gauges")
    assert metrics.value("kueue_admitted_active_workloads", cluster_queue="cq", **role) == 1
    assert metrics.value("kueue_pending_workloads", cluster_queue="cq", status="inadmissible", **role) == len(
        PENDING) + 1  # fmt: skip
