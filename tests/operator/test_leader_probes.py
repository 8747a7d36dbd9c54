"""Leader election, probes and metrics of the operator process, against a real API server.

Two operators with ``leaderElection.leaderElect``: one holds the Lease and acts, the other serves
its probes, reports not ready, and writes nothing; SIGKILL the leader and the standby takes the
Lease once it expires and starts admitting. ``/readyz`` answers 503 until the controllers' caches
have synced and 200 after; ``/metrics`` serves Prometheus text with the documented metrics.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import (
    OPERATOR_NAMESPACE,
    OperatorProcess,
    install_crds,
    quiet_config,
    wait_for,
    write_operator_config,
)
from tests.support.queue_objects import admission, create_flavor_and_queues, raycluster, workloads_by_job_uid

LEASE = {"leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "1s"}
NS = "team"


def http_get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of GET http://127.0.0.1:port/path; (0, error) when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return 0, str(exc)


def lease_holder(kube: Kube) -> str | None:
    lease = kube.find(kinds.LEASE, "codeflare-operator", OPERATOR_NAMESPACE)
    return None if lease is None else (lease.get("spec") or {}).get("holderIdentity")


def metric_value(text: str, name: str) -> float:
    """Sum of every sample of ``name`` (any labels) in Prometheus text."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Candidate:
    """One operator process with its own ConfigMap (own probe ports) and identity."""

    def __init__(self, server: ServerProcess, kube: Kube, tmp_path: Path, identity: str) -> None:
        self.identity = identity
        self.health, self.metrics = free_port(), free_port()
        write_operator_config(
            kube,
            quiet_config(
                leaderElection={"leaderElect": True, **LEASE},
                health={"bindAddress": f"127.0.0.1:{self.health}"},
                metrics={"bindAddress": f"127.0.0.1:{self.metrics}"},
            ),
            name=f"config-{identity}",
        )
        self.process = OperatorProcess(
            server.kubeconfig,
            tmp_path / f"{identity}.log",
            extra_args=["--config", f"config-{identity}", "--identity", identity],
        )

    def ready(self) -> tuple[int, str]:
        return http_get(self.health, "/readyz")

    def admissions(self) -> float:
        return self._metric("codeflare_admission_latency_seconds_count")

    def scheduling_cycles(self) -> float:
        return self._metric("codeflare_scheduling_cycles_total")

    def _metric(self, name: str) -> float:
        status, text = http_get(self.metrics, "/metrics")
        assert status == 200, text
        return metric_value(text, name)


def _admitted(kube: Kube, job: dict[str, Any]) -> bool:
    return admission(workloads_by_job_uid(kube).get(job["metadata"]["uid"])) is not None


def test_one_leader_acts_and_the_standby_takes_over_when_it_dies(
    fresh_apiserver: ServerProcess, kube: Kube, tmp_path: Path
) -> None:
    install_crds(kube)
    create_flavor_and_queues(kube, {NS: ("team", "10")})
    first = Candidate(fresh_apiserver, kube, tmp_path, "op-a")
    second = Candidate(fresh_apiserver, kube, tmp_path, "op-b")
    try:
        first.process.start()
        wait_for(lambda: lease_holder(kube) == "op-a", what="op-a leads")
        wait_for(lambda: first.ready()[0] == 200, what="leader ready")
        second.process.start()
        wait_for(lambda: http_get(second.health, "/healthz")[0] == 200, what="standby alive")
        status, body = second.ready()
        assert status == 503 and "leader" in body, body
        assert "waiting to lead" in second.process.log()

        job = kube.create(kinds.RAYCLUSTER, raycluster("one", NS))
        wait_for(lambda: _admitted(kube, job), what="admitted by the leader")
        wait_for(lambda: first.admissions() == 1, what="leader counted the admission")
        transitions = (kube.get(kinds.LEASE, "codeflare-operator", OPERATOR_NAMESPACE)["spec"]).get(
            "leaseTransitions"
        )
        renewals: set[str] = set()

        def renewed_by_op_a() -> bool:  # across several renewals the Lease stays with op-a
            spec = kube.get(kinds.LEASE, "codeflare-operator", OPERATOR_NAMESPACE)["spec"]
            assert spec["holderIdentity"] == "op-a" and spec.get("leaseTransitions") == transitions, spec
            renewals.add(spec["renewTime"])
            return len(renewals) >= 3

        wait_for(renewed_by_op_a, timeout=15, what="three renewals of the Lease by op-a")
        assert second.admissions() == 0
        assert second.scheduling_cycles() == 0  # the standby's controllers never ran
        assert "created Workload" not in second.process.log() and "admitted" not in second.process.log()
        assert second.ready()[0] == 503

        first.process.kill()
        killed = time.monotonic()
        wait_for(lambda: lease_holder(kube) == "op-b", timeout=15, interval=0.1, what="op-b takes over")
        takeover = time.monotonic() - killed
        wait_for(lambda: second.ready()[0] == 200, what="new leader ready")
        later = kube.create(kinds.RAYCLUSTER, raycluster("two", NS))
        wait_for(lambda: _admitted(kube, later), what="admitted by the new leader")
        assert second.admissions() == 1
        # the Lease expires 3s after op-a's last renewal; op-b retries every second
        assert takeover < 3 + 1 + 2, f"takeover took {takeover:.1f}s"
        assert "became leader as op-b" in second.process.log()
    finally:
        for candidate in (first, second):
            candidate.process.stop()
            print(candidate.process.log()[-2500:])


def test_probes_and_metrics(fresh_apiserver: ServerProcess, kube: Kube, tmp_path: Path) -> None:
    health, metrics = free_port(), free_port()
    write_operator_config(
        kube,
        quiet_config(
            health={"bindAddress": f"127.0.0.1:{health}"}, metrics={"bindAddress": f"127.0.0.1:{metrics}"}
        ),
    )
    # no CRDs yet: the queueing controller's caches cannot sync, so the operator is alive but not ready
    operator = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log").start()
    try:
        wait_for(lambda: http_get(health, "/healthz")[0] == 200, what="liveness")
        # its informers have tried to list the missing kinds and failed: it is not ready
        log = operator.log
        wait_for(lambda: "informer: " in log() and "retrying" in log(), what="a failed list of a kind")
        status, body = http_get(health, "/readyz")
        assert status == 503 and "queueing" in body, body

        install_crds(kube)
        wait_for(lambda: http_get(health, "/readyz")[0] == 200, timeout=30, what="ready once synced")
        create_flavor_and_queues(kube, {NS: ("team", "2")})
        jobs = [kube.create(kinds.RAYCLUSTER, raycluster(f"rc{i}", NS)) for i in range(3)]
        wait_for(lambda: sum(_admitted(kube, j) for j in jobs) == 2, what="two of three admitted")

        def scraped() -> str:
            status, text = http_get(metrics, "/metrics")
            pending = 'codeflare_workloads{queue="team",state="pending"} 1.0' in text
            return text if status == 200 and pending else ""

        text = wait_for(scraped, what="metrics with one pending workload")
        assert 'codeflare_workloads{queue="team",state="admitted"} 2.0' in text
        assert "# TYPE codeflare_admission_latency_seconds histogram" in text
        assert metric_value(text, "codeflare_admission_latency_seconds_count") == 2
        assert 'codeflare_admission_latency_seconds_bucket{le="+Inf"} 2.0' in text
        assert metric_value(text, "codeflare_admissions_total") == 2
        # Kueue's admission-attempt metrics: one per scheduling cycle, a success among them
        attempts = metric_value(text, "kueue_admission_attempts_total")
        assert attempts >= 1
        assert metric_value(text, "kueue_admission_attempt_duration_seconds_count") == attempts
        assert re.search(r'kueue_admission_attempts_total\{replica_role="\w+",result="success"\} [1-9]', text)
        assert "# TYPE appwrapper_phase_total counter" in text
        assert http_get(health, "/metrics")[0] == 404  # metrics live on their own port
    finally:
        operator.stop()
        print(operator.log()[-3000:])
