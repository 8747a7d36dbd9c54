"""kubectl against a real server process: the everyday commands, through YAML files.

apply (client-side, default strict validation, and --server-side with conflicts), create,
get (tables, -o json, -w), describe, explain (from the OpenAPI v3 documents), label, patch
(strategic, merge, json) and delete, with objects from files (the generator commands such as
``kubectl create configmap`` are in test_kubectl_generators.py). Skipped when no kubectl binary is
installed.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.apiserver import ServerProcess
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
NS = "kubectl-test"

pytestmark = NEEDS_KUBECTL


def raycluster(name: str, replicas: int = 1, **spec: Any) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.9.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "rayVersion": "2.9.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": replicas,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
            **spec,
        },
    }


def configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NS},
        "data": data,
    }


@pytest.fixture(scope="module")
def kubectl(apiserver: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    k = Kubectl(apiserver, tmp_path_factory.mktemp("kubectl"))
    for crd in ("ray.io_rayclusters.yaml", "kueue.x-k8s.io_clusterqueues.yaml"):
        k.run("apply", "-f", str(CRDS / crd))
    k.run(
        "apply", "-f", k.write("ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    )
    return k


def test_apply_creates_then_configures_with_strict_validation(kubectl: Kubectl) -> None:
    path = kubectl.write("rc-apply.yaml", raycluster("rc-apply"))
    assert "raycluster.ray.io/rc-apply created" in kubectl.run("apply", "-f", path).stdout
    path = kubectl.write("rc-apply.yaml", raycluster("rc-apply", replicas=2))
    assert "raycluster.ray.io/rc-apply configured" in kubectl.run("apply", "-f", path).stdout
    got = kubectl.json("get", "raycluster", "rc-apply", "-n", NS)
    assert got["spec"]["workerGroupSpecs"][0]["replicas"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in got["metadata"]["annotations"]
    # kubectl reports "configured" (the defaulted numOfHosts makes its list differ), but the
    # server sees a no-op: no new resourceVersion
    kubectl.run("apply", "-f", path)
    again = kubectl.json("get", "raycluster", "rc-apply", "-n", NS)
    assert again["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]

    bad = raycluster("rc-bad", bogusField=1)
    rejected = kubectl.run("apply", "-f", kubectl.write("rc-bad.yaml", bad), check=False)
    assert rejected.returncode != 0 and 'unknown field "spec.bogusField"' in rejected.stderr
    warned = kubectl.run("apply", "--validate=warn", "-f", kubectl.write("rc-bad.yaml", bad))
    assert 'unknown field "spec.bogusField"' in warned.stderr
    assert "bogusField" not in kubectl.json("get", "raycluster", "rc-bad", "-n", NS)["spec"]  # pruned


def test_apply_builtin_uses_strategic_merge(kubectl: Kubectl) -> None:
    path = kubectl.write("cm-apply.yaml", configmap("cm-apply", {"a": "1", "b": "2"}))
    kubectl.run("apply", "-f", path)
    kubectl.run("label", "configmap", "cm-apply", "-n", NS, "kept=yes")
    kubectl.write("cm-apply.yaml", configmap("cm-apply", {"a": "1"}))
    assert "configured" in kubectl.run("apply", "-f", path).stdout
    got = kubectl.json("get", "configmap", "cm-apply", "-n", NS)
    assert got["data"] == {"a": "1"}  # removed from the file, so removed from the object
    assert got["metadata"]["labels"] == {"kept": "yes"}  # not ours to remove
    assert "unchanged" in kubectl.run("apply", "-f", path).stdout


def test_server_side_apply_conflict_and_force(kubectl: Kubectl) -> None:
    path = kubectl.write("rc-ssa.yaml", raycluster("rc-ssa"))
    assert "serverside-applied" in kubectl.run("apply", "--server-side", "-f", path).stdout
    other = kubectl.write("rc-ssa-other.yaml", raycluster("rc-ssa", replicas=3))
    conflict = kubectl.run("apply", "--server-side", "--field-manager=other", "-f", other, check=False)
    assert conflict.returncode != 0 and "conflict" in conflict.stderr.lower()
    kubectl.run("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other)
    got = kubectl.json("get", "raycluster", "rc-ssa", "-n", NS, "--show-managed-fields")
    assert got["spec"]["workerGroupSpecs"][0]["replicas"] == 3
    managers = {m["manager"] for m in got["metadata"]["managedFields"]}
    assert {"kubectl", "other"} <= managers


def test_create_from_file_and_already_exists(kubectl: Kubectl) -> None:
    path = kubectl.write("cm-create.yaml", configmap("cm-create", {"k": "v"}))
    assert "configmap/cm-create created" in kubectl.run("create", "-f", path).stdout
    again = kubectl.run("create", "-f", path, check=False)
    assert again.returncode != 0 and "AlreadyExists" in again.stderr


def test_get_prints_tables_with_printer_columns(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", kubectl.write("rc-get.yaml", raycluster("rc-get")))
    out = kubectl.run("get", "rayclusters", "-n", NS).stdout
    header = out.splitlines()[0]
    assert header.split()[0] == "NAME" and "AGE" in header and "DESIRED WORKERS" in header
    assert any(line.split()[0] == "rc-get" for line in out.splitlines()[1:])
    wide = kubectl.run("get", "namespaces").stdout
    assert "STATUS" in wide.splitlines()[0] and "Active" in wide
    names = kubectl.run("get", "rayclusters", "-A", "-o", "name").stdout.split()
    assert "raycluster.ray.io/rc-get" in names
    missing = kubectl.run("get", "raycluster", "nope", "-n", NS, check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def _read_until(proc: subprocess.Popen[str], needle: str, lines: list[str], timeout: float = 15) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if needle in line:
            return
    raise AssertionError(f"{needle!r} not seen; output so far: {lines}")


def test_get_watch_prints_initial_object_and_later_changes(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", kubectl.write("cm-watch.yaml", configmap("cm-watch", {"v": "1"})))
    proc = kubectl.popen(
        "get", "configmap", "cm-watch", "-n", NS, "-w", "--request-timeout=20s",
        "-o", "custom-columns=NAME:.metadata.name,V:.data.v",
    )  # fmt: skip
    lines: list[str] = []
    try:
        _read_until(proc, "cm-watch", lines)
        assert lines[-1].split() == ["cm-watch", "1"]
        kubectl.run("patch", "configmap", "cm-watch", "-n", NS, "-p", '{"data":{"v":"2"}}')
        _read_until(proc, "cm-watch", lines)
        assert lines[-1].split() == ["cm-watch", "2"]
    finally:
        proc.kill()
        proc.wait(5)


def test_get_watch_on_custom_resources(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", kubectl.write("rc-watch.yaml", raycluster("rc-watch")))
    proc = kubectl.popen("get", "rayclusters", "-n", NS, "-w", "-o", "name", "--request-timeout=20s")
    lines: list[str] = []
    try:
        _read_until(proc, "raycluster.ray.io/rc-watch", lines)
        kubectl.run("apply", "-f", kubectl.write("rc-watch2.yaml", raycluster("rc-watch2")))
        _read_until(proc, "raycluster.ray.io/rc-watch2", lines)
    finally:
        proc.kill()
        proc.wait(5)


def test_describe_custom_and_builtin(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", kubectl.write("rc-desc.yaml", raycluster("rc-desc")))
    out = kubectl.run("describe", "raycluster", "rc-desc", "-n", NS).stdout
    assert "Name:         rc-desc" in out and "Worker Group Specs:" in out and "Group Name:" in out
    kubectl.run("apply", "-f", kubectl.write("cm-desc.yaml", configmap("cm-desc", {"key": "value"})))
    out = kubectl.run("describe", "configmap", "cm-desc", "-n", NS).stdout
    assert "Name:         cm-desc" in out and "key:" in out and "value" in out


def test_explain_custom_resource_fields(kubectl: Kubectl) -> None:
    out = kubectl.run("explain", "raycluster.spec.workerGroupSpecs").stdout
    assert "KIND:       RayCluster" in out and "GROUP:      ray.io" in out
    assert "groupName" in out and "replicas" in out and "-required-" in out
    out = kubectl.run("explain", "clusterqueues.spec", "--recursive").stdout
    assert "resourceGroups" in out and "nominalQuota" in out


def test_label_and_patch_every_type(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", kubectl.write("rc-patch.yaml", raycluster("rc-patch")))
    assert "labeled" in kubectl.run("label", "raycluster", "rc-patch", "-n", NS, "tier=gold").stdout
    selected = kubectl.run("get", "rayclusters", "-n", NS, "-l", "tier=gold", "-o", "name").stdout.split()
    assert selected == ["raycluster.ray.io/rc-patch"]
    kubectl.run(
        "patch", "raycluster", "rc-patch", "-n", NS, "--type=merge", "-p", '{"spec":{"suspend":true}}'
    )
    kubectl.run(
        "patch", "raycluster", "rc-patch", "-n", NS, "--type=json",
        "-p", '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":2}]',
    )  # fmt: skip
    kubectl.run(
        "patch", "raycluster", "rc-patch", "-n", NS, "--subresource=status", "--type=merge",
        "-p", '{"status":{"state":"ready"}}',
    )  # fmt: skip
    got = kubectl.json("get", "raycluster", "rc-patch", "-n", NS)
    assert got["spec"]["suspend"] is True and got["spec"]["workerGroupSpecs"][0]["replicas"] == 2
    assert got["status"]["state"] == "ready" and got["metadata"]["labels"] == {"tier": "gold"}
    kubectl.run("label", "raycluster", "rc-patch", "-n", NS, "tier-")
    assert "labels" not in kubectl.json("get", "raycluster", "rc-patch", "-n", NS)["metadata"]

    kubectl.run("apply", "-f", kubectl.write("cm-patch.yaml", configmap("cm-patch", {"a": "1"})))
    kubectl.run("patch", "configmap", "cm-patch", "-n", NS, "-p", '{"data":{"b":"2"}}')  # strategic
    assert kubectl.json("get", "configmap", "cm-patch", "-n", NS)["data"] == {"a": "1", "b": "2"}


def test_delete_by_file_and_by_name(kubectl: Kubectl) -> None:
    path = kubectl.write("cm-del.yaml", configmap("cm-del", {"a": "1"}))
    kubectl.run("apply", "-f", path)
    assert 'configmap "cm-del" deleted' in kubectl.run("delete", "-f", path).stdout
    kubectl.run("apply", "-f", kubectl.write("rc-del.yaml", raycluster("rc-del")))
    assert (
        'raycluster.ray.io "rc-del" deleted' in kubectl.run("delete", "raycluster", "rc-del", "-n", NS).stdout
    )
    gone = kubectl.run("get", "raycluster", "rc-del", "-n", NS, check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq-del"},
        "spec": {"resourceGroups": []},
    }
    cq_path = kubectl.write("cq-del.yaml", cq)
    kubectl.run("apply", "-f", cq_path)
    assert "deleted" in kubectl.run("delete", "-f", cq_path).stdout
