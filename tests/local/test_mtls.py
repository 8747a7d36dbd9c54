"""mTLS in local mode, when enabled: real Ray nodes speak mutual TLS with certificates of the cluster CA.

The operator runs with ``mTLSEnabled`` (local mode's default is off: see README): it creates the
cluster's CA Secret and its webhook writes Ray's TLS variables into the pod templates. The agent
then gives each Ray node a certificate signed by that CA (in the node's temp dir) and sets
``RAY_USE_TLS`` and the file paths itself. A Ray job (its driver uses the node's certificate) runs
a task on both nodes, and a driver outside the cluster connects with ``ray.init`` using the client
certificate and token from the SDK's :func:`~codeflare.sdk.raylink.driver_env`.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from cryptography import x509

from codeflare.api.mtls import ca_secret_name
from codeflare.kube import config, kinds
from codeflare.sdk.client import Client
from codeflare.sdk.raylink import driver_env, job_client_for
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.apiserver import free_port
from tests.support.control_plane import OperatorProcess, quiet_config, write_operator_config
from tests.support.polling import wait_for

pytestmark = pytest.mark.ray

MTLS_ON = {
    "queueing": {"enabled": False},
    "appwrapper": {"enabled": False},
    "kuberay": {"mTLSEnabled": True, "rayDashboardOAuthEnabled": False},
}

BOTH_NODES = """
import ray
ray.init(address="{address}")
@ray.remote(num_cpus=1)
def where():
    return ray.get_runtime_context().get_node_id()
nodes = {{n["NodeID"] for n in ray.nodes() if n["Alive"]}}
ran = set(ray.get([where.remote() for _ in range(8)]))
print("alive", len(nodes), "tls", __import__("os").environ.get("RAY_USE_TLS"), flush=True)
"""


def test_a_job_and_an_outside_driver_run_over_mutual_tls(clean: LocalPlane, tmp_path: Path) -> None:
    kube = clean.kube
    health = free_port()
    write_operator_config(kube, quiet_config(health={"bindAddress": f"127.0.0.1:{health}"}, **MTLS_ON))
    operator = OperatorProcess(clean.server.kubeconfig, tmp_path / "operator.log").start()
    client = Client(config.from_kubeconfig(clean.server.kubeconfig))
    try:
        # /readyz answers 200 only once its webhooks and caches are ready
        wait_for(lambda: la.http_ok(f"http://127.0.0.1:{health}/readyz"), 60, 0.2, what="the operator ready")
        kube.create(kinds.RAYCLUSTER, la.raycluster("secure"))
        obj = clean.wait_ready("secure", timeout=360)  # TLS start-up is slower; this host is loaded
        head_env = obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0].get("env") or []
        assert {"name": "RAY_USE_TLS", "value": "1"} in head_env  # the webhook asked for TLS

        # every node runs with TLS on, with its own certificate chained to the cluster CA
        secret = kube.get(kinds.SECRET, ca_secret_name("secure"), "default")
        ca = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
        leaders = [psutil.Process(pid) for pid in la.pod_pids(kube, "secure")]
        assert len(leaders) == 2
        for leader in leaders:
            env = leader.environ()
            assert env["RAY_USE_TLS"] == "1"
            cert = Path(env["RAY_TLS_SERVER_CERT"])
            assert "/home/ray" not in str(cert)  # not the container path the template named
            x509.load_pem_x509_certificate(cert.read_bytes()).verify_directly_issued_by(ca)

        # a job: its driver inherits the node's TLS identity
        jobs = job_client_for(client, la.dashboard_url(obj), obj)
        script = tmp_path / "both.py"
        script.write_text(BOTH_NODES.format(address="auto"))
        job = jobs.submit_job(entrypoint=f"{sys.executable} {script}")
        wait_for(lambda: jobs.get_job_status(job).is_terminal(), 180, 0.5, what="the job to end")
        logs = jobs.get_job_logs(job)
        assert "alive 2 tls 1" in logs, logs

        # a driver of ours, outside the cluster: client certificate and token from the SDK
        gcs = f"127.0.0.1:{obj['status']['endpoints']['gcs-server']}"
        env = {**os.environ, **driver_env(client, obj, str(tmp_path / "client-tls"))}
        env.pop("RAY_ADDRESS", None)
        assert env["RAY_USE_TLS"] == "1" and env["RAY_AUTH_MODE"] == "token"
        outside = tmp_path / "outside.py"
        outside.write_text(BOTH_NODES.format(address=gcs))
        run = subprocess.run(
            [sys.executable, str(outside)], env=env, capture_output=True, text=True, timeout=180
        )
        assert run.returncode == 0 and "alive 2 tls 1" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    finally:
        client.close()
        operator.stop()

