"""``codeflare job check`` / ``cluster check`` and the SDK's ``check()``, against the real operator.

A real API server process and the operator (in a thread, no Ray: nothing is admitted to run);
ClusterQueue ``check-cq`` has 4 CPUs and 8Gi, LocalQueue ``check-queue`` in ``default``. A job
bigger than anything the queue can ever give is told so with the numbers and exits 2; one that
fits is told where; a check creates nothing (the counts of every kind a check could create, and
the FeasibilityCheck resource itself is not stored), and the request is authorized: a user who
may not create workloads in the namespace is refused (a SubjectAccessReview by the operator).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from codeflare.cli.main import main
from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.kube.config import from_kubeconfig, from_token
from codeflare.kube.tokens import request_token
from codeflare.operator.visibility.controller import APISERVICE
from codeflare.sdk import (
    Client,
    Cluster,
    ClusterConfiguration,
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
)
from tests.sdk.conftest import control_plane  # noqa: F401  (the module's server + operator)
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import wait_for

QUEUE, CQ, FLAVOR = "check-queue", "check-cq", "check-flavor"
SMALL = ["--head-cpu", "1", "--head-memory", "1Gi", "--worker-cpu", "1", "--worker-memory", "1Gi"]
CREATABLE = (kinds.RAYJOB, kinds.RAYCLUSTER, kinds.WORKLOAD, kinds.APPWRAPPER)


@pytest.fixture(scope="module")
def queues(control_plane: Client) -> Iterator[Client]:  # noqa: F811
    kube = control_plane.kube
    kube.apply(
        kinds.RESOURCE_FLAVOR,
        {
            "apiVersion": kinds.RESOURCE_FLAVOR.api_version,
            "kind": "ResourceFlavor",
            "metadata": {"name": FLAVOR},
            "spec": {},
        },
    )
    create_cluster_queue(
        CQ, [FlavorQuota(FLAVOR, {"cpu": "4", "memory": "8Gi"})], namespace_selector={}, client=control_plane
    )
    create_local_queue(QUEUE, CQ, "default", client=control_plane)
    wait_for(lambda: kube.find(APISERVICE, "v1alpha1.forecast.codeflare.dev"), 30, what="forecast APIService")
    yield control_plane


def counts(client: Client) -> dict[str, int]:
    return {k.kind: len(client.kube.list(k, all_namespaces=True)) for k in CREATABLE}


def cli(capsys: pytest.CaptureFixture[str], server: ServerProcess, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--kubeconfig", str(server.kubeconfig), "-n", "default"])
    out, err = capsys.readouterr()
    return code, out, err


def test_job_too_big_for_any_queue_exits_2_with_the_numbers(
    queues: Client, apiserver: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    before = counts(queues)
    code, out, err = cli(
        capsys,
        apiserver,
        "job",
        "check",
        "huge",
        "--entrypoint",
        "python train.py",
        "--workers",
        "8",
        "--worker-cpu",
        "8",
        "--head-cpu",
        "1",
        "--queue",
        QUEUE,
    )
    assert code == 2, (out, err)
    assert (
        f"can never be admitted: needs cpu 65, the most ClusterQueue {CQ} can ever give is 4 in flavor "
        f"{FLAVOR} (nominal 4 + borrowing 0)"
    ) in out + err
    assert counts(queues) == before


def test_job_that_fits_says_where_and_creates_nothing(
    queues: Client, apiserver: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    before = counts(queues)
    code, out, err = cli(
        capsys,
        apiserver,
        "job",
        "check",
        "small",
        "--entrypoint",
        "python train.py",
        "--workers",
        "1",
        *SMALL,
        "--queue",
        QUEUE,
    )
    assert code == 0, (out, err)
    assert f"would be admitted now in ClusterQueue {CQ} (flavor {FLAVOR})" in out
    code, out, _ = cli(
        capsys,
        apiserver,
        "cluster",
        "check",
        "small",
        "--workers",
        "1",
        *SMALL,
        "--queue",
        QUEUE,
        "-o",
        "json",
    )
    answer = json.loads(out)
    assert (
        code == 0
        and answer["verdict"] == "AdmitNow"
        and answer["flavors"] == {"cpu": FLAVOR, "memory": FLAVOR}
    )
    wrapped = ["cluster", "check", "wrapped", "--appwrapper", "--workers", "2", *SMALL, "--queue", QUEUE]
    code, out, err = cli(capsys, apiserver, *wrapped)
    assert code == 0 and f"would be admitted now in ClusterQueue {CQ}" in out, (out, err)
    assert counts(queues) == before
    with pytest.raises(errors.KubeError):  # a review, never stored
        queues.kube.list(kinds.FEASIBILITY_CHECK, "default")


def test_sdk_check_and_a_waiting_answer(queues: Client) -> None:
    config = ClusterConfiguration(
        "sdk-check",
        namespace="default",
        num_workers=1,
        local_queue=QUEUE,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests="1Gi",
        head_memory_limits="1Gi",
        worker_cpu_requests=3,
        worker_cpu_limits=3,
        worker_memory_requests="1Gi",
        worker_memory_limits="1Gi",
    )
    fits = config.check(queues)
    assert fits.verdict == "AdmitNow" and fits.ever and fits.cluster_queue == CQ
    # a workload holding the whole queue, of unknown duration: the check waits, with no bound
    blocker = {
        "apiVersion": kinds.WORKLOAD.api_version,
        "kind": "Workload",
        "metadata": {"name": "holder", "namespace": "default"},
        "spec": {
            "queueName": QUEUE,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "4"}}}
                            ]
                        }
                    },
                }
            ],
        },
    }
    queues.kube.create(kinds.WORKLOAD, blocker)
    try:
        wait_for(
            lambda: (queues.kube.get(kinds.WORKLOAD, "holder", "default").get("status") or {}).get(
                "admission"
            ),
            30,
            what="holder admitted",
        )
        waiting = config.check(queues)
        assert waiting.verdict == "Wait" and waiting.position == 0 and waiting.estimated_start is None
        assert "would wait: position 1 in ClusterQueue check-cq" in waiting.message
        assert "behind holder" in waiting.message or "holder" in waiting.behind
        # submitted for real, it waits; why_pending() carries the operator's published estimate
        cluster = Cluster(config, queues)
        cluster.up()
        reason = wait_for(lambda: (r := cluster.why_pending()) and "estimated start" in r and r, 30,
                          what="the estimate in why_pending()")  # fmt: skip
        assert "no estimated start: it waits behind holder, of unknown run time" in reason
        cluster.down()
    finally:
        queues.kube.delete(kinds.WORKLOAD, "holder", "default")


ROLE = kinds.Kind("rbac.authorization.k8s.io", "v1", "Role", "roles")
ROLE_BINDING = kinds.Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings")
SERVICE_ACCOUNT = kinds.Kind("", "v1", "ServiceAccount", "serviceaccounts")


def user_allowed(client: Client, server: ServerProcess, name: str, resources: list[str]) -> Kube:
    """A service account in ``default`` that may create feasibilitychecks and ``resources``."""
    kube = client.kube
    kube.create(SERVICE_ACCOUNT, {"metadata": {"name": name, "namespace": "default"}})
    rules = [
        {
            "apiGroups": [kinds.FEASIBILITY_CHECK.group],
            "resources": ["feasibilitychecks"],
            "verbs": ["create"],
        }
    ]
    if resources:
        rules.append({"apiGroups": [kinds.WORKLOAD.group], "resources": resources, "verbs": ["create"]})
    kube.create(ROLE, {"metadata": {"name": name, "namespace": "default"}, "rules": rules})
    kube.create(
        ROLE_BINDING,
        {
            "metadata": {"name": name, "namespace": "default"},
            "roleRef": {"apiGroup": ROLE.group, "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
        },
    )
    token = request_token(from_kubeconfig(server.kubeconfig), "default", name)
    return Kube(from_token(server.url, token, ca_file=server.ca_file))


def test_only_a_user_who_may_create_workloads_is_answered(queues: Client, apiserver: ServerProcess) -> None:
    body = {
        "apiVersion": kinds.FEASIBILITY_CHECK.api_version,
        "kind": "FeasibilityCheck",
        "metadata": {"name": "x"},
        "spec": {"queueName": QUEUE, "podSets": [{"name": "main", "count": 1, "requests": {"cpu": "1"}}]},
    }
    with (
        user_allowed(queues, apiserver, "stranger", []) as stranger,
        pytest.raises(errors.Forbidden, match="cannot create"),
    ):
        stranger.create(kinds.FEASIBILITY_CHECK, body, "default")
    with user_allowed(queues, apiserver, "member", ["workloads"]) as member:
        answer = member.create(kinds.FEASIBILITY_CHECK, body, "default")
        assert answer["status"]["verdict"] == "AdmitNow"
        bad = {
            **body,
            "spec": {**body["spec"], "podSets": [{"name": "main", "count": 0, "requests": {"cpu": "1"}}]},
        }
        with pytest.raises(errors.KubeError, match=r"spec\.podSets\[0\]\.count: must be an integer >= 1"):
            member.create(kinds.FEASIBILITY_CHECK, bad, "default")
