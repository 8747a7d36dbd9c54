"""What the server refuses reaches the user as the SDK's one exception type, in the server's words.

A real API server with a tokens file: ``alice`` is authenticated but bound to no role (every call
is 403); the admin makes the server's WorkloadPriorityClass schema stricter than the SDK's bundled
one (as a newer Kueue on a real cluster can be), so only the server refuses a long description
(422); and objects or namespaces that do not exist are 404.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from codeflare.errors import CodeFlareError
from codeflare.kube import errors, kinds
from codeflare.sdk import (
    Client,
    Cluster,
    RayJob,
    TokenAuthentication,
    create_local_queue,
    create_priority_class,
    get_cluster,
    list_all_clusters,
)
from tests.sdk.conftest import tiny
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.control_plane import install_crds

TOKENS = 'alice-token,alice,1001,"ml"\n'
PRIORITY_CLASSES = "workloadpriorityclasses.kueue.x-k8s.io"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving_with_tokens(tmp_path_factory.mktemp("sdk-errors"), TOKENS) as running:
        yield running


@pytest.fixture(scope="module")
def admin(server: ServerProcess) -> Iterator[Client]:
    with Client.default(server.kubeconfig) as client:
        install_crds(client.kube)
        yield client


@pytest.fixture(scope="module")
def alice(server: ServerProcess, admin: Client) -> Iterator[Client]:
    with TokenAuthentication("alice-token", server.url, ca_cert_path=server.ca_file).login() as client:
        yield client


def test_a_user_without_rights_gets_forbidden_with_the_servers_message(alice: Client) -> None:
    calls = {
        "apply": lambda: Cluster(tiny("mine", queue=None), alice).apply(),
        "list": lambda: list_all_clusters("default", alice),
        "submit": lambda: RayJob("job", "python x.py", cluster_name="shared", client=alice).submit(),
        "queue": lambda: create_local_queue("lq", "cq", "default", client=alice),
    }
    for what, call in calls.items():
        with pytest.raises(errors.Forbidden) as caught:
            call()
        error = caught.value
        assert isinstance(error, CodeFlareError), what
        assert error.status == 403 and 'User "alice" cannot' in error.message, (what, error.message)
        assert error.message in str(error), what


def test_an_object_the_servers_schema_refuses_is_invalid_with_its_causes(admin: Client) -> None:
    def stricter(crd: dict[str, object]) -> dict[str, object]:
        for version in crd["spec"]["versions"]:  # type: ignore[index]
            version["schema"]["openAPIV3Schema"]["properties"]["description"]["maxLength"] = 16
        return crd

    admin.kube.update(kinds.CRD, PRIORITY_CLASSES, None, stricter)

    with pytest.raises(errors.Invalid) as caught:
        create_priority_class("chatty", 10, "far longer than sixteen characters", client=admin)

    error = caught.value
    assert isinstance(error, CodeFlareError) and error.status == 422
    assert "may not be longer than 16" in error.message
    assert [cause.get("field") for cause in error.causes] == ["description"]
    assert admin.kube.find(kinds.WORKLOAD_PRIORITY_CLASS, "chatty") is None


def test_what_does_not_exist_is_not_found_with_the_servers_message(admin: Client) -> None:
    with pytest.raises(errors.NotFound, match=re.escape('rayclusters.ray.io "missing" not found')):
        get_cluster("missing", "default", admin)
    with pytest.raises(errors.NotFound, match=re.escape('rayjobs.ray.io "missing" not found')):
        RayJob("missing", "python x.py", cluster_name="c", client=admin).status()
    with pytest.raises(errors.NotFound, match='namespaces "nowhere" not found'):
        config = tiny("lost", queue=None)
        config.namespace = "nowhere"
        Cluster(config, admin).apply()
    with pytest.raises(CodeFlareError, match='RayCluster "missing" not found'):
        Cluster(tiny("missing", queue=None), admin).details()
