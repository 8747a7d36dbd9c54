"""``codeflare queue list|describe``: the LocalQueues a user submits to, and what waits in them.

``list`` shows each LocalQueue with its ClusterQueue and pending/admitted counts; ``describe``
adds the ClusterQueue's quota and usage per flavor and every job still waiting in the queue, in
queue order with its position in the ClusterQueue/LocalQueue (Kueue's visibility API; "-" and the
reason when it is not served) and the scheduler's reason code and message. Read-only (admins
create queues with :mod:`codeflare.sdk.admin`).
Exit codes: 0 done, 1 the queue does not exist or the API failed (message on stderr), 2 usage.
"""

from __future__ import annotations

import argparse
from typing import Any

from codeflare.cli.output import (
    EXIT_OK,
    Column,
    action_group,
    connect,
    emit,
    emit_rows,
    guarded,
    namespace_of,
    print_fields,
    print_table,
)


def register(subparsers: Any, name: str) -> None:
    sub, parent = action_group(
        subparsers,
        name,
        __doc__,
        summary="show LocalQueues, their quota and the jobs waiting in them",
        description="LocalQueues (namespaced) point at ClusterQueues that hold the quota.",
    )
    listing = sub.add_parser("list", parents=[parent], help="LocalQueues with pending/admitted counts")
    listing.set_defaults(func=guarded(_list))
    describe = sub.add_parser("describe", parents=[parent],
                              help="one LocalQueue: quota, usage, and the queued jobs with their reasons")
    describe.add_argument("name", metavar="NAME")
    describe.set_defaults(func=guarded(_describe))


def _list(args: argparse.Namespace) -> int:
    from codeflare.sdk.cluster import list_local_queues

    with connect(args) as client:
        queues = list_local_queues(namespace_of(args, client), client)
    columns: dict[str, Column] = {"NAME": "name", "CLUSTER QUEUE": "cluster_queue",
                                  "DEFAULT": lambda q: "yes" if q["default"] else "",
                                  "PENDING": "pending", "ADMITTED": "admitted"}
    emit_rows(args, queues, columns, "no LocalQueues")
    return EXIT_OK


def quota_rows(cluster_queue: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per flavor and resource: the nominal quota (spec) and what admitted workloads use (status)."""
    if cluster_queue is None:
        return []
    used: dict[tuple[str, str], str] = {}
    for flavor in (cluster_queue.get("status") or {}).get("flavorsReservation") or []:
        for res in flavor.get("resources") or []:
            used[(str(flavor.get("name")), str(res.get("name")))] = str(res.get("total", "0"))
    rows = []
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                key = (str(flavor.get("name")), str(res.get("name")))
                rows.append({"flavor": key[0], "resource": key[1], "nominal": str(res.get("nominalQuota")),
                             "used": used.get(key, "0")})
    return rows


def position_text(queued: dict[str, Any]) -> str:
    """``3/1``: the place in the ClusterQueue and in the LocalQueue, counting from 1 (visibility API
    positions count from 0); "-" when the API could not tell."""
    in_cq, in_lq = queued.get("position_in_cluster_queue"), queued.get("position_in_local_queue")
    return "-" if in_cq is None or in_lq is None else f"{in_cq + 1}/{in_lq + 1}"


def _in_line(queued: dict[str, Any]) -> tuple[bool, int, str]:
    position = queued.get("position_in_cluster_queue")
    return position is None, position or 0, str(queued.get("name"))


def _describe(args: argparse.Namespace) -> int:
    from codeflare.kube import kinds
    from codeflare.sdk.cluster import list_all_queued, local_queue_summary

    with connect(args) as client:
        namespace = namespace_of(args, client)
        queue = client.kueue_get(kinds.LOCAL_QUEUE, args.name, namespace)
        cq_name = str((queue.get("spec") or {}).get("clusterQueue") or "")
        cq_kind = client.kueue_kind(kinds.CLUSTER_QUEUE)  # quota and usage read the same in v1beta1
        cluster_queue = client.kube.find(cq_kind, cq_name) if cq_name else None
        waiting = [w for w in list_all_queued(namespace, client) if w.get("queue") == args.name]
        default = client.default_local_queue(namespace) == args.name
    data = {
        **local_queue_summary(queue, default),
        "cluster_queue_exists": cluster_queue is not None,
        "quota": quota_rows(cluster_queue),
        "queued": waiting,
    }

    def table() -> None:
        print_fields([
            ("Name", f"{namespace}/{args.name}"),
            ("ClusterQueue", cq_name + ("" if cluster_queue is not None else " (missing)")),
            ("Default", "yes" if data["default"] else "no"),
            ("Pending", data["pending"]),
            ("Admitted", data["admitted"]),
        ])
        if data["recent_usage"] is not None:  # admission fair sharing's decayed usage of the queue
            usage = ", ".join(f"{r} {q}" for r, q in sorted(data["recent_usage"].items())) or "none"
            print_fields([("Recent usage", usage)])
        if data["quota"]:
            print_table("Quota", ("FLAVOR", "RESOURCE", "NOMINAL", "USED"),
                        ([q["flavor"], q["resource"], q["nominal"], q["used"]] for q in data["quota"]))
        if waiting:
            print_table("Queued", ("POSITION", "KIND", "NAME", "REASON", "MESSAGE"),
                        ([position_text(w), w["kind"], w["name"], w["reason_code"], w["message"]]
                         for w in sorted(waiting, key=_in_line)))
            notes = sorted({w["position_note"] for w in waiting if w["position_note"]})
            for note in notes:
                print(f"Positions unknown: {note}")
        else:
            print("Queued: none")

    emit(args, data, table)
    return EXIT_OK
