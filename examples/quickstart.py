"""Quickstart with the SDK: two queued Ray jobs on local mode, one waiting for the other's quota.

Run it with ``python examples/quickstart.py`` (needs ``pip install 'codeflare[local]'``). It
starts local mode in a temporary home, creates (as an admin) a queue whose quota fits one job at
a time, submits two RayJobs that each estimate pi on a Ray cluster of their own, shows the second
one waiting with the scheduler's reason, prints both results, and cleans everything up.
The same flow, cell by cell, is in ``quickstart.ipynb``; ``codeflare demo`` is its CLI twin.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from codeflare.local.mode import LocalMode
from codeflare.sdk import (
    Client,
    ClusterConfiguration,
    FlavorQuota,
    LocalAuthentication,
    RayJob,
    create_cluster_queue,
    create_local_queue,
)

CLUSTER_QUEUE, QUEUE = "quickstart-cq", "quickstart"

PI = """\
import random, sys
import ray

@ray.remote(num_cpus=1)
def inside(darts: int, seed: int) -> int:
    rng = random.Random(seed)
    return sum(rng.random() ** 2 + rng.random() ** 2 <= 1.0 for _ in range(darts))

tasks, darts = int(sys.argv[1]), int(sys.argv[2])
ray.init()
hits = sum(ray.get([inside.remote(darts, seed) for seed in range(tasks)]))
print(f"PI_ESTIMATE={4.0 * hits / (tasks * darts):.5f} DARTS={tasks * darts}")
"""


def tiny_cluster(name: str) -> ClusterConfiguration:
    """Head 1 CPU/1Gi and one worker 1 CPU/1Gi; with the job submitter (500m/200Mi), the queue's quota."""
    return ClusterConfiguration(
        name, num_workers=1, local_queue=QUEUE,
        head_cpu_requests=1, head_cpu_limits=1, head_memory_requests="1Gi", head_memory_limits="1Gi",
        worker_cpu_requests=1, worker_cpu_limits=1, worker_memory_requests="1Gi", worker_memory_limits="1Gi",
    )


def create_queue(client: Client) -> None:
    """The admin's part: a ClusterQueue with room for one job, and a LocalQueue users submit to."""
    create_cluster_queue(CLUSTER_QUEUE, [FlavorQuota("default-flavor", {"cpu": "2500m", "memory": "2248Mi"})],
                         namespace_selector={}, client=client)
    create_local_queue(QUEUE, CLUSTER_QUEUE, "default", client=client)


def wait_for_reason(job: RayJob, timeout: float = 60) -> str:
    """The scheduler's reason for keeping ``job`` queued (once it says what is short)."""
    deadline = time.monotonic() + timeout
    reason = None
    while time.monotonic() < deadline:
        reason = job.why_pending()
        if reason and "insufficient" in reason:
            break
        time.sleep(0.5)
    return reason or "waiting for admission"


def run(home: Path, tasks: int, darts: int) -> int:
    # local mode's Ray processes run `python` from PATH: make it this interpreter
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    mode = LocalMode(home)
    print(f"starting local mode in {home}")
    mode.up()
    client = LocalAuthentication(home).login()
    jobs: list[RayJob] = []
    try:
        create_queue(client)
        with tempfile.TemporaryDirectory(prefix="quickstart-") as workdir:
            Path(workdir, "pi.py").write_text(PI)
            for name in ("pi-first", "pi-second"):
                config = tiny_cluster(f"{name}-cluster")
                job = RayJob(name, f"python pi.py {tasks} {darts}", cluster_config=config,
                             runtime_env={"working_dir": workdir}, client=client)
                jobs.append(job.submit())
                print(f"submitted {name}")
            print(f"pi-second waits: {wait_for_reason(jobs[1])}")
            for job in jobs:
                status = job.wait(timeout=600, progress=False)
                found = re.search(r"PI_ESTIMATE=(\S+)", job.logs())
                estimate = found.group(1) if found else "?"
                print(f"{job.name}: {status.deployment} ({status.job}), pi = {estimate}")
                if not status.succeeded:
                    return 1
        return 0
    finally:
        for job in jobs:
            job.delete()
        client.close()
        mode.down()
        print("cleaned up")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=2, help="Ray tasks per job (default 2)")
    parser.add_argument("--darts", type=int, default=20_000, help="darts per task (default 20000)")
    parser.add_argument("--home", type=Path, help="local mode home (default: a temporary directory)")
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="codeflare-home-"))
    os.environ["CODEFLARE_HOME"] = str(home)
    try:
        return run(home, args.tasks, args.darts)
    finally:
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
