"""``webhook.service``: the API server reaches the operator through a Service, as on a real cluster.

A real embedded API server and a real operator configured as deploy/ configures it (webhook
section from ``WebhookConfig.in_cluster``), with deploy/'s Service ``codeflare-operator-webhook``
and an Endpoints object listing 127.0.0.1 (what a cluster's endpoints controller would write for
the pod). The embedded API server resolves a ``service`` clientConfig through those Endpoints and
checks the serving certificate for ``<name>.<namespace>.svc``, so each call below only succeeds if
the registration names the Service, the Service's ports target the right named ports, and the
certificate carries the Service's name: admission (a RayCluster is mutated), CRD conversion (a
ClusterQueue read as v1beta1) and both aggregated APIs (discovery through the aggregation layer).

We differ from a cluster in the ports only: the servers listen on free loopback ports chosen here
(the machine is shared), and the Service's visibility/forecast ports are rewritten to match.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.kube.kinds import Kind
from codeflare.operator.webhooks.server import CONFIGURATION_NAME, MUTATING, VALIDATING
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import OPERATOR_NAMESPACE, ThreadedOperator, ensure_namespace, wait_for
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl

pytestmark = NEEDS_KUBECTL

REPO = Path(__file__).resolve().parents[2]
SERVICE = yaml.safe_load((REPO / "deploy" / "operator" / "webhook_service.yaml").read_text())
NAME = SERVICE["metadata"]["name"]
CLUSTER_QUEUE_V1BETA1 = Kind("kueue.x-k8s.io", "v1beta1", "ClusterQueue", "clusterqueues", False)
Obj = dict[str, Any]


def service_and_endpoints(ports: dict[str, int]) -> tuple[Obj, Obj]:
    """deploy/'s Service (aggregated-API ports set to ``ports``) and its Endpoints on 127.0.0.1."""
    service = copy.deepcopy(SERVICE)
    for entry in service["spec"]["ports"]:
        if entry["name"] != "webhook":
            entry["port"] = ports[entry["targetPort"]]
    endpoints = {
        "metadata": {"name": NAME, "namespace": OPERATOR_NAMESPACE},
        "subsets": [
            {
                "addresses": [{"ip": "127.0.0.1"}],
                "ports": [{"name": name, "port": port, "protocol": "TCP"} for name, port in ports.items()],
            }
        ],
    }
    return service, endpoints


@pytest.fixture(scope="module")
def operator(apiserver: ServerProcess) -> Iterator[ThreadedOperator]:
    ports = {"webhook": free_port(), "visibility": free_port(), "forecast": free_port()}
    service, endpoints = service_and_endpoints(ports)
    webhook = {
        "bindAddress": f"127.0.0.1:{ports['webhook']}",
        "failurePolicy": "Fail",
        "service": {"name": NAME, "namespace": OPERATOR_NAMESPACE, "port": 443,
                    "visibilityPort": ports["visibility"], "forecastPort": ports["forecast"]},
    }  # fmt: skip
    running = ThreadedOperator(
        apiserver,
        {"queueing": {"capacityCheck": False}, "appwrapper": {"enabled": False}, "webhook": webhook},
    )
    with Kube(running.connection) as kube:
        ensure_namespace(kube, OPERATOR_NAMESPACE)
        kube.create(kinds.SERVICE, service)
        kube.create(Kind("", "v1", "Endpoints", "endpoints", True), endpoints)
    running.start(60)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def kube(operator: ThreadedOperator) -> Iterator[Kube]:
    with Kube(operator.connection) as client:
        yield client


def test_registrations_name_the_service_not_a_url(kube: Kube) -> None:
    for kind in (MUTATING, VALIDATING):
        for hook in kube.get(kind, CONFIGURATION_NAME)["webhooks"]:
            config = hook["clientConfig"]
            assert "url" not in config and config["caBundle"]
            assert (config["service"]["name"], config["service"]["port"]) == (NAME, 443)
    crd = kube.get(kinds.CRD, "clusterqueues.kueue.x-k8s.io")
    config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
    assert "url" not in config and config["caBundle"]
    assert config["service"] == {
        "namespace": OPERATOR_NAMESPACE,
        "name": NAME,
        "port": 443,
        "path": "/convert",
    }
    # no loopback Services of local mode: the one Service is deploy/'s
    listed = kube.list(kinds.SERVICE, OPERATOR_NAMESPACE)
    assert [s["metadata"]["name"] for s in listed] == [NAME]


def raycluster(name: str, enable_ingress: bool) -> Obj:
    head = {
        "enableIngress": enable_ingress,
        "rayStartParams": {},
        "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.9"}]}},
    }
    meta = {"name": name, "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "q"}}
    return {"metadata": meta, "spec": {"headGroupSpec": head}}  # fmt: skip


def test_admission_reaches_the_operator_through_the_service(kube: Kube) -> None:
    """failurePolicy Fail: a webhook the API server could not reach would refuse, not skip."""
    ensure_namespace(kube, "team")
    with pytest.raises(errors.KubeError, match="enableIngress: must not be true"):
        kube.create(kinds.RAYCLUSTER, raycluster("refused", enable_ingress=True))
    created = kube.create(kinds.RAYCLUSTER, raycluster("rc", enable_ingress=False))
    assert created["spec"]["suspend"] is True  # the mutating webhook ran


def test_conversion_reaches_the_operator_through_the_service(kube: Kube) -> None:
    body = {"metadata": {"name": "cq-svc"}, "spec": {"namespaceSelector": {}, "resourceGroups": []}}
    kube.create(kinds.CLUSTER_QUEUE, body)
    read = kube.get(CLUSTER_QUEUE_V1BETA1, "cq-svc")
    assert read["apiVersion"] == "kueue.x-k8s.io/v1beta1"


def test_aggregated_apis_reach_the_operator_through_the_service(
    apiserver: ServerProcess, kube: Kube, tmp_path: Path
) -> None:
    kubectl = Kubectl(apiserver, tmp_path)
    for path in ("/apis/visibility.kueue.x-k8s.io/v1beta2", "/apis/forecast.codeflare.dev/v1alpha1"):

        def served(path: str = path) -> Any:
            answer = kubectl.run("get", "--raw", path, check=False)
            return answer.returncode == 0 and json.loads(answer.stdout)

        listing = wait_for(served, 60, what=f"{path} through the aggregation layer")
        assert listing["kind"] == "APIResourceList" and listing["resources"]
