"""Ray's own autoscaler in local mode, with real Ray processes and the real API server.

A RayCluster with ``enableInTreeAutoscaling: true`` (min 1 / max 3 workers, idle timeout 5 s)
gets Ray's KubeRay autoscaler beside its head. A job whose three tasks must run at the same time
(a barrier; each needs one ``slot``, a resource only workers have) makes the autoscaler raise
``replicas`` to 3; once the job ends and the workers idle, it lowers them back to 1, naming the
workers to delete, and exactly those go. The autoscaler's ServiceAccount may patch its own
RayCluster only. Scale-up and scale-down times are printed (``-s``) for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import config, errors, kinds
from codeflare.kube.client import Kube
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.polling import wait_for

pytestmark = pytest.mark.ray

IDLE_TIMEOUT_S = 5
SCALE_TIMEOUT = 240.0

BARRIER_JOB = """
import sys
import time
import ray

ray.init()

@ray.remote(num_cpus=0)
class Barrier:
    def __init__(self):
        self.arrived = 0
    def arrive(self):
        self.arrived += 1
    def count(self):
        return self.arrived

@ray.remote(num_cpus=0, resources={"slot": 1})
def hold(barrier):
    ray.get(barrier.arrive.remote())
    deadline = time.time() + 300
    while ray.get(barrier.count.remote()) < TASKS and time.time() < deadline:
        time.sleep(0.5)
    return ray.get_runtime_context().get_node_id()

TASKS = int(sys.argv[1])
barrier = Barrier.remote()
nodes = ray.get([hold.remote(barrier) for _ in range(TASKS)])
print(f"ran on {len(set(nodes))} workers")
"""


def autoscaled(name: str, *, queue: str | None = None) -> dict[str, Any]:
    """A cluster as the SDK builds one with enable_autoscaling: workers 1..3 of one ``slot`` each."""
    rc = la.raycluster(name, workers=1, queue=queue, memory="600Mi")
    spec = rc["spec"]
    spec["enableInTreeAutoscaling"] = True
    spec["autoscalerOptions"] = {"upscalingMode": "Default", "idleTimeoutSeconds": IDLE_TIMEOUT_S}
    group = spec["workerGroupSpecs"][0]
    group.update(minReplicas=1, maxReplicas=3)
    # KubeRay's format (an extra pair of quotes), the one Ray's autoscaler parses
    group["rayStartParams"] = {"resources": '"{\\"slot\\": 1}"'}
    return rc


def worker_pods(kube: Kube, name: str, phase: str = "Running") -> list[str]:
    pods = kube.list(kinds.POD, "default", labels={"ray.io/cluster": name, "ray.io/node-type": "worker"})
    return sorted(p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") == phase)


def replicas(kube: Kube, name: str) -> int:
    return int(kube.get(kinds.RAYCLUSTER, name, "default")["spec"]["workerGroupSpecs"][0]["replicas"])


def submit(kube: Kube, name: str, tmp_path: Path, tasks: int = 3) -> tuple[Any, str]:
    """Submit the barrier job: ``tasks`` tasks of one ``slot`` each that must all run at once."""
    from ray.job_submission import JobSubmissionClient

    obj = kube.get(kinds.RAYCLUSTER, name, "default")
    client = JobSubmissionClient(la.dashboard_url(obj), headers=la.ray_headers(kube, name))
    script = tmp_path / "barrier.py"
    script.write_text(BARRIER_JOB)
    return client, client.submit_job(entrypoint=f"{sys.executable} {script} {tasks}")


def test_ray_autoscaler_scales_up_for_three_tasks_and_back_to_min_when_idle(
    clean: LocalPlane, tmp_path: Path
) -> None:
    from ray.job_submission import JobStatus

    kube = clean.kube
    kube.create(kinds.RAYCLUSTER, autoscaled("elastic"))
    clean.wait_ready("elastic")
    assert worker_pods(kube, "elastic") == ["elastic-small-worker-0"]

    client, job = submit(kube, "elastic", tmp_path)
    submitted = time.monotonic()
    clean.wait(lambda: replicas(kube, "elastic") == 3 or None, SCALE_TIMEOUT, "the autoscaler to ask for 3")
    asked = time.monotonic()
    clean.wait(lambda: len(worker_pods(kube, "elastic")) == 3 or None, SCALE_TIMEOUT, "3 worker pods")
    clean.wait(lambda: la.is_ready(kube, "elastic"), SCALE_TIMEOUT, "3 workers ready")
    scaled_up = time.monotonic()
    clean.seen.extend(la.cluster_processes(kube, "elastic"))

    final = clean.wait(lambda: (s := client.get_job_status(job)).is_terminal() and s, SCALE_TIMEOUT, "end")
    logs = client.get_job_logs(job)
    assert final == JobStatus.SUCCEEDED, logs
    assert "ran on 3 workers" in logs
    ended = time.monotonic()

    named: set[str] = set()

    def scaled_back() -> bool | None:
        obj = kube.get(kinds.RAYCLUSTER, "elastic", "default")
        group = obj["spec"]["workerGroupSpecs"][0]
        named.update((group.get("scaleStrategy") or {}).get("workersToDelete") or [])
        return (group["replicas"] == 1 and len(worker_pods(kube, "elastic")) == 1) or None

    clean.wait(scaled_back, SCALE_TIMEOUT, "the autoscaler to scale back to 1")
    scaled_down = time.monotonic()
    remaining = worker_pods(kube, "elastic")
    assert len(named) == 2, named  # the autoscaler named the two workers it removed...
    assert not named & set(remaining)  # ...and exactly those went
    print(
        f"\nautoscaling: replicas 1->3 asked {asked - submitted:.1f}s after submit, 3 workers ready "
        f"{scaled_up - submitted:.1f}s after submit; back to 1 worker {scaled_down - ended:.1f}s after "
        f"the job ended (idleTimeoutSeconds {IDLE_TIMEOUT_S})"
    )


def test_the_autoscaler_identity_may_patch_its_own_cluster_only(clean: LocalPlane, tmp_path: Path) -> None:
    from codeflare.kube.tokens import request_token

    kube = clean.kube
    kube.create(kinds.RAYCLUSTER, autoscaled("scaled"))
    kube.create(kinds.RAYCLUSTER, la.raycluster("other", workers=0, suspend=True))
    role = clean.wait(
        lambda: kube.find(kinds.Kind("rbac.authorization.k8s.io", "v1", "Role", "roles"), "scaled-autoscaler",
                          "default"),
        SCALE_TIMEOUT,
        "the autoscaler's Role",
    )
    assert role["rules"][0]["resourceNames"] == ["scaled"]
    token = request_token(kube.connection, "default", "scaled")
    server = clean.server
    with Kube(config.from_token(server.url, token, ca_file=server.ca_file)) as as_autoscaler:
        body = {"spec": {"workerGroupSpecs": [{"groupName": "small", "replicas": 1}]}}
        assert as_autoscaler.get(kinds.RAYCLUSTER, "scaled", "default")["metadata"]["name"] == "scaled"
        assert as_autoscaler.list(kinds.POD, "default", labels={"ray.io/cluster": "scaled"}) is not None
        with pytest.raises(errors.Forbidden):
            as_autoscaler.patch(kinds.RAYCLUSTER, "other", body, "default")
        with pytest.raises(errors.Forbidden):
            as_autoscaler.delete(kinds.RAYCLUSTER, "scaled", "default")
    wait_for(lambda: la.is_ready(kube, "scaled"), SCALE_TIMEOUT, 0.5, what="scaled ready")
    clean.seen.extend(la.cluster_processes(kube, "scaled"))
