"""``RayJob`` end to end on local mode: queued behind quota with a reason, run, logs, stop, delete.

Two jobs, each on a tiny cluster of its own, share quota ``sdk-cq`` that fits one: the first
runs, the second waits and ``why_pending()`` names the shortage; stopping the waiting job keeps
it out of the queue; the first one's logs are kept after its cluster is gone; ``delete`` removes
the job. A job on an existing cluster runs there and leaves the cluster up.
"""

from __future__ import annotations

import pytest

from codeflare.kube import kinds
from codeflare.sdk import Cluster, RayJob
from tests.sdk.conftest import Local, tiny
from tests.support.control_plane import wait_for

pytestmark = pytest.mark.ray

SLOW = "python -c \"import time; time.sleep(8); print('first done')\""


def test_rayjob_lifecycle_with_a_queued_second_job(local: Local) -> None:
    first = RayJob("first", SLOW, cluster_config=tiny("first-cluster"), client=local.client).submit()
    wait_for(lambda: first.status().deployment in ("Initializing", "Running"), 60, 0.3, what="first starts")
    second = RayJob("second", "python -c 'print(2)'", cluster_config=tiny("second-cluster"),
                    client=local.client).submit()

    reason = wait_for(lambda: (r := second.why_pending()) and "insufficient" in r and r, 60, 0.3,
                      what="second's pending reason")
    assert "insufficient quota" in reason
    assert second.status().deployment in ("", "Suspended")

    second.stop()
    assert local.client.kube.get(kinds.RAYJOB, "second", "default")["spec"]["suspend"] is True

    final = first.wait(timeout=240, progress=False)
    assert final.succeeded, final
    assert final.finished
    assert "first done" in first.logs()
    # shutdownAfterJobFinishes: the job's own cluster goes away, the kept logs stay readable
    wait_for(lambda: local.client.kube.find(kinds.RAYCLUSTER, final.cluster, "default") is None, 90, 0.5,
             what="first job's cluster removed")
    assert "first done" in first.logs()

    second.delete()
    first.delete()
    wait_for(lambda: not local.client.kube.list(kinds.RAYJOB, "default"), 60, 0.3, what="jobs deleted")


def test_rayjob_on_an_existing_cluster_leaves_it_running(local: Local) -> None:
    shared = Cluster(tiny("shared"), local.client)
    shared.apply()
    shared.wait_ready(timeout=180, progress=False)
    local.remember("shared")

    job = RayJob("on-shared", "python -c 'print(6 * 7)'", cluster_name="shared", client=local.client)
    final = job.submit().wait(timeout=180, progress=False)

    assert final.succeeded, final
    assert final.cluster == "shared"
    assert "42" in job.logs()
    assert local.client.kube.find(kinds.RAYCLUSTER, "shared", "default") is not None
    job.delete()
    shared.down()
