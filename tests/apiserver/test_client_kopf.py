"""A small kopf operator, run with ``kopf run --standalone``, against a real server process.

The operator (written to a file by the test) handles create, update and delete of a custom
resource from a CRD the test registers, writes handler results and its own fields into the
status subresource, runs a timer that counts ticks in the status, and records every handler
call in a log file. kopf's finalizer, its annotations, its status patches and its Events all
go through the server, so this proves the watch/patch/finalizer machinery kopf relies on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.support.apiserver import ServerProcess
from tests.support.child_process import terminate
from tests.support.polling import wait_for

NS = "kopf-test"
GROUP, VERSION, PLURAL = "test.codeflare.dev", "v1", "widgets"
T = TypeVar("T")

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}

OPERATOR = '''
"""Test operator: logs handler calls to $WIDGET_LOG and writes status."""
import os
import pathlib

import kopf

LOG = pathlib.Path(os.environ["WIDGET_LOG"])


def record(line):
    with LOG.open("a") as f:
        f.write(line + "\\n")


@kopf.on.startup()
def configure(settings, **_):
    settings.watching.server_timeout = 30


@kopf.on.create("test.codeflare.dev", "v1", "widgets")
def created(name, spec, patch, body, **_):
    record(f"create {name} {spec.get('size')}")
    kopf.info(body, reason="Created", message=f"widget {name} of size {spec.get('size')}")
    patch.status["observedSize"] = spec.get("size")
    return {"message": f"created {name}"}


@kopf.on.update("test.codeflare.dev", "v1", "widgets", field="spec.size")
def resized(name, old, new, patch, **_):
    record(f"update {name} {old}->{new}")
    patch.status["observedSize"] = new


@kopf.on.delete("test.codeflare.dev", "v1", "widgets")
def deleted(name, **_):
    record(f"delete {name}")


@kopf.timer("test.codeflare.dev", "v1", "widgets", interval=0.3)
def tick(name, status, patch, **_):
    patch.status["ticks"] = int(status.get("ticks") or 0) + 1
'''


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 20.0) -> T:
    """:func:`wait_for` with the description second, as these tests read best."""
    return wait_for(probe, timeout, what=what)  # type: ignore[arg-type]


class Operator:
    """The kopf subprocess and the file its handlers log to."""

    def __init__(self, server: ServerProcess, workdir: Path) -> None:
        self.log = workdir / "handlers.log"
        self.log.touch()
        self.output = workdir / "kopf.out"
        script = workdir / "widget_operator.py"
        script.write_text(OPERATOR)
        env = {**os.environ, "KUBECONFIG": str(server.kubeconfig), "WIDGET_LOG": str(self.log)}
        with self.output.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kopf",
                    "run",
                    "--standalone",
                    "--namespace",
                    NS,
                    "--verbose",
                    str(script),
                ],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines()

    def stop(self) -> None:
        terminate(self.proc, 10)

    def diagnostics(self) -> str:
        return self.output.read_text(errors="replace")[-4000:]


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(str(apiserver.kubeconfig))
    client.ApiextensionsV1Api(api_client).create_custom_resource_definition(CRD)
    client.CoreV1Api(api_client).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def operator(
    apiserver: ServerProcess, api: client.ApiClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    op = Operator(apiserver, tmp_path_factory.mktemp("kopf"))
    try:
        yield op
    finally:
        op.stop()


def widget(name: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size},
    }


def test_kopf_handles_create_update_delete_status_and_timer(
    api: client.ApiClient, operator: Operator
) -> None:
    custom = client.CustomObjectsApi(api)
    core = client.CoreV1Api(api)
    args = (GROUP, VERSION, NS, PLURAL)

    def get() -> dict[str, Any]:
        return custom.get_namespaced_custom_object(*args, "w1")  # type: ignore[no-any-return]

    try:
        custom.create_namespaced_custom_object(*args, widget("w1", 1))
        eventually(lambda: "create w1 1" in operator.calls(), "the create handler")
        status = eventually(
            lambda: get().get("status", {}).get("observedSize") == 1 and get()["status"], "status"
        )
        eventually(lambda: get()["status"].get("created") == {"message": "created w1"}, "the handler result")
        assert status["observedSize"] == 1
        meta = get()["metadata"]
        assert "kopf.zalando.org/KopfFinalizerMarker" in meta.get("finalizers", [])
        assert "kopf.zalando.org/last-handled-configuration" in meta.get("annotations", {})

        first = eventually(
            lambda: get()["status"].get("ticks", 0) >= 1 and get()["status"]["ticks"], "a tick"
        )
        eventually(lambda: get()["status"].get("ticks", 0) >= first + 2, "more ticks")

        custom.patch_namespaced_custom_object(*args, "w1", {"spec": {"size": 3}})
        eventually(lambda: "update w1 1->3" in operator.calls(), "the update handler")
        eventually(lambda: get()["status"].get("observedSize") == 3, "the updated status")

        def kopf_events() -> list[str]:
            items = core.list_namespaced_event(NS, field_selector="involvedObject.name=w1").items
            return [e.message or "" for e in items if e.involved_object.kind == "Widget"]

        eventually(lambda: "widget w1 of size 1" in kopf_events(), "kopf's Event")

        custom.delete_namespaced_custom_object(*args, "w1")
        eventually(lambda: "delete w1" in operator.calls(), "the delete handler")

        def gone() -> bool:
            try:
                get()
            except ApiException as exc:
                return exc.status == 404
            return False

        eventually(gone, "kopf to release its finalizer")
        assert operator.calls().count("create w1 1") == 1
        assert operator.calls().count("update w1 1->3") == 1
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- kopf output ---\n{operator.diagnostics()}") from exc
    assert operator.proc.poll() is None, operator.diagnostics()
