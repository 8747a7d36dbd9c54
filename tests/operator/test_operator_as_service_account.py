"""The operator as its own ServiceAccount, holding only deploy/'s RBAC: enough, and nothing spare.

One API server for the module. As admin it gets what ``kubectl kustomize deploy`` renders for the
operator's identity (Namespace, ServiceAccount, ClusterRole, Role, bindings) and the CRDs; the
operator then runs as a process with a kubeconfig carrying a TokenRequest token of that
ServiceAccount. The full flow (webhooks, leader election, queueing with admission, pending,
preemption and release, an AppWrapper run to success, RayCluster children with an Ingress) must
work with no 403 in the operator's log. Then each negative test removes one rule, runs one short
scenario and shows it break in a way a user sees (and, where the operator retries, heal once the
rule is back): the rules are needed, not just granted.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.api.crds import load_crds
from codeflare.kube import config, errors, kinds
from codeflare.kube.client import AsyncKube, Kube
from codeflare.local.mode.operator_identity import install_rbac, kind_for, write_operator_kubeconfig
from codeflare.operator import manifests
from codeflare.operator.main import EXIT_LOST_LEASE
from codeflare.operator.raycluster import mtls
from codeflare.operator.webhooks.server import CONFIGURATION_NAME, MUTATING
from tests.operator.test_queueing import _admitted_in, _reason, _running, _workload, raycluster
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OperatorProcess,
    ensure_namespace,
    quiet_config,
    stopping,
    wait_for,
    write_operator_config,
)
from tests.support.kubelet_sim import KubeletSim, Policy, succeed

Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")
NAMESPACE = manifests.NAMESPACE
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
INGRESS_DOMAIN = "apps.sa.test"
IDENTITY_KINDS = ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def deploy_objects() -> list[Obj]:
    """The operator's identity and RBAC as deploy/ renders them (the packaged copy without kubectl)."""
    if KUBECTL is None:
        return manifests.rbac_objects()
    out = subprocess.run(
        [KUBECTL, "kustomize", str(REPO / "deploy")], capture_output=True, text=True, check=True
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc and doc["kind"] in IDENTITY_KINDS]


class Cluster:
    """The module's API server with deploy/'s RBAC, an admin client and the operator's kubeconfig."""

    def __init__(self, server: ServerProcess, workdir: Path) -> None:
        self.server = server
        self.workdir = workdir
        self.admin = Kube(config.from_kubeconfig(server.kubeconfig))
        self.rbac = deploy_objects()
        install_rbac(self.admin, self.rbac)
        for crd in load_crds():
            self.admin.apply(kinds.CRD, crd)
        self.kubeconfig = write_operator_kubeconfig(
            server.kubeconfig, workdir / "operator.kubeconfig", expiration_seconds=3600
        )

    def role(self, kind: str) -> Obj:
        # the operator's own (deploy/ also ships the visibility and feasibility roles for users)
        return next(
            o for o in self.rbac if o["kind"] == kind and o["metadata"]["name"] == "codeflare-operator"
        )

    def start_operator(self, name: str, overrides: dict[str, Any]) -> OperatorProcess:
        write_operator_config(self.admin, overrides)
        return OperatorProcess(self.kubeconfig, self.workdir / f"{name}.log").start()

    @contextlib.contextmanager
    def without(self, role_kind: str, group: str, resource: str, verb: str) -> Iterator[None]:
        """deploy/'s ``role_kind`` less one verb on one resource, for the duration of the block."""
        original = self.role(role_kind)
        reduced = copy.deepcopy(original)
        rules: list[Obj] = []
        found = False
        for rule in reduced["rules"]:
            if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
                found = True
                rules.append({**rule, "resources": [r for r in rule["resources"] if r != resource]})
                rules.append(
                    {
                        **rule,
                        "apiGroups": [group],
                        "resources": [resource],
                        "verbs": [v for v in rule["verbs"] if v != verb],
                    }
                )
            else:
                rules.append(rule)
        assert found, f"deploy/ grants no {verb} on {group}/{resource}"
        reduced["rules"] = [r for r in rules if r["resources"] and r["verbs"] and r["apiGroups"]]
        self.admin.apply(kind_for(reduced), reduced)
        try:
            yield
        finally:
            self.admin.apply(kind_for(original), original)


@pytest.fixture(scope="module")
def cluster(apiserver: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    made = Cluster(apiserver, tmp_path_factory.mktemp("as-sa"))
    try:
        yield made
    finally:
        made.admin.close()


class SimThread:
    """A :class:`KubeletSim` for one namespace on a thread of its own (admin credentials)."""

    def __init__(self, kubeconfig: Path, namespace: str, policy: Policy) -> None:
        self.connection = config.from_kubeconfig(kubeconfig)
        self.namespace, self.policy = namespace, policy
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        async with AsyncKube(self.connection) as kube:
            task = asyncio.create_task(KubeletSim(kube, self.namespace, self.policy).run())
            while not self.stopped.is_set():
                await asyncio.sleep(0.1)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def __enter__(self) -> SimThread:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        self.thread.join(10)


def queue_for(kube: Kube, namespace: str, cpu: str, cohort: str | None = None, **spec: Any) -> None:
    """A ClusterQueue named after ``namespace`` (one flavor "default") and LocalQueue "queue" in it."""
    with contextlib.suppress(errors.AlreadyExists):
        kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    kube.create(
        kinds.CLUSTER_QUEUE,
        {
            "metadata": {"name": namespace},
            "spec": {
                **({"cohortName": cohort} if cohort else {}),
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                    }
                ],
                **spec,
            },
        },
    )
    ensure_namespace(kube, namespace)
    kube.create(
        kinds.LOCAL_QUEUE,
        {"metadata": {"name": "queue", "namespace": namespace}, "spec": {"clusterQueue": namespace}},
    )


def appwrapper(name: str, namespace: str) -> Obj:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{name}-job"},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: "queue"}},
        "spec": {"suspend": True, "components": [{"template": job}]},
    }


def phase(kube: Kube, namespace: str, name: str) -> str:
    return str((kube.get(kinds.APPWRAPPER, name, namespace).get("status") or {}).get("phase", ""))


def forbidden_lines(operator: OperatorProcess) -> list[str]:
    return [line for line in operator.log().splitlines() if "forbidden" in line.lower() or " 403" in line]


def full_config(**sections: Any) -> dict[str, Any]:
    return quiet_config(
        appwrapper={"enabled": True},
        kuberay={"ingressDomain": INGRESS_DOMAIN},
        webhook={"enabled": True},
        **sections,
    )


# -- enough -------------------------------------------------------------------------------------


def test_the_token_is_not_admin(cluster: Cluster) -> None:
    with Kube(config.from_kubeconfig(cluster.kubeconfig)) as operator_kube:
        with pytest.raises(errors.Forbidden):
            operator_kube.list(kinds.SECRET, "default")
        with pytest.raises(errors.Forbidden):
            operator_kube.list(kinds.CONFIGMAP, "default")  # the Role is for its own namespace only
        assert operator_kube.list(kinds.RAYCLUSTER, "default") == []


def test_full_flow_as_the_service_account(cluster: Cluster) -> None:
    admin = cluster.admin
    leader = {
        "leaderElect": True,
        "resourceName": "sa-flow",
        "leaseDuration": "4s",
        "renewDeadline": "3s",
        "retryPeriod": "500ms",
    }
    with stopping(cluster.start_operator("full", full_config(leaderElection=leader))) as operator:
        wait_for(lambda: admin.find(MUTATING, CONFIGURATION_NAME), timeout=60, what="webhooks registered")
        queue_for(admin, "team-a", "4", cohort="research")
        queue_for(admin, "team-b", "4", cohort="research", preemption={"reclaimWithinCohort": "Any"})

        # webhooks: a RayCluster asking for KubeRay's own ingress is refused
        bad = raycluster("bad", "team-a", "1", "1")
        bad["spec"]["headGroupSpec"]["enableIngress"] = True
        wait_for(lambda: _refused(admin, kinds.RAYCLUSTER, bad), what="the webhook refusing enableIngress")

        # queueing: admitted, borrowing, pending with a reason, preempted by a reclaim, released
        admin.create(kinds.RAYCLUSTER, raycluster("a1", "team-a", "1", "2"))
        wait_for(lambda: _running(admin, "team-a", "a1"), what="a1 admitted and unsuspended")
        admin.create(kinds.RAYCLUSTER, raycluster("a2", "team-a", "1", "2"))
        wait_for(lambda: _admitted_in(admin, "team-a", "a2") == "team-a", what="a2 admitted by borrowing")
        admin.create(kinds.RAYCLUSTER, raycluster("a3", "team-a", "1", "2"))
        assert "cpu" in wait_for(lambda: _reason(admin, "team-a", "a3"), what="a3 pending reason")
        admin.create(kinds.RAYCLUSTER, raycluster("b1", "team-b", "2", "2"))
        wait_for(lambda: _admitted_in(admin, "team-b", "b1") == "team-b", what="b1 admitted after reclaim")
        [victim] = [n for n in ("a1", "a2") if _admitted_in(admin, "team-a", n) is None]
        wait_for(lambda: not _running(admin, "team-a", victim), what="victim suspended")
        admin.delete(kinds.RAYCLUSTER, "a2" if victim == "a1" else "a1", "team-a")
        wait_for(lambda: _admitted_in(admin, "team-a", victim) == "team-a", what="victim re-admitted")
        wait_for(
            lambda: (
                (admin.get(kinds.CLUSTER_QUEUE, "team-b").get("status") or {}).get("admittedWorkloads") == 1
            ),
            what="queue status counters",
        )

        # RayCluster children: NetworkPolicies, the dashboard Ingress, the CA Secret
        wait_for(lambda: admin.find(kinds.SECRET, mtls.ca_secret_name("b1"), "team-b"), what="CA Secret")
        wait_for(lambda: len(admin.list(kinds.NETWORK_POLICY, "team-b")) == 2, what="NetworkPolicies")
        [ingress] = wait_for(lambda: admin.list(kinds.INGRESS, "team-b"), what="dashboard Ingress")
        assert ingress["spec"]["rules"][0]["host"].endswith(INGRESS_DOMAIN)

        # an AppWrapper: queued, admitted, its Job run by the simulator to success
        queue_for(admin, "aw", "4")
        with SimThread(cluster.server.kubeconfig, "aw", succeed):
            admin.create(kinds.APPWRAPPER, appwrapper("w", "aw"))
            wait_for(lambda: phase(admin, "aw", "w") == "Succeeded", timeout=60, what="AppWrapper succeeded")
        assert admin.find(kinds.JOB, "w-job", "aw") is not None

        lease = admin.get(kinds.LEASE, "sa-flow", NAMESPACE)
        assert lease["spec"]["renewTime"] != lease["spec"]["acquireTime"], "the lease was renewed"
        assert operator.running
        assert forbidden_lines(operator) == []


def _refused(kube: Kube, kind: kinds.Kind, body: Obj) -> bool:
    try:
        kube.create(kind, body)
    except errors.KubeError as exc:
        return "enableIngress" in str(exc)
    kube.delete(kind, body["metadata"]["name"], body["metadata"]["namespace"])
    return False


# -- nothing spare: each rule removed breaks something a user sees --------------------------------


def test_without_workload_status_update_nothing_is_admitted(cluster: Cluster) -> None:
    admin, ns = cluster.admin, f"neg-{uuid.uuid4().hex[:6]}"
    queue_for(admin, ns, "10")
    with (
        cluster.without("ClusterRole", "kueue.x-k8s.io", "workloads/status", "update"),
        stopping(cluster.start_operator("no-status", quiet_config())) as operator,
    ):
        admin.create(kinds.RAYCLUSTER, raycluster("c", ns, "1", "1"))
        wait_for(lambda: _workload(admin, ns, "c"), what="Workload created")
        wait_for(lambda: forbidden_lines(operator), what="a 403 in the operator log")
        assert _admitted_in(admin, ns, "c") is None and not _running(admin, ns, "c")
    with stopping(cluster.start_operator("status-back", quiet_config())):
        wait_for(lambda: _running(admin, ns, "c"), what="admitted once the rule is back")


def test_without_raycluster_update_admitted_clusters_stay_suspended(cluster: Cluster) -> None:
    """Unsuspending writes the whole RayCluster (update); patch only sets a default queue label."""
    admin, ns = cluster.admin, f"neg-{uuid.uuid4().hex[:6]}"
    queue_for(admin, ns, "10")
    with (
        cluster.without("ClusterRole", "ray.io", "rayclusters", "update"),
        stopping(cluster.start_operator("no-update", quiet_config())) as operator,
    ):
        admin.create(kinds.RAYCLUSTER, raycluster("c", ns, "1", "1"))
        wait_for(lambda: _admitted_in(admin, ns, "c") == ns, what="Workload admitted")
        wait_for(lambda: forbidden_lines(operator), what="a 403 in the operator log")
        assert not _running(admin, ns, "c")
    with stopping(cluster.start_operator("update-back", quiet_config())):
        wait_for(lambda: _running(admin, ns, "c"), what="unsuspended once the rule is back")


def test_without_lease_update_the_leader_loses_its_lease(cluster: Cluster) -> None:
    leader = {
        "leaderElect": True,
        "resourceName": f"neg-{uuid.uuid4().hex[:6]}",
        "leaseDuration": "3s",
        "renewDeadline": "2s",
        "retryPeriod": "500ms",
    }
    with cluster.without("Role", "coordination.k8s.io", "leases", "update"):
        operator = cluster.start_operator("no-lease-update", quiet_config(leaderElection=leader))
        with stopping(operator):
            assert operator.wait_exit(60) == EXIT_LOST_LEASE  # it took the Lease (create), never renewed it
            assert forbidden_lines(operator)


def test_without_secret_create_no_ca_secret(cluster: Cluster) -> None:
    admin, ns = cluster.admin, f"neg-{uuid.uuid4().hex[:6]}"
    ensure_namespace(admin, ns)
    rc = raycluster("c", ns, "1", "1")
    del rc["metadata"]["labels"][QUEUE_LABEL]
    with (
        cluster.without("ClusterRole", "", "secrets", "create"),
        stopping(cluster.start_operator("no-secrets", quiet_config())) as operator,
    ):
        admin.create(kinds.RAYCLUSTER, rc)
        wait_for(lambda: len(admin.list(kinds.NETWORK_POLICY, ns)) == 2, what="NetworkPolicies")
        wait_for(lambda: forbidden_lines(operator), what="a 403 in the operator log")
        assert admin.find(kinds.SECRET, mtls.ca_secret_name("c"), ns) is None


def test_without_subject_access_reviews_appwrappers_are_refused(cluster: Cluster) -> None:
    admin, ns = cluster.admin, f"neg-{uuid.uuid4().hex[:6]}"
    ensure_namespace(admin, ns)
    overrides = quiet_config(appwrapper={"enabled": True}, webhook={"enabled": True})
    attempts = iter(range(1000))

    def refusal() -> str:
        """Create AppWrappers until the new operator's webhook answers (earlier ones may pass)."""
        try:
            admin.create(kinds.APPWRAPPER, appwrapper(f"w{next(attempts)}", ns))
        except errors.KubeError as exc:
            return str(exc)
        return ""

    with (
        cluster.without("ClusterRole", "authorization.k8s.io", "subjectaccessreviews", "create"),
        stopping(cluster.start_operator("no-sar", overrides)),
    ):
        message = wait_for(refusal, timeout=60, what="the AppWrapper webhook refusing")
        assert "SubjectAccessReview could not be made" in message, message
