"""The operator's configuration, end to end: a real API server and ``codeflare operator`` as a process.

A missing ConfigMap is created with the documented defaults; a bad one stops the process before
any controller starts, with every bad field named in the log next to the rule it breaks; a changed
one restarts the process, which then acts on the new values; disabled controllers leave their
objects alone.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from codeflare.operator.config import CONFIG_KEY, CONFIGMAP_NAME, OperatorConfig
from codeflare.operator.main import EXIT_CONFIG
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import (
    OPERATOR_NAMESPACE,
    OperatorProcess,
    ensure_namespace,
    install_crds,
    quiet_config,
    wait_for,
    write_operator_config,
)

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
NS = "team"


def raycluster(name: str, queue: str | None = "queue") -> dict[str, Any]:
    template = {
        "spec": {"containers": [{"name": "ray", "image": "ray", "resources": {"requests": {"cpu": "1"}}}]}
    }
    return {
        "metadata": {"name": name, "namespace": NS, "labels": {QUEUE_LABEL: queue} if queue else {}},
        "spec": {"suspend": True, "headGroupSpec": {"rayStartParams": {}, "template": template}},
    }


def appwrapper(name: str) -> dict[str, Any]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-pod"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    }
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"suspend": False, "components": [{"template": pod}]},
    }


def workloads_of(kube: Kube, job: str) -> list[dict[str, Any]]:
    return [
        wl
        for wl in kube.list(kinds.WORKLOAD, NS)
        if any(ref.get("name") == job for ref in wl["metadata"].get("ownerReferences") or [])
    ]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def store_raw_config(kube: Kube, text: str) -> None:
    """Store ``text`` verbatim as the operator's config.yaml (bypassing the typed model)."""
    ensure_namespace(kube, OPERATOR_NAMESPACE)
    body = {"metadata": {"name": CONFIGMAP_NAME, "namespace": OPERATOR_NAMESPACE}, "data": {CONFIG_KEY: text}}
    kube.create(kinds.CONFIGMAP, body)


@pytest.fixture
def kube(fresh_apiserver: ServerProcess) -> Iterator[Kube]:
    client = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    install_crds(client)
    ensure_namespace(client, NS)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def operator(fresh_apiserver: ServerProcess, tmp_path: Path) -> Iterator[OperatorProcess]:
    """An operator process, not yet started; stopped (and its log shown on failure) afterwards."""
    proc = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log")
    try:
        yield proc
    finally:
        proc.stop()
        print(proc.log()[-4000:])


def test_missing_config_map_is_created_with_the_documented_defaults(
    kube: Kube, operator: OperatorProcess
) -> None:
    ensure_namespace(kube, OPERATOR_NAMESPACE)
    assert kube.find(kinds.CONFIGMAP, CONFIGMAP_NAME, OPERATOR_NAMESPACE) is None

    operator.start()
    stored = wait_for(
        lambda: kube.find(kinds.CONFIGMAP, CONFIGMAP_NAME, OPERATOR_NAMESPACE), what="default ConfigMap"
    )
    assert stored is not None

    text = stored["data"][CONFIG_KEY]
    assert text == OperatorConfig.default().to_yaml()
    assert OperatorConfig.from_yaml(text) == OperatorConfig.default()
    assert yaml.safe_load(text)["queueing"]["backoffTime"] == "20s"
    assert stored["metadata"]["labels"]["app.kubernetes.io/name"] == "codeflare-operator"
    wait_for(lambda: "default configuration" in operator.log(), what="log of the created ConfigMap")


BAD_FIELDS = {
    # field path in the log: (YAML that breaks it, words of the rule the log must state)
    "queueing.backoffTime": ("queueing: {backoffTime: 20 seconds}", 'invalid duration "20 seconds"'),
    "queueing.backofTime": ("queueing: {backofTime: 5s}", 'unknown field; did you mean "backoffTime"'),
    "instascale.maxScaleoutAllowed": (
        "instascale: {maxScaleoutAllowed: -1}",
        "must be greater than or equal to 0, got -1",
    ),
    "leaderElection.renewDeadline": (
        "leaderElection: {leaseDuration: 2s, renewDeadline: 5s}",
        "must be shorter than leaseDuration (2s), got 5s",
    ),
    "metrics.bindAddress": ("metrics: {bindAddress: localhost}", 'invalid bind address "localhost"'),
}


def test_every_invalid_field_is_named_and_nothing_starts(kube: Kube, operator: OperatorProcess) -> None:
    health_port = free_port()
    document = "\n".join(
        [
            *(
                snippet
                for snippet, _ in BAD_FIELDS.values()
                if not snippet.startswith(("queueing", "metrics"))
            ),
            "queueing: {backoffTime: 20 seconds, backofTime: 5s}",
            "metrics: {bindAddress: localhost}",
            f"health: {{bindAddress: '127.0.0.1:{health_port}'}}",
        ]
    )
    store_raw_config(kube, document)
    kube.create(kinds.RAYCLUSTER, raycluster("waiting"))

    status = operator.start().wait_exit(60)

    log = operator.log()
    assert status == EXIT_CONFIG, log
    assert "refusing to start: invalid configuration" in log
    for field, (_, rule) in BAD_FIELDS.items():
        assert f"{field}: {rule}" in log, f"{field} not reported:\n{log}"
    # nothing half-started: no probes, no controllers, no writes
    assert "probes listening" not in log and "synced" not in log
    assert not listening(health_port)
    assert workloads_of(kube, "waiting") == []
    assert kube.get(kinds.RAYCLUSTER, "waiting", NS)["spec"]["suspend"] is True


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("queueing: [enabled]", "queueing: expected a mapping, got list"),
        ("- not a mapping", "config.yaml: expected a mapping of sections, got list"),
        ("queueing: {enabled: 'yes'}", 'queueing.enabled: expected true or false, got "yes"'),
    ],
)
def test_malformed_documents_are_reported(
    kube: Kube, operator: OperatorProcess, document: str, expected: str
) -> None:
    store_raw_config(kube, document)
    assert operator.start().wait_exit(60) == EXIT_CONFIG
    assert expected in operator.log()


def test_changed_config_map_restarts_the_operator_with_the_new_values(
    kube: Kube, operator: OperatorProcess
) -> None:
    metrics = OperatorMetricsReader()
    write_operator_config(kube, quiet_config(metrics=metrics.bind))
    operator.start()
    pid = operator.proc.pid if operator.proc else None
    kube.create(kinds.RAYCLUSTER, raycluster("before"))
    wait_for(lambda: workloads_of(kube, "before"), what="Workload while queueing is enabled")
    # appwrapper.enabled is false in quiet_config: an AppWrapper is left exactly as written
    untouched = kube.create(kinds.APPWRAPPER, appwrapper("plain"))

    write_operator_config(kube, quiet_config(queueing={"enabled": False}, metrics=metrics.bind))
    wait_for(lambda: "queueing disabled" in operator.log(), timeout=30, what="restart with queueing off")
    assert "changed; restarting to apply it" in operator.log()
    assert operator.running and operator.proc is not None and operator.proc.pid == pid  # exec'd in place
    during = kube.create(kinds.RAYCLUSTER, raycluster("during"))
    # the restarted operator has seen "during" (the RayCluster controller acted on it) ...
    metrics.wait_caught_up("raycluster", kinds.RAYCLUSTER, during)
    # ... and, queueing off, ran no scheduling cycle and made no Workload for it
    assert metrics.value("codeflare_scheduling_cycles_total") == 0
    assert metrics.passes("queueing") == 0
    assert workloads_of(kube, "during") == []
    assert kube.get(kinds.RAYCLUSTER, "during", NS)["spec"]["suspend"] is True

    queueing_back_on = {"enabled": True, "backoffTime": "2s"}
    write_operator_config(kube, quiet_config(queueing=queueing_back_on, metrics=metrics.bind))
    wait_for(lambda: workloads_of(kube, "during"), timeout=30, what="Workload once queueing is back on")
    assert operator.log().count("changed; restarting to apply it") == 2
    assert len(workloads_of(kube, "before")) == 1

    current = kube.get(kinds.APPWRAPPER, "plain", NS)
    assert current["metadata"]["resourceVersion"] == untouched["metadata"]["resourceVersion"]
    assert not current["metadata"].get("finalizers") and not current.get("status")
    assert kube.list(kinds.POD, NS) == []


def test_disabled_queueing_creates_no_workloads(kube: Kube, operator: OperatorProcess) -> None:
    metrics = OperatorMetricsReader()
    write_operator_config(kube, quiet_config(queueing={"enabled": False}, metrics=metrics.bind))
    created = kube.create(kinds.RAYCLUSTER, raycluster("queued"))
    wrapped = kube.create(kinds.APPWRAPPER, appwrapper("wrapped"))
    operator.start()
    later = kube.create(kinds.RAYCLUSTER, raycluster("later"))
    # the operator has acted on both clusters (their RayCluster controller pass is done)
    metrics.wait_caught_up("raycluster", kinds.RAYCLUSTER, later)
    assert metrics.value("codeflare_scheduling_cycles_total") == 0
    assert metrics.passes("queueing") == 0

    assert kube.list(kinds.WORKLOAD, NS) == []
    for name, before in (("queued", created), ("later", None)):
        current = kube.get(kinds.RAYCLUSTER, name, NS)
        assert current["spec"]["suspend"] is True
        if before is not None:
            assert current["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    current_aw = kube.get(kinds.APPWRAPPER, "wrapped", NS)
    assert current_aw["metadata"]["resourceVersion"] == wrapped["metadata"]["resourceVersion"]
    assert "queueing disabled" in operator.log()
    assert operator.running
