"""Ray's own KubeRay autoscaler (``run_kuberay_autoscaler``), run beside a local cluster's head.

On Kubernetes, KubeRay runs this autoscaler as the head pod's sidecar: it reads the RayCluster and
its Pods through the API server and patches ``workerGroupSpecs[].replicas`` and
``scaleStrategy.workersToDelete``. Here the node agent starts it as a process of its own, against
the local API server, and this entry point changes, in its own process only, the few Ray internals
that assume a pod (documented as touching Ray internals, as :mod:`ray_launch` does):

- the ServiceAccount token is read from ``--token-file`` instead of the fixed in-pod path
  (``node_provider.IN_CLUSTER_TOKEN_PATH``); the API server's address and CA come from the
  variables Ray itself honours (``KUBERNETES_SERVICE_HOST``, ``KUBERNETES_SERVICE_PORT_HTTPS``,
  ``RAY_KUBERAY_CA_CERT_PATH``), set by :mod:`autoscaler`;
- the monitor's own address is 127.0.0.1 (``get_node_ip_address`` would pick the host's external
  one), a loopback GCS address is kept (:func:`ray_launch.keep_loopback`), and the ``ray
  health-check`` it runs goes through :mod:`ray_launch` for the same reason.

Everything else (the autoscaling decisions, idle timeouts, the patches) is Ray's code unchanged.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from codeflare.local.agent.ray_launch import keep_loopback
from codeflare.local.agent.ray_node import LOOPBACK, ray_command


def _health_check_via_launcher(argv: Sequence[str], **kwargs: Any) -> int:
    """``subprocess.check_call`` for the autoscaler's ``ray health-check``: our ``ray`` keeps loopback."""
    command = list(argv)
    if command and command[0] == "ray":
        command = [*ray_command(), *command[1:]]
    return subprocess.check_call(command, **kwargs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="codeflare-local-autoscaler")
    parser.add_argument("--cluster", required=True, help="the RayCluster's name")
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--gcs-address", required=True, help="the head's GCS host:port")
    parser.add_argument("--token-file", required=True, help="the ServiceAccount token to authenticate with")
    args = parser.parse_args(argv)

    keep_loopback()
    from ray.autoscaler._private.kuberay import node_provider, run_autoscaler

    node_provider.IN_CLUSTER_TOKEN_PATH = args.token_file
    run_autoscaler.get_node_ip_address = lambda *_a, **_k: LOOPBACK
    run_autoscaler.subprocess = SimpleNamespace(  # type: ignore[assignment]
        check_call=_health_check_via_launcher, CalledProcessError=subprocess.CalledProcessError
    )
    run_autoscaler.run_kuberay_autoscaler(args.cluster, args.namespace, args.gcs_address)
    return 0


if __name__ == "__main__":
    sys.exit(main())
