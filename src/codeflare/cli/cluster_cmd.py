"""``codeflare cluster up|down|list|status|wait``: Ray clusters from the command line, via the SDK.

Exit codes: 0 done; 1 the system reported a failure (missing cluster, API error, failed cluster;
the server's message on stderr); 2 a refused option or configuration (the message names the
field); 3 a wait timed out. ``status`` exits 0 whenever it could read the cluster, whatever its
state (the state is in the output); to block until a cluster is ready use ``wait``, which exits 0
only once it is ready and its dashboard answers.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from codeflare.cli.output import (
    EXIT_OK,
    action_group,
    add_wait_options,
    connect,
    emit,
    emit_rows,
    guarded,
    namespace_of,
    print_fields,
    say,
)

if TYPE_CHECKING:
    from codeflare.sdk.client import Client
    from codeflare.sdk.cluster import Cluster

# CLI flag -> ClusterConfiguration fields it sets (both requests and limits)
SIZE_FLAGS = {
    "head_cpu": ("head_cpu_requests", "head_cpu_limits"),
    "head_memory": ("head_memory_requests", "head_memory_limits"),
    "worker_cpu": ("worker_cpu_requests", "worker_cpu_limits"),
    "worker_memory": ("worker_memory_requests", "worker_memory_limits"),
}


def add_size_options(parser: argparse.ArgumentParser, workers_in: Any = None) -> None:
    """The cluster shape options (``cluster up`` and ``job submit --workers``); ``--workers`` goes
    into ``workers_in`` when given (a mutually exclusive group)."""
    group = parser.add_argument_group("cluster shape (defaults: ClusterConfiguration's)")
    (workers_in or group).add_argument("--workers", type=int, help="number of Ray workers (default 1)")
    group.add_argument("--worker-cpu", help="CPUs per worker, e.g. 1 or 500m")
    group.add_argument("--worker-memory", help="memory per worker, e.g. 2Gi")
    group.add_argument("--head-cpu", help="CPUs of the head")
    group.add_argument("--head-memory", help="memory of the head, e.g. 4Gi")
    group.add_argument("--gpus", type=int, help="nvidia.com/gpu per worker")
    group.add_argument("--queue", help="LocalQueue to queue in (default: the namespace's default queue)")


def configuration(name: str, args: argparse.Namespace, namespace: str, *, appwrapper: bool = False) -> Any:
    """A validated ClusterConfiguration from the shape options (ConfigurationError names the fields)."""
    from codeflare.sdk.config import ClusterConfiguration

    kwargs: dict[str, Any] = {"namespace": namespace, "appwrapper": appwrapper}
    if args.workers is not None:
        kwargs["num_workers"] = args.workers
    for flag, fields in SIZE_FLAGS.items():
        value = getattr(args, flag)
        if value is not None:
            kwargs.update(dict.fromkeys(fields, value))
    if args.gpus:
        kwargs["worker_extended_resource_requests"] = {"nvidia.com/gpu": args.gpus}
    if args.queue:
        kwargs["local_queue"] = args.queue
    return ClusterConfiguration(name, **kwargs)


def register(subparsers: Any, name: str) -> None:
    sub, parent = action_group(
        subparsers,
        name,
        __doc__,
        summary="create, inspect, wait for and delete Ray clusters",
        description="Ray clusters: queued behind quota when the namespace has a LocalQueue.",
    )

    up = sub.add_parser("up", parents=[parent], help="create or update a cluster (idempotent)",
                        description="Create or update a Ray cluster (server-side apply: running it "
                        "twice changes nothing; a changed --workers scales).")
    up.add_argument("name", metavar="NAME")
    add_size_options(up)
    up.add_argument("--appwrapper", action="store_true", help="wrap the RayCluster in an AppWrapper")
    add_wait_options(up, "the cluster is ready", 600)
    up.set_defaults(func=guarded(_up))

    down = sub.add_parser("down", parents=[parent], help="delete a cluster and everything it owns")
    down.add_argument("name", metavar="NAME")
    add_wait_options(down, "it is gone", 120)
    down.set_defaults(func=guarded(_down))

    listing = sub.add_parser("list", parents=[parent], help="list the clusters of a namespace")
    listing.set_defaults(func=guarded(_list))

    status = sub.add_parser("status", parents=[parent], help="one cluster's state (and why it is queued)",
                            description="Show a cluster's state; exits 0 whenever the cluster could be "
                            "read (use `wait` to block until it is ready).")
    status.add_argument("name", metavar="NAME")
    status.set_defaults(func=guarded(_status))

    wait = sub.add_parser("wait", parents=[parent], help="wait until a cluster is ready (exit 3 on timeout)")
    wait.add_argument("name", metavar="NAME")
    wait.add_argument("--timeout", type=float, default=600, help="seconds to wait (default 600)")
    wait.set_defaults(func=guarded(_wait))

    from codeflare.cli import check_cmd  # `check`: the same options, nothing created

    check_cmd.register_cluster(sub, parent)


def existing(client: Client, name: str, namespace: str) -> Cluster:
    """The Cluster object for ``name``: its AppWrapper when it is wrapped, else its RayCluster."""
    from codeflare.kube import errors, kinds
    from codeflare.sdk.cluster import Cluster, get_cluster
    from codeflare.sdk.config import ClusterConfiguration

    try:
        wrapped = client.kube.find(kinds.APPWRAPPER, name, namespace)
    except errors.NotFound:  # no AppWrapper CRD installed
        wrapped = None
    if wrapped is not None:
        config = ClusterConfiguration(name, namespace=namespace, appwrapper=True, suspend_when_queued=False)
        return Cluster(config, client)
    return get_cluster(name, namespace, client)


def _up(args: argparse.Namespace) -> int:
    from codeflare.sdk.cluster import Cluster

    with connect(args) as client:
        namespace = namespace_of(args, client)
        config = configuration(args.name, args, namespace, appwrapper=args.appwrapper)
        cluster = Cluster(config, client)
        cluster.apply()
        if args.wait:
            cluster.wait_ready(timeout=args.timeout, progress=args.output == "table")
        summary = _summary(cluster)
        emit(args, summary, lambda: say(args, _one_line(summary)))
    return EXIT_OK


def _down(args: argparse.Namespace) -> int:
    from codeflare.errors import WaitTimeout
    from codeflare.kube import kinds

    with connect(args) as client:
        namespace = namespace_of(args, client)
        cluster = existing(client, args.name, namespace)
        cluster.down()
        if args.wait:
            deadline = time.monotonic() + args.timeout
            while client.kube.find(kinds.RAYCLUSTER, args.name, namespace) is not None:
                if time.monotonic() > deadline:
                    what = f"RayCluster {namespace}/{args.name}"
                    raise WaitTimeout(f"{what} still exists after {args.timeout}s")
                time.sleep(0.5)
        data = {"name": args.name, "namespace": namespace, "deleted": True}
        emit(args, data, lambda: say(args, f"deleted cluster {namespace}/{args.name}"))
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from codeflare.sdk.cluster import list_all_clusters

    with connect(args) as client:
        infos = list_all_clusters(namespace_of(args, client), client)
    rows = [
        {
            "name": i.name,
            "namespace": i.namespace,
            "status": _state_word(i.status.value, i.local_queue),
            "workers": i.workers,
            "worker_cpus": i.worker_cpus,
            "worker_memory": i.worker_memory,
            "worker_gpus": i.worker_gpus,
            "head_cpus": i.head_cpus,
            "head_memory": i.head_memory,
            "queue": i.local_queue,
            "dashboard": i.dashboard,
        }
        for i in infos
    ]
    columns = {"NAME": "name", "STATUS": "status", "WORKERS": "workers", "WORKER CPU": "worker_cpus",
               "WORKER MEM": "worker_memory", "GPUS": "worker_gpus", "HEAD CPU": "head_cpus",
               "HEAD MEM": "head_memory", "QUEUE": "queue", "DASHBOARD": "dashboard"}
    emit_rows(args, rows, columns, "no clusters")
    return EXIT_OK


def _state_word(ray_state: str, queue: str | None) -> str:
    return "queued" if ray_state == "suspended" and queue else ray_state


def _reason(cluster: Cluster) -> str | None:
    """``why_pending()`` as plain text (yaml does not take its str subclass)."""
    reason = cluster.why_pending()
    return str(reason) if reason else None


def _summary(cluster: Cluster) -> dict[str, Any]:
    from codeflare.sdk.status import CodeFlareClusterStatus

    state = cluster.status()
    return {
        "name": cluster.name,
        "namespace": cluster.namespace,
        "kind": "AppWrapper" if cluster.config.appwrapper else "RayCluster",
        "status": state.name.lower(),
        "reason": _reason(cluster) if state == CodeFlareClusterStatus.QUEUED else None,
        "queue": cluster.config.local_queue,
        "workers": cluster.config.num_workers,
        "dashboard": cluster.cluster_dashboard_uri() if state == CodeFlareClusterStatus.READY else None,
    }


def _one_line(summary: dict[str, Any]) -> str:
    text = f"{summary['kind']} {summary['namespace']}/{summary['name']}: {summary['status']}"
    if summary["reason"]:
        text += f" ({summary['reason']})"
    if summary["dashboard"]:
        text += f", dashboard {summary['dashboard']}"
    return text


def _status(args: argparse.Namespace) -> int:
    with connect(args) as client:
        summary = _summary(existing(client, args.name, namespace_of(args, client)))
    emit(args, summary, lambda: print_fields((key.capitalize(), value) for key, value in summary.items()))
    return EXIT_OK


def _wait(args: argparse.Namespace) -> int:
    with connect(args) as client:
        cluster = existing(client, args.name, namespace_of(args, client))
        cluster.wait_ready(timeout=args.timeout, progress=args.output == "table")
        summary = _summary(cluster)
    emit(args, summary, lambda: say(args, _one_line(summary)))
    return EXIT_OK
