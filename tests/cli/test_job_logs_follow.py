"""``codeflare job logs -f`` and ``job submit --wait`` show a job's output while it still runs.

The commands run as real subprocesses (a user's shell) against one local mode with real Ray; a
reader thread hands their stdout lines over as they are written. When the first line of a job that
prints, sleeps and prints arrives, the RayJob's status (read then, through the SDK) must still be
RUNNING; the command exits 0 once the job ended, having shown both lines. ``--quiet`` shows none.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from codeflare.sdk import Cluster, RayJob
from tests.sdk.conftest import Local, tiny, venv_path

pytestmark = pytest.mark.ray

# the lines are built at run time: Ray's log starts by echoing the entrypoint itself
PRINT_SLEEP_PRINT = (
    "python -u -c \"import time; print('first', 'line', flush=True); time.sleep(12); "
    "print('second', 'line')\""
)


@pytest.fixture(scope="module")
def cluster(local: Local) -> Iterator[str]:
    shared = Cluster(tiny("cli-follow"), local.client)
    shared.apply()
    shared.wait_ready(timeout=180, progress=False)
    local.remember("cli-follow")
    yield "cli-follow"
    shared.down()


def _lines(*argv: str, local: Local) -> tuple[subprocess.Popen[str], queue.Queue[str | None]]:
    """Start ``codeflare ARGV``; its stdout lines arrive on the queue (None at the end)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "codeflare.cli.main", *argv, "--home", str(local.home)],
        env={**os.environ, "PATH": venv_path()}, stdout=subprocess.PIPE, text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def _follow_until_first_line(job: RayJob, lines: queue.Queue[str | None]) -> tuple[list[str], str, str]:
    """Every line up to the first job line, and the job's (Ray, deployment) status at that moment."""
    seen: list[str] = []
    while (line := lines.get(timeout=240)) is not None:
        seen.append(line)
        if "first line" in line:
            status = job.status()
            return seen, status.job, status.deployment
    raise AssertionError(f"the command ended before the job's first line: {seen}")


def _rest(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> str:
    rest = []
    while (line := lines.get(timeout=240)) is not None:
        rest.append(line)
    assert process.wait(timeout=60) == 0, rest
    return "".join(rest)


def test_logs_follow_shows_lines_while_the_job_runs(local: Local, cluster: str) -> None:
    job = RayJob("cli-logs-f", PRINT_SLEEP_PRINT, cluster_name=cluster, client=local.client).submit()
    process, lines = _lines("job", "logs", "-f", "cli-logs-f", local=local)

    seen, ray_status, deployment = _follow_until_first_line(job, lines)
    assert (ray_status, deployment) == ("RUNNING", "Running"), seen
    assert "second line" not in "".join(seen)
    rest = _rest(process, lines)
    assert rest.count("second line") == 1 and "first line" not in rest, rest
    assert job.status().job == "SUCCEEDED"

    after = _rest(*_lines("job", "logs", "-f", "cli-logs-f", local=local))  # ended: the kept logs
    assert "first line" in after and "second line" in after
    job.delete()


def test_submit_wait_shows_the_output_live_unless_quiet(local: Local, cluster: str) -> None:
    process, lines = _lines("job", "submit", "cli-submit", "--cluster", cluster, "--entrypoint",
                            PRINT_SLEEP_PRINT, "--wait", "--timeout", "300", local=local)
    job = RayJob("cli-submit", "unused", cluster_name=cluster, client=local.client)

    seen, ray_status, deployment = _follow_until_first_line(job, lines)
    assert (ray_status, deployment) == ("RUNNING", "Running"), seen
    rest = _rest(process, lines)
    assert "second line" in rest and "SUCCEEDED" in rest, rest

    quiet = _rest(*_lines("job", "submit", "cli-quiet", "--cluster", cluster, "--entrypoint",
                          "python -c \"print('quiet', 'output')\"", "--wait", "--quiet", local=local))
    assert "quiet output" not in quiet and "SUCCEEDED" in quiet, quiet
    job.delete()
    RayJob("cli-quiet", "unused", cluster_name=cluster, client=local.client).delete()
