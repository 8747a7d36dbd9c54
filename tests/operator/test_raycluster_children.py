"""RayCluster children against a real API server and operator: Ingress or Route, NetworkPolicies,
the CA Secret, the OAuth proxy's objects, and their cleanup when the cluster is deleted.

Plain Kubernetes (with ``ingressDomain``) uses the module's server; OpenShift is imitated on a
server of its own by serving ``route.openshift.io`` Routes through a CRD.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.api.mtls import ca_secret_name, client_certificate
from codeflare.k8s.constants import RAYCLUSTER_FINALIZER
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.operator.raycluster.controller import CLUSTER_ROLE_BINDING
from codeflare.sdk.client import Client
from codeflare.sdk.cluster import dashboard_uri
from codeflare.sdk.tls import generate_cert, tls_env
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for

Obj = dict[str, Any]
QUIET = {"queueing": {"enabled": False}, "appwrapper": {"enabled": False}}
ROUTE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "routes.route.openshift.io"},
    "spec": {
        "group": "route.openshift.io",
        "scope": "Namespaced",
        "names": {"plural": "routes", "singular": "route", "kind": "Route", "listKind": "RouteList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def raycluster(name: str, namespace: str) -> Obj:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "suspend": True,
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.9"}]}},
            },
        },
    }


def gone(kube: Kube, kind: Any, name: str, namespace: str | None) -> bool:
    return kube.find(kind, name, namespace) is None


@pytest.fixture(scope="module")
def kube(apiserver: ServerProcess) -> Iterator[Kube]:
    running = ThreadedOperator(apiserver, {**QUIET, "kuberay": {"ingressDomain": "apps.example.com"}}).start()
    try:
        with Kube(running.connection) as client:
            yield client
    finally:
        running.stop()


def test_kubernetes_children_and_their_cleanup(kube: Kube, tmp_path: Any) -> None:
    ns = f"rc-{uuid.uuid4().hex[:6]}"
    ensure_namespace(kube, ns)
    rc = kube.create(kinds.RAYCLUSTER, raycluster("demo", ns))
    owner = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "name": "demo",
        "uid": rc["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }

    ingress = wait_for(lambda: kube.find(kinds.INGRESS, "ray-dashboard-demo", ns), what="dashboard Ingress")
    assert ingress["spec"]["rules"] == [
        {
            "host": f"demo-{ns}.apps.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": "demo-head-svc", "port": {"number": 8265}}},
                    }
                ]
            },
        }
    ]
    assert ingress["metadata"]["ownerReferences"] == [owner]
    assert any(
        m["manager"] == "codeflare-raycluster-controller" and m["operation"] == "Apply"
        for m in ingress["metadata"]["managedFields"]
    )

    workers = wait_for(lambda: kube.find(kinds.NETWORK_POLICY, "demo-workers", ns), what="workers policy")
    assert workers["spec"] == {
        "podSelector": {"matchLabels": {"ray.io/cluster": "demo", "ray.io/node-type": "worker"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"ray.io/cluster": "demo"}}}]}],
    }
    head = kube.get(kinds.NETWORK_POLICY, "demo-head", ns)
    assert head["spec"]["podSelector"] == {
        "matchLabels": {"ray.io/cluster": "demo", "ray.io/node-type": "head"}
    }
    own, public, metrics = head["spec"]["ingress"]
    assert own == {"from": [{"podSelector": {"matchLabels": {"ray.io/cluster": "demo"}}}]}
    assert public == {"ports": [{"protocol": "TCP", "port": 8265}, {"protocol": "TCP", "port": 10001}]}
    assert metrics["ports"] == [{"protocol": "TCP", "port": 8080}]
    assert metrics["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == [
        "openshift-monitoring",
        "prometheus",
        "monitoring",
    ]
    assert head["metadata"]["ownerReferences"] == [owner]

    secret = wait_for(lambda: kube.find(kinds.SECRET, ca_secret_name("demo"), ns), what="CA Secret")
    assert secret["metadata"]["ownerReferences"] == [owner]
    assert set(secret["data"]) == {"ca.crt", "ca.key"}
    finalizers = kube.get(kinds.RAYCLUSTER, "demo", ns)["metadata"].get("finalizers") or []
    assert RAYCLUSTER_FINALIZER not in finalizers

    # The SDK finds the dashboard through the Ingress and mints a client certificate from the CA.
    client = Client(kube.connection)
    assert (
        dashboard_uri(client, kube.get(kinds.RAYCLUSTER, "demo", ns)) == f"http://demo-{ns}.apps.example.com"
    )
    directory = generate_cert("demo", ns, tmp_path / "tls", client=client)
    assert (directory / "ca.crt").read_bytes() in client_certificate(secret).ca_pem
    assert tls_env(directory)["RAY_TLS_SERVER_KEY"] == str(directory / "tls.key")
    client.close()

    # A change to the cluster does not replace the CA (clients hold certificates from it).
    kube.patch(kinds.RAYCLUSTER, "demo", {"spec": {"suspend": False}}, ns)
    assert kube.get(kinds.SECRET, ca_secret_name("demo"), ns)["data"] == secret["data"]

    kube.delete(kinds.RAYCLUSTER, "demo", ns)
    for kind, name in (
        (kinds.INGRESS, "ray-dashboard-demo"),
        (kinds.NETWORK_POLICY, "demo-workers"),
        (kinds.NETWORK_POLICY, "demo-head"),
        (kinds.SECRET, ca_secret_name("demo")),
    ):
        wait_for(lambda k=kind, n=name: gone(kube, k, n, ns), what=f"{kind.kind} {name} collected")


def test_no_ingress_without_an_ingress_domain_and_no_ca_without_mtls(fresh_apiserver: ServerProcess) -> None:
    running = ThreadedOperator(fresh_apiserver, {**QUIET, "kuberay": {"mTLSEnabled": False}}).start()
    try:
        with Kube(running.connection) as kube:
            ensure_namespace(kube, "team")
            kube.create(kinds.RAYCLUSTER, raycluster("plain", "team"))
            wait_for(lambda: kube.find(kinds.NETWORK_POLICY, "plain-head", "team"), what="head policy")
            assert kube.list(kinds.INGRESS, "team") == []
            assert kube.find(kinds.SECRET, ca_secret_name("plain"), "team") is None
    finally:
        running.stop()


def test_openshift_route_oauth_objects_and_finalizer(fresh_apiserver: ServerProcess) -> None:
    with Kube(ThreadedOperator(fresh_apiserver, QUIET).connection) as setup:
        setup.create(kinds.CRD, ROUTE_CRD)
        wait_for(lambda: setup.list(kinds.ROUTE, "default") == [], what="Routes served")
    running = ThreadedOperator(fresh_apiserver, QUIET).start()
    try:
        with Kube(running.connection) as kube:
            ensure_namespace(kube, "team")
            kube.create(kinds.RAYCLUSTER, raycluster("shift", "team"))
            binding = wait_for(
                lambda: kube.find(CLUSTER_ROLE_BINDING, "shift-team-auth-delegator"),
                what="ClusterRoleBinding",
            )
            route = wait_for(lambda: kube.find(kinds.ROUTE, "ray-dashboard-shift", "team"), what="Route")
            assert route["spec"]["to"] == {"kind": "Service", "name": "shift-oauth"}
            assert route["spec"]["tls"]["termination"] == "reencrypt"
            assert kube.list(kinds.INGRESS, "team") == []
            assert kube.get(kinds.SERVICE, "shift-oauth", "team")["spec"]["ports"][0]["port"] == 8443
            assert kube.get(kinds.SERVICE_ACCOUNT, "shift-oauth-proxy", "team")
            assert kube.get(kinds.SECRET, "shift-oauth-config", "team")["data"]["cookie_secret"]
            head = kube.get(kinds.NETWORK_POLICY, "shift-head", "team")
            assert {"protocol": "TCP", "port": 8443} in head["spec"]["ingress"][1]["ports"]
            assert binding["subjects"] == [
                {"kind": "ServiceAccount", "name": "shift-oauth-proxy", "namespace": "team"}
            ]
            finalizers = kube.get(kinds.RAYCLUSTER, "shift", "team")["metadata"]["finalizers"]
            assert RAYCLUSTER_FINALIZER in finalizers

            kube.delete(kinds.RAYCLUSTER, "shift", "team")
            wait_for(lambda: gone(kube, kinds.RAYCLUSTER, "shift", "team"), what="RayCluster released")
            assert gone(kube, CLUSTER_ROLE_BINDING, "shift-team-auth-delegator", None)
            wait_for(lambda: gone(kube, kinds.ROUTE, "ray-dashboard-shift", "team"), what="Route collected")
    finally:
        running.stop()
