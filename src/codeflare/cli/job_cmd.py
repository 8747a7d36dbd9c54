"""``codeflare job submit|status|logs|stop|delete|list``: RayJobs from the command line, via the SDK.

A job runs on an existing cluster (``--cluster NAME``) or on a cluster of its own, queued behind
quota and shut down when it ends (``--workers N`` plus the shape options of ``cluster up``).
Exit codes: 0 done (``submit --wait``: the job succeeded); 1 the system reported a failure (the
job failed, the job does not exist, an API error; the message on stderr); 2 a refused option or
manifest (the message names the field); 3 a wait timed out. ``status`` exits 0 whenever it could
read the job, whatever its state.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeflare.cli.cluster_cmd import SIZE_FLAGS, add_size_options, configuration
from codeflare.cli.output import (
    EXIT_FAILURE,
    EXIT_OK,
    UsageError,
    action_group,
    add_wait_options,
    connect,
    emit,
    emit_rows,
    error,
    guarded,
    namespace_of,
    print_fields,
    say,
)
from codeflare.k8s.constants import QUEUE_NAME_LABEL, RAY_CLUSTER_LABEL

if TYPE_CHECKING:
    from codeflare.sdk.client import Client
    from codeflare.sdk.job import RayJob


def register(subparsers: Any, name: str) -> None:
    sub, parent = action_group(
        subparsers,
        name,
        __doc__,
        summary="submit RayJobs and follow them",
        description="RayJobs: an entrypoint run on an existing Ray cluster or on a queued cluster of "
        "its own.",
    )

    submit = sub.add_parser("submit", parents=[parent], help="submit a RayJob (idempotent)",
                            description="Submit a RayJob running --entrypoint, on --cluster NAME or on a "
                            "cluster of its own (--workers N and the shape options).")
    submit.add_argument("name", metavar="NAME")
    submit.add_argument("--entrypoint", required=True, help="the command to run, e.g. 'python train.py'")
    target = submit.add_mutually_exclusive_group(required=True)
    target.add_argument("--cluster", help="run on this existing Ray cluster")
    add_size_options(submit, workers_in=target)
    submit.add_argument("--working-dir", type=Path,
                        help="directory shipped with the job (Ray runtime_env working_dir)")
    add_wait_options(submit, "the job ends, showing its output live; exit 0 only if it succeeded", 900)
    submit.add_argument("--quiet", action="store_true", help="with --wait: do not show the job's output")
    submit.set_defaults(func=guarded(_submit))

    for action, text, func in (
        ("status", "one job's state (and why it is queued)", _status),
        ("logs", "the job's output (kept after it ended)", _logs),
        ("stop", "stop a job (suspends it and releases its own cluster)", _stop),
        ("delete", "delete a job and what it owns", _delete),
    ):
        p = sub.add_parser(action, parents=[parent], help=text, description=text)
        p.add_argument("name", metavar="NAME")
        p.set_defaults(func=guarded(func))
        if action == "logs":
            p.add_argument("-f", "--follow", action="store_true",
                           help="stream the output while the job runs, until it ends")

    listing = sub.add_parser("list", parents=[parent], help="list the RayJobs of a namespace")
    listing.set_defaults(func=guarded(_list))

    from codeflare.cli import check_cmd  # `check`: the same options, nothing created

    check_cmd.register_job(sub, parent)


def handle(client: Client, name: str, namespace: str) -> RayJob:
    """An SDK handle on an existing RayJob (status/logs/stop/delete read the object itself; the
    entrypoint and cluster given here only satisfy the constructor and are never sent)."""
    from codeflare.sdk.job import RayJob

    return RayJob(name, "true", cluster_name="unused", namespace=namespace, client=client)


def _submit(args: argparse.Namespace) -> int:
    from codeflare.sdk.job import RayJob

    with connect(args) as client:
        namespace = namespace_of(args, client)
        runtime_env = None
        if args.working_dir is not None:
            if not args.working_dir.is_dir():
                raise UsageError(f"--working-dir: {args.working_dir} is not a directory")
            runtime_env = {"working_dir": str(args.working_dir.resolve())}
        if args.cluster:
            shaped = [f"--{flag.replace('_', '-')}" for flag in (*SIZE_FLAGS, "gpus") if getattr(args, flag)]
            if shaped:
                raise UsageError(f"{', '.join(shaped)}: only with --workers (a cluster of the job's own)")
            job = RayJob(args.name, args.entrypoint, cluster_name=args.cluster, namespace=namespace,
                         runtime_env=runtime_env, local_queue=args.queue, client=client)
        else:
            config = configuration(f"{args.name}-cluster", args, namespace)
            job = RayJob(args.name, args.entrypoint, cluster_config=config, namespace=namespace,
                         runtime_env=runtime_env, local_queue=args.queue, client=client)
        job.submit()
        if not args.wait:
            data = _summary(job)
            emit(args, data, lambda: say(args, _one_line(data)))
            return EXIT_OK
        started = time.monotonic()
        if args.output == "table" and not args.quiet:
            _print_live(job, args.timeout)
        remaining = max(args.timeout - (time.monotonic() - started), 1.0)
        final = job.wait(timeout=remaining, progress=args.output == "table")
        data = _summary(job)
        emit(args, data, lambda: say(args, _one_line(data)))
        if not final.succeeded:
            error(f"RayJob {namespace}/{args.name} {final.deployment.lower()} ({final.job}): {final.message}")
            return EXIT_FAILURE
    return EXIT_OK


def _summary(job: RayJob) -> dict[str, Any]:
    status = job.status()
    queued = not status.deployment or status.deployment == "Suspended"
    return {
        "name": job.name,
        "namespace": job.namespace,
        "deployment": status.deployment or "Queued",
        "job": status.job,
        "cluster": status.cluster,
        "job_id": status.job_id,
        "message": status.message,
        "reason": str(job.why_pending() or "") or None if queued else None,  # plain text for yaml
    }


def _one_line(data: dict[str, Any]) -> str:
    text = f"RayJob {data['namespace']}/{data['name']}: {data['deployment']}"
    if data["job"]:
        text += f" ({data['job']})"
    if data["reason"] or data["message"]:
        text += f" - {data['reason'] or data['message']}"
    return text


def _status(args: argparse.Namespace) -> int:
    with connect(args) as client:
        data = _summary(handle(client, args.name, namespace_of(args, client)))
    emit(args, data, lambda: print_fields((key.replace("_", " ").capitalize(), v) for key, v in data.items()))
    return EXIT_OK


def _print_live(job: RayJob, timeout: float | None) -> None:
    """Print the job's output as it arrives (stdout, flushed per chunk) until the job ends."""
    for chunk in job.logs(follow=True, timeout=timeout):
        print(chunk, end="", flush=True)


def _logs(args: argparse.Namespace) -> int:
    with connect(args) as client:
        job = handle(client, args.name, namespace_of(args, client))
        if args.follow and args.output == "table":
            job.status()  # a missing job is reported (exit 1) before following anything
            _print_live(job, None)
            return EXIT_OK
        text = "".join(job.logs(follow=True)) if args.follow else job.logs()
    ending = "" if text.endswith("\n") else "\n"
    emit(args, {"name": args.name, "logs": text}, lambda: print(text, end=ending))
    return EXIT_OK


def _stop(args: argparse.Namespace) -> int:
    return _act(args, "stopped", lambda job: job.stop())


def _delete(args: argparse.Namespace) -> int:
    return _act(args, "deleted", lambda job: job.delete())


def _act(args: argparse.Namespace, done: str, action: Callable[[RayJob], object]) -> int:
    """Run ``action`` on the named RayJob and report it as ``done`` (e.g. "stopped")."""
    with connect(args) as client:
        namespace = namespace_of(args, client)
        action(handle(client, args.name, namespace))
    emit(args, {"name": args.name, "namespace": namespace, done: True},
         lambda: say(args, f"{done} RayJob {namespace}/{args.name}"))
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from codeflare.kube import kinds

    with connect(args) as client:
        objects = client.kube.list(kinds.RAYJOB, namespace_of(args, client))
    rows = []
    for obj in objects:
        meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
        rows.append({
            "name": meta["name"],
            "namespace": meta.get("namespace"),
            "deployment": status.get("jobDeploymentStatus") or ("Suspended" if spec.get("suspend") else ""),
            "job": status.get("jobStatus") or "",
            "cluster": status.get("rayClusterName")
            or (spec.get("clusterSelector") or {}).get(RAY_CLUSTER_LABEL, ""),
            "queue": (meta.get("labels") or {}).get(QUEUE_NAME_LABEL),
            "entrypoint": spec.get("entrypoint"),
            "message": status.get("message") or "",
        })
    columns = {"NAME": "name", "DEPLOYMENT": "deployment", "JOB": "job", "CLUSTER": "cluster",
               "QUEUE": "queue", "ENTRYPOINT": "entrypoint", "MESSAGE": "message"}
    emit_rows(args, rows, columns, "no jobs")
    return EXIT_OK
