"""``ray start`` for a node that keeps 127.0.0.1 as its address, so every Ray server binds loopback.

Ray binds its C++ gRPC servers (GCS, raylet, object manager, every worker) to loopback only when
the node's address is exactly ``127.0.0.1``, and its Python servers (agents, dashboard metrics,
autoscaler metrics) likewise; on a Linux host, though, ``ray start`` rewrites a loopback
``--node-ip-address`` or ``--address`` to the host's external address
(``services.resolve_ip_for_localhost``), and with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which
stops the rewrite, it refuses to start a worker node. This entry point runs Ray's own ``ray``
command with two changes made in its process only (:func:`keep_loopback`): a loopback address is
kept as given, and a worker node may join. Its children read ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
(set by :mod:`ray_node`), so workers, agents and drivers started by the node keep loopback too.
Nothing else of Ray is changed; with a non-loopback address it behaves as ``ray`` does.
"""

from __future__ import annotations

import sys


def keep_loopback() -> None:
    """In this process, make Ray keep a loopback address as given and let a node join a cluster
    on the same host (Ray internals: ``services.resolve_ip_for_localhost``, ``ENABLE_RAY_CLUSTER``)."""
    from ray._common.network_utils import is_localhost
    from ray._private import ray_constants, services

    resolve = services.resolve_ip_for_localhost

    def kept(host: str) -> str:
        return host if host and is_localhost(host) else resolve(host)

    services.resolve_ip_for_localhost = kept
    ray_constants.ENABLE_RAY_CLUSTER = True  # several nodes on one host are what local mode runs


def main(argv: list[str] | None = None) -> int:
    from ray.scripts import scripts

    keep_loopback()
    sys.argv = ["ray", *(sys.argv[1:] if argv is None else argv)]
    scripts.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
