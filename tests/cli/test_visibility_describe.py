"""``codeflare queue describe`` lists the waiting jobs in queue order with their positions and reasons.

A real API server and operator (no Ray): ClusterQueue ``cli-cq`` holds one tiny cluster (2 CPUs of
3); ``b-second`` and ``c-third`` wait at positions 1/1 and 2/2 (ClusterQueue/LocalQueue, from 1),
from the operator's visibility API, with Kueue 0.19's reason code and the scheduler's message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from codeflare.cli.main import main
from codeflare.sdk import (
    Client,
    Cluster,
)
from tests.sdk.conftest import control_plane
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import wait_for
from tests.support.queued_clusters import three_queued

__all__ = ["control_plane"]
NS, QUEUE = "cli-team", "cli-queue"


@pytest.fixture(scope="module")
def queued(control_plane: Client) -> Iterator[list[Cluster]]:
    yield from three_queued(control_plane, "cli", NS, QUEUE)


def describe(capsys: pytest.CaptureFixture[str], apiserver: ServerProcess, *extra: str) -> str:
    capsys.readouterr()
    code = main(["queue", "describe", QUEUE, "-n", NS, "--kubeconfig", str(apiserver.kubeconfig), *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_describe_shows_positions_codes_and_messages(
    capsys: pytest.CaptureFixture[str], apiserver: ServerProcess, queued: list[Cluster]
) -> None:
    def settled() -> dict[str, dict[str, object]] | None:
        data = json.loads(describe(capsys, apiserver, "-o", "json"))
        rows = {q["name"]: q for q in data["queued"]}
        done = len(rows) == 2 and all(q["reason_code"] and q["position_in_local_queue"] is not None
                                      for q in rows.values())  # fmt: skip
        return rows if done else None

    rows = wait_for(settled, 60, 0.3, what="both waiting clusters placed and explained")
    assert (rows["c-third"]["position_in_cluster_queue"], rows["c-third"]["position_in_local_queue"]) == (
        1,
        1,
    )
    assert rows["b-second"]["reason_code"] == "WaitingForQuota"
    table = describe(capsys, apiserver)
    lines = [line.split() for line in table.splitlines()]
    placed = [(cells[0], cells[2], cells[3]) for cells in lines if len(cells) > 3 and cells[2] in rows]
    assert placed == [("1/1", "b-second", "WaitingForQuota"), ("2/2", "c-third", "WaitingForQuota")]
    assert "insufficient quota" in table
    assert "c-third" in describe(capsys, apiserver, "-o", "yaml")  # the reasons are plain text there
    capsys.readouterr()
    assert (
        main(
            [
                "cluster",
                "status",
                "c-third",
                "-n",
                NS,
                "--kubeconfig",
                str(apiserver.kubeconfig),
                "-o",
                "yaml",
            ]
        )
        == 0
    )
    assert "WaitingForQuota: " in capsys.readouterr().out
