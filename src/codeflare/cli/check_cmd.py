"""``codeflare cluster check`` / ``codeflare job check``: would it be admitted, when, or never?

They take the same arguments as ``cluster up`` and ``job submit``, build the same object, and ask
the operator (the SDK's ``check()``) without creating anything. The answer is printed in words
with the numbers (``-o json``/``yaml``: the fields). Exit codes: 0 it would be admitted now or
would wait (it fits the queue's quota at some point); 2 it can never be admitted as described
(the message gives what it needs and the most the queue can give), or a refused option; 1 the
check itself failed (no operator serving it, an API error).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from codeflare.cli.output import (
    EXIT_OK,
    EXIT_USAGE,
    add_wait_options,
    connect,
    emit,
    guarded,
    namespace_of,
    say,
)

ANSWERS = "admitted now, wait (position, estimated start) or never fit (exit 2)"
DURATION_HELP = "expected run time in seconds (for the estimate of what comes after it)"


def register_cluster(sub: Any, parent: argparse.ArgumentParser) -> None:
    """``cluster check NAME`` with ``cluster up``'s options."""
    from codeflare.cli.cluster_cmd import add_size_options

    text = "Ask the operator whether `cluster up` with these options would be " + ANSWERS + "."
    check = sub.add_parser("check", parents=[parent], help="would it be admitted? (creates nothing)",
                           description=text)  # fmt: skip
    check.add_argument("name", metavar="NAME")
    add_size_options(check)
    check.add_argument("--appwrapper", action="store_true", help="as wrapped in an AppWrapper")
    check.add_argument("--duration", type=float, help=DURATION_HELP)
    check.set_defaults(func=guarded(_cluster_check))


def register_job(sub: Any, parent: argparse.ArgumentParser) -> None:
    """``job check NAME`` with ``job submit``'s options."""
    from codeflare.cli.cluster_cmd import add_size_options

    text = "Ask the operator whether `job submit` with these options would be " + ANSWERS + "."
    check = sub.add_parser("check", parents=[parent], help="would this job be admitted? (creates nothing)",
                           description=text)  # fmt: skip
    check.add_argument("name", metavar="NAME")
    check.add_argument("--entrypoint", required=True, help="the command it would run")
    target = check.add_mutually_exclusive_group(required=True)
    target.add_argument("--cluster", help="run on this existing Ray cluster (then nothing is queued)")
    add_size_options(check, workers_in=target)
    check.add_argument("--working-dir", type=Path, help="accepted as `job submit` takes it (not sent)")
    add_wait_options(check, "(accepted as `job submit` takes it; a check never waits)", 0)
    check.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    check.add_argument("--duration", type=float, help=DURATION_HELP)
    check.set_defaults(func=guarded(_job_check))


def _report(args: argparse.Namespace, result: Any) -> int:
    data = {
        "verdict": result.verdict,
        "message": result.message,
        "clusterQueue": result.cluster_queue,
        "flavors": result.flavors,
        "position": result.position,
        "estimatedStart": result.estimated_start,
        "behind": list(result.behind),
        "preempts": list(result.preempts),
        "limits": list(result.limits),
    }
    emit(args, data, lambda: say(args, result.message))
    return EXIT_OK if result.ever else EXIT_USAGE


def _cluster_check(args: argparse.Namespace) -> int:
    from codeflare.cli.cluster_cmd import configuration
    from codeflare.sdk.cluster import Cluster

    with connect(args) as client:
        namespace = namespace_of(args, client)
        config = configuration(args.name, args, namespace, appwrapper=args.appwrapper)
        return _report(args, Cluster(config, client).check(args.duration))


def _job_check(args: argparse.Namespace) -> int:
    from codeflare.cli.cluster_cmd import configuration
    from codeflare.sdk.job import RayJob

    with connect(args) as client:
        namespace = namespace_of(args, client)
        if args.cluster:
            job = RayJob(args.name, args.entrypoint, cluster_name=args.cluster, namespace=namespace,
                         local_queue=args.queue, client=client)  # fmt: skip
        else:
            config = configuration(f"{args.name}-cluster", args, namespace)
            job = RayJob(args.name, args.entrypoint, cluster_config=config, namespace=namespace,
                         local_queue=args.queue, client=client)  # fmt: skip
        return _report(args, job.check(args.duration))
