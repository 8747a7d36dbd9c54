"""The real codeflare-sdk 0.40.1 against our API: its CA Secret lookup, and its Kueue calls.

codeflare-sdk's ``Cluster.apply()`` and ``wait_ready()`` call
``generate_cert.generate_tls_cert(name, namespace)``, which lists the Secrets labelled
``ray.openshift.ai/cluster-name=<name>``, takes the one whose name contains ``<name>-ca-secret-``
and reads ``ca.crt`` and ``tls.key`` or ``ca.key`` (codeflare-sdk v0.40.1,
src/codeflare_sdk/common/utils/generate_cert.py, get_secret_name and generate_tls_cert). Here the
operator makes the CA Secret for a RayCluster on our API server, and codeflare-sdk, installed
from the package registry in a virtualenv of its own (it pins ray==2.58.0 and other versions
that differ from ours), runs with a kubeconfig pointing at that server. Its certificate must
chain to the CA in the Secret. Slow on first run (the install takes about 3 minutes and ~1 GB:
the venv is kept, by default under ``~/.cache/codeflare-tests``, or where
``CODEFLARE_SDK_VENV`` says); marked ``ray`` like the other slow tests. Where the package cannot
be installed the test is unavailable (a failure under CI).

codeflare-sdk 0.40.1 reads Kueue at v1beta1 only (``list_local_queues`` lists
``kueue.x-k8s.io/v1beta1`` LocalQueues; ``list_all_queued`` lists v1beta1 Workloads and keeps the
RayClusters whose Workload has no admission). Our API stores v1beta2 and converts through the
operator's webhook, so the second test runs both calls against a real operator with a queued
RayCluster, in the same venv.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509

from codeflare.api.mtls import ca_secret_name
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.sdk import (
    Client,
    FlavorQuota,
    create_cluster_queue,
    create_local_queue,
    create_resource_flavor,
)
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator, ensure_namespace, wait_for
from tests.support.environment import unavailable

pytestmark = pytest.mark.ray

CODEFLARE_SDK = "codeflare-sdk==0.40.1"
QUIET = {"queueing": {"enabled": False}, "appwrapper": {"enabled": False}}
MINT = """
import json, os, sys
from codeflare_sdk.common.utils import generate_cert
generate_cert.generate_tls_cert(sys.argv[1], sys.argv[2])
generate_cert.export_env(sys.argv[1], sys.argv[2])
print(json.dumps({k: v for k, v in os.environ.items() if k.startswith("RAY_")}))
"""


KUEUE_CALLS = """
import json, sys
from codeflare_sdk.common.kueue.kueue import list_local_queues
from codeflare_sdk.ray.cluster.cluster import list_all_queued
queues = list_local_queues(sys.argv[1])
queued = [c.name for c in list_all_queued(sys.argv[1], print_to_console=False)]
print(json.dumps({"queues": queues, "queued": queued}))
"""


def codeflare_sdk_python() -> Path:
    """The interpreter of a venv with codeflare-sdk 0.40.1, installed from the registry if missing."""
    default = Path.home() / ".cache" / "codeflare-tests" / "codeflare-sdk-0.40.1"
    venv = Path(os.environ.get("CODEFLARE_SDK_VENV", default))
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import importlib.metadata as m; print(m.version('codeflare-sdk'))"]
    installed = python.exists() and subprocess.run(check, capture_output=True, text=True).stdout.strip()
    if installed == "0.40.1":
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=99)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", CODEFLARE_SDK],
            check=True,
            capture_output=True,
            text=True,
            timeout=1200,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        output = getattr(exc, "stderr", "") or getattr(exc, "output", "") or ""
        unavailable(f"cannot install {CODEFLARE_SDK} into {venv}: {exc}\n{str(output)[-2000:]}")
    return python


def raycluster(name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.60.0",
        "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {
            "suspend": True,
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
        },
    }


def test_codeflare_sdk_generate_tls_cert_finds_our_ca_secret(
    fresh_apiserver: ServerProcess, tmp_path: Path
) -> None:
    python = codeflare_sdk_python()
    operator = ThreadedOperator(fresh_apiserver, QUIET).start()  # mTLSEnabled is on by default
    try:
        with Kube(operator.connection) as kube:
            ensure_namespace(kube, "team")
            kube.create(kinds.RAYCLUSTER, raycluster("demo", "team"))
            secret = wait_for(
                lambda: kube.find(kinds.SECRET, ca_secret_name("demo"), "team"), what="CA Secret"
            )
    finally:
        operator.stop()

    tls_dir = tmp_path / "tls"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "KUBECONFIG": str(fresh_apiserver.kubeconfig),
        "CODEFLARE_TLS_DIR": str(tls_dir),
    }
    run = subprocess.run(
        [str(python), "-c", MINT, "demo", "team"], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    ray_env = json.loads(run.stdout.strip().splitlines()[-1])
    assert ray_env["RAY_USE_TLS"] == "1"

    assert secret is not None
    written = Path(ray_env["RAY_TLS_SERVER_CERT"]).parent
    assert written.is_relative_to(tls_dir)
    ca = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
    assert (written / "ca.crt").read_bytes() == base64.b64decode(secret["data"]["ca.crt"])
    leaf = x509.load_pem_x509_certificate((written / "tls.crt").read_bytes())
    leaf.verify_directly_issued_by(ca)


def sdk_env(server: ServerProcess, home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(server.kubeconfig)}


def test_codeflare_sdk_lists_local_queues_and_queued_clusters_through_v1beta1(
    fresh_apiserver: ServerProcess, tmp_path: Path
) -> None:
    python = codeflare_sdk_python()
    config = {"appwrapper": {"enabled": False}, "queueing": {"capacityCheck": False}}
    operator = ThreadedOperator(fresh_apiserver, {**config, "kuberay": {"mTLSEnabled": False}}).start()
    try:
        with Client.default(fresh_apiserver.kubeconfig) as client:
            ensure_namespace(client.kube, "team")
            create_resource_flavor("compat-rf", client=client)
            # no CPU quota: a cluster asking for CPU stays queued
            create_cluster_queue("compat-cq", [FlavorQuota("compat-rf", {"cpu": 0})], client=client)
            # neither is the default queue: "plain" stays out of Kueue
            create_local_queue("compat-lq", "compat-cq", "team", client=client)
            create_local_queue("compat-other", "compat-cq", "team", client=client)
            labels = {"kueue.x-k8s.io/queue-name": "compat-lq"}
            client.kube.create(kinds.RAYCLUSTER, raycluster("queued", "team", labels))
            client.kube.create(kinds.RAYCLUSTER, raycluster("plain", "team"))
            wait_for(lambda: client.kueue_list(kinds.WORKLOAD, "team"), what="the queued cluster's Workload")
        run = subprocess.run(
            [str(python), "-c", KUEUE_CALLS, "team"],
            env=sdk_env(fresh_apiserver, tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        operator.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert sorted(q["name"] for q in answer["queues"]) == ["compat-lq", "compat-other"]
    assert answer["queued"] == ["queued"]
