"""``RayJob.logs(follow=True)`` on local mode with real Ray: output arrives while the job runs.

A job prints, sleeps, prints. The first chunk must arrive while the RayJob's status still says
RUNNING (read when that chunk arrives) and before the second line exists; the iterator ends once
the job ended, with both lines shown once. Following a job that already ended gives its kept logs.
"""

from __future__ import annotations

import pytest

from codeflare.sdk import Cluster, RayJob
from tests.sdk.conftest import Local, tiny

pytestmark = pytest.mark.ray

# the lines are built at run time: Ray's log starts by echoing the entrypoint itself
PRINT_SLEEP_PRINT = (
    "python -u -c \"import time; print('first', 'line', flush=True); time.sleep(12); "
    "print('second', 'line')\""
)


def test_follow_streams_while_running_then_ends_with_the_job(local: Local) -> None:
    cluster = Cluster(tiny("follow"), local.client)
    cluster.apply()
    cluster.wait_ready(timeout=180, progress=False)
    local.remember("follow")
    job = RayJob("follow-job", PRINT_SLEEP_PRINT, cluster_name="follow", client=local.client).submit()

    chunks: list[str] = []
    status_at_first = None
    for chunk in job.logs(follow=True, timeout=180):
        if status_at_first is None and "first line" in chunk:
            status_at_first = job.status()
            assert "second line" not in "".join(chunks) + chunk
        chunks.append(chunk)

    assert status_at_first is not None, chunks
    assert status_at_first.job == "RUNNING", status_at_first
    assert status_at_first.deployment == "Running", status_at_first
    final = job.status()
    assert final.job == "SUCCEEDED", final  # the iterator ended because the job ended
    text = "".join(chunks)
    assert text.count("first line") == 1 and text.count("second line") == 1, text

    again = "".join(job.logs(follow=True, timeout=60))  # an ended job: its kept logs at once
    assert "first line" in again and "second line" in again
    job.delete()
    cluster.down()
