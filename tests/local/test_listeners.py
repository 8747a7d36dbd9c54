"""Every socket local mode listens on is a loopback one: the API server, the agent, every Ray process.

A RayCluster with a worker runs a job that keeps an actor on each node (so worker processes, the
driver and the job supervisor exist and have bound their ports); then every listening TCP socket
and every bound UDP socket of every process local mode started (API server, agent, each Ray node's
process group and descendants) is inspected with psutil, and any non-loopback address fails the
test, listed as ``process pid address:port``. The same test also checks that the cluster's
dashboard refuses a request without the cluster's token (Ray's token authentication) and answers
one with it.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

import psutil
import pytest

from codeflare.kube import config
from codeflare.sdk.client import Client
from codeflare.sdk.raylink import job_client_for, ray_auth_headers
from tests.local.conftest import LocalPlane
from tests.support import local_agent as la
from tests.support.polling import wait_for

pytestmark = pytest.mark.ray

HOLD_SCRIPT = """
import time
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init()
nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]

@ray.remote(num_cpus=0)
class Holder:
    def node(self):
        return ray.get_runtime_context().get_node_id()

holders = [
    Holder.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote()
    for n in nodes
]
print("holding on", len(set(ray.get([h.node.remote() for h in holders]))), "nodes", flush=True)
time.sleep(600)
"""


def listening(procs: list[psutil.Process]) -> list[tuple[str, int, str, int]]:
    """(process name, pid, ip, port) of every listening TCP and bound UDP socket of ``procs``."""
    out = []
    for proc in procs:
        try:
            name = proc.name()
            conns = proc.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        for conn in conns:
            tcp_listen = conn.type == psutil.socket.SOCK_STREAM and conn.status == psutil.CONN_LISTEN
            udp_bound = conn.type == psutil.socket.SOCK_DGRAM and not conn.raddr
            if (tcp_listen or udp_bound) and conn.laddr:
                out.append((name, proc.pid, conn.laddr.ip, conn.laddr.port))
    return out


def is_loopback(ip: str) -> bool:
    """127.0.0.0/8, ::1, or an IPv4-mapped loopback (``::ffff:127.0.0.1``, as gRPC's dual-stack
    sockets show it; Python 3.11's ``is_loopback`` says False for those)."""
    address = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


def not_loopback(sockets: list[tuple[str, int, str, int]]) -> list[str]:
    return sorted(f"{name} {pid} {ip}:{port}" for name, pid, ip, port in sockets if not is_loopback(ip))


def test_every_local_mode_socket_is_loopback_and_the_dashboard_wants_the_token(
    clean: LocalPlane, tmp_path: Path
) -> None:
    kube = clean.kube
    kube.create(la.kinds.RAYCLUSTER, la.raycluster("listen"))
    obj = clean.wait_ready("listen")
    url = la.dashboard_url(obj)
    client = Client(config.from_kubeconfig(clean.server.kubeconfig))
    try:
        jobs = job_client_for(client, url, obj)
        script = tmp_path / "hold.py"
        script.write_text(HOLD_SCRIPT)
        job = jobs.submit_job(entrypoint=f"{sys.executable} {script}")
        try:
            wait_for(
                lambda: "holding on 2 nodes" in jobs.get_job_logs(job), 120, 0.5, what="actors on both nodes"
            )
            procs = la.cluster_processes(kube, "listen")
            for child in (clean.server.proc, clean.agent.proc):
                assert child is not None
                procs += la.process_tree([child.pid])
            sockets = sorted(set(listening(list({p.pid: p for p in procs}.values()))))
            print(f"{len(sockets)} sockets of {len(procs)} processes:")
            for name, pid, ip, port in sockets:
                print(f"  {name} {pid} {ip}:{port}")
            # the Ray processes really are among them: gcs, raylets, dashboard, agents, workers
            names = {name for name, *_ in sockets}
            assert {"gcs_server", "raylet"} <= names, names
            offending = not_loopback(sockets)
            assert offending == [], "non-loopback listeners:\n" + "\n".join(offending)

            assert not la.http_ok(f"{url}/api/version"), "the dashboard answered without the token"
            headers = ray_auth_headers(client, obj)
            assert headers, "no token for the cluster"
            assert http_ok_with(f"{url}/api/version", headers)
        finally:
            jobs.stop_job(job)
    finally:
        client.close()


def http_ok_with(url: str, headers: dict[str, str]) -> bool:
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers=headers), timeout=5) as response:
        return bool(response.status == 200)
