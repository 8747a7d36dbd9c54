"""``codeflare demo``: the quickstart, end to end on this machine.

Starts local mode, sets a quota that fits one job at a time, submits two RayJobs that each
estimate pi with a Monte-Carlo computation spread over the tasks of two Ray workers, shows the
second waiting in the queue with its reason, then running, prints both results and timings, and
cleans up. Everything runs offline: the job's code travels as a Ray runtime_env working_dir.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import tempfile
import time
from pathlib import Path
from typing import Any

NAMESPACE = "codeflare-demo"
CLUSTER_QUEUE = "demo-cluster-queue"
LOCAL_QUEUE = "demo-queue"
FLAVOR = "default-flavor"
#: CPUs of one job: head + 2 workers of 1 CPU, and the 500m submitter pod set Kueue charges a RayJob
JOB_CPU = "3500m"

PI_SCRIPT = '''\
"""Estimate pi by throwing random darts, spread over every worker of the Ray cluster."""
import random
import socket
import sys
import time

import ray


@ray.remote(num_cpus=1, scheduling_strategy="SPREAD")
def throw(darts: int, seed: int) -> tuple[int, str]:
    rng = random.Random(seed)
    inside = sum(1 for _ in range(darts) if rng.random() ** 2 + rng.random() ** 2 <= 1.0)
    return inside, ray.get_runtime_context().get_node_id()


def main() -> None:
    tasks, darts, first_seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    ray.init()
    alive = len([node for node in ray.nodes() if node["Alive"]])
    start = time.perf_counter()
    results = ray.get([throw.remote(darts, first_seed + i) for i in range(tasks)])
    inside = sum(r[0] for r in results)
    nodes = len({r[1] for r in results})
    estimate = 4.0 * inside / (tasks * darts)
    print(f"PI_ESTIMATE={estimate:.6f} TASKS={tasks} DARTS={tasks * darts} NODES={nodes} "
          f"CLUSTER_NODES={alive} SECONDS={time.perf_counter() - start:.2f} HOST={socket.gethostname()}")


if __name__ == "__main__":
    main()
'''


def register(subparsers: Any, name: str) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help="run the quickstart: two queued Ray jobs estimating pi on local mode",
        description="Start local mode, queue two RayJobs behind a quota that fits one at a time, show the "
        "second one waiting with its reason, print both results, and clean up.",
    )
    parser.add_argument(
        "--home", type=Path, help="local mode home (default $CODEFLARE_HOME or ~/.codeflare/local)"
    )
    parser.add_argument("--tasks", type=int, default=24, help="Ray tasks per job (default 24)")
    parser.add_argument("--darts", type=int, default=400_000, help="darts per task (default 400000)")
    parser.add_argument("--keep", action="store_true", help="leave local mode running afterwards")
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds to wait for each job (default 600)"
    )
    parser.set_defaults(func=run)


def _say(console: Any, text: str) -> None:
    console.print(text, highlight=False)


def _setup_queue(client: Any) -> None:
    from codeflare.kube import errors, kinds
    from codeflare.sdk import FlavorQuota, create_cluster_queue, create_local_queue

    with contextlib.suppress(errors.AlreadyExists):
        client.kube.create(kinds.NAMESPACE, {"metadata": {"name": NAMESPACE}})
    # one job = head (1 CPU, 1Gi) + 2 workers (1 CPU, 1Gi each) + the submitter Kueue counts for
    # a RayJob (500m, 200Mi): the quota fits exactly one
    create_cluster_queue(
        CLUSTER_QUEUE,
        [FlavorQuota(FLAVOR, {"cpu": JOB_CPU, "memory": "4Gi"})],
        namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
        client=client,
    )
    create_local_queue(LOCAL_QUEUE, CLUSTER_QUEUE, NAMESPACE, default=True, client=client)


def _job(name: str, workdir: str, tasks: int, darts: int, seed: int, client: Any) -> Any:
    from codeflare.sdk import ClusterConfiguration, RayJob

    config = ClusterConfiguration(
        f"{name}-cluster",
        namespace=NAMESPACE,
        num_workers=2,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests="1Gi",
        head_memory_limits="1Gi",
        worker_cpu_requests=1,
        worker_cpu_limits=1,
        worker_memory_requests="1Gi",
        worker_memory_limits="1Gi",
        local_queue=LOCAL_QUEUE,
    )
    return RayJob(
        name,
        f"python pi.py {tasks} {darts} {seed}",
        cluster_config=config,
        namespace=NAMESPACE,
        runtime_env={"working_dir": workdir},
        shutdown_after_job_finishes=True,
        client=client,
    )


def _result(logs: str) -> dict[str, str]:
    match = re.search(
        r"PI_ESTIMATE=(\S+) TASKS=(\d+) DARTS=(\d+) NODES=(\d+) CLUSTER_NODES=(\d+) SECONDS=(\S+)", logs
    )
    if match is None:
        return {}
    return dict(zip(("pi", "tasks", "darts", "nodes", "cluster", "seconds"), match.groups(), strict=True))


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from codeflare.local.mode import LocalMode
    from codeflare.sdk import LocalAuthentication

    console = Console()
    started = time.monotonic()
    mode = LocalMode(args.home)
    _say(console, f"[bold]1.[/] starting local mode in {mode.home} (API server, operator, node agent)")
    mode.up()
    client = LocalAuthentication(mode.home).login()
    jobs: list[Any] = []
    try:
        quota = f"fits one job ({JOB_CPU} CPU, 4Gi) at a time"
        _say(console, f"[bold]2.[/] quota: ClusterQueue {CLUSTER_QUEUE} {quota}")
        _setup_queue(client)
        with tempfile.TemporaryDirectory(prefix="codeflare-demo-") as workdir:
            Path(workdir, "pi.py").write_text(PI_SCRIPT)
            _say(
                console,
                "[bold]3.[/] submitting two RayJobs, each on its own Ray cluster (1 head + 2 workers)",
            )
            submitted: dict[str, float] = {}
            for index, name in enumerate(("pi-first", "pi-second")):
                job = _job(name, workdir, args.tasks, args.darts, index * args.tasks, client)
                for stale in (job,):
                    with contextlib.suppress(Exception):
                        stale.delete()
                jobs.append(job.submit())
                submitted[name] = time.monotonic()
                time.sleep(1.0)
            second = jobs[1]
            reason = _wait_reason(second, 60)
            _say(console, f"[bold]4.[/] {second.name} waits in the queue: [yellow]{reason}[/]")
            timings: dict[str, dict[str, float]] = {}
            for job in jobs:
                status = job.wait(timeout=args.timeout, progress=True)
                timings[job.name] = {"total": time.monotonic() - submitted[job.name]}
                colour = "green" if status.succeeded else "red"
                _say(
                    console,
                    f"    {job.name}: [{colour}]{status.deployment} ({status.job})[/] "
                    f"after {timings[job.name]['total']:.0f}s",
                )
                if not status.succeeded:
                    _say(console, job.logs()[-2000:])
                    return 1
            table = Table(title="Monte-Carlo estimates of pi")
            for column in (
                "job",
                "pi",
                "darts",
                "Ray tasks",
                "nodes used/alive",
                "compute s",
                "submit->done s",
            ):
                table.add_column(column)
            for job in jobs:
                result = _result(job.logs())
                table.add_row(
                    job.name,
                    result.get("pi", "?"),
                    result.get("darts", "?"),
                    result.get("tasks", "?"),
                    f"{result.get('nodes', '?')}/{result.get('cluster', '?')}",
                    result.get("seconds", "?"),
                    f"{timings[job.name]['total']:.0f}",
                )
            console.print(table)
        _say(console, f"[bold]5.[/] done in {time.monotonic() - started:.0f}s; cleaning up")
        return 0
    finally:
        for job in jobs:
            with contextlib.suppress(Exception):
                job.delete()
        _cleanup_queue(client)
        client.close()
        if not args.keep:
            mode.down()
            _say(console, "local mode stopped (run with --keep to leave it running)")


def _wait_reason(job: Any, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            reason = job.why_pending()
            if reason and "insufficient" in reason:
                return str(reason)
        time.sleep(0.5)
    return str(job.why_pending() or "waiting for admission")


def _cleanup_queue(client: Any) -> None:
    from codeflare.kube import kinds

    with contextlib.suppress(Exception):
        client.kube.delete(kinds.LOCAL_QUEUE, LOCAL_QUEUE, NAMESPACE)
    with contextlib.suppress(Exception):
        client.kube.delete(kinds.CLUSTER_QUEUE, CLUSTER_QUEUE)
