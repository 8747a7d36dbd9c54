"""The official kubernetes client against a real server process: the basics work."""

from __future__ import annotations

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.support.apiserver import ServerProcess


@pytest.fixture
def core(apiserver: ServerProcess) -> client.CoreV1Api:
    api_client = config.new_client_from_config(str(apiserver.kubeconfig))
    return client.CoreV1Api(api_client)


def test_configmap_round_trip(core: client.CoreV1Api) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="smoke", labels={"a": "b"}), data={"k": "v"})
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.uid
    got = core.read_namespaced_config_map("smoke", "default")
    assert got.data == {"k": "v"}
    listed = core.list_namespaced_config_map("default", label_selector="a=b")
    assert [c.metadata.name for c in listed.items] == ["smoke"]
    core.delete_namespaced_config_map("smoke", "default")
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_config_map("smoke", "default")
    assert exc.value.status == 404


def test_default_namespaces_exist(core: client.CoreV1Api) -> None:
    names = {ns.metadata.name for ns in core.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
