"""Pods standing for Ray nodes: an unknown time is left out, never written as "" (no date-time)."""

from __future__ import annotations

from codeflare.local.agent import shapes

RC = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
}


def test_an_exited_node_whose_start_is_unknown_has_a_terminated_state_without_started_at() -> None:
    pod = shapes.pod_for(RC, "small-0", "small", False, {}, "host", phase="Failed", ready=False, exit_code=1,
                         finished="2026-12-02T00:00:00Z")
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated == {"exitCode": 1, "reason": "Error", "finishedAt": "2026-12-02T00:00:00Z"}


def test_a_running_node_keeps_its_start() -> None:
    pod = shapes.pod_for(RC, "head", "headgroup", True, {}, "host", phase="Running", ready=True,
                         started="2026-12-02T00:00:00Z")
    state = pod["status"]["containerStatuses"][0]["state"]
    assert state == {"running": {"startedAt": "2026-12-02T00:00:00Z"}}
