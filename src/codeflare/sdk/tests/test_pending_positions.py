"""How the SDK words a pending reason and falls back when the visibility API cannot tell a position.

The stand-in below is only the HTTP boundary (``get_raw``/``find`` answering or raising what the
client raises for a status code); the integration tests (tests/sdk/test_visibility_positions.py)
read real answers through the aggregation layer.
"""

from __future__ import annotations

from typing import Any

from codeflare.kube import errors
from codeflare.sdk.status import PendingReason, QueuePosition, QueuePositions, explain_pending

WORKLOAD = {
    "metadata": {"name": "w", "namespace": "ns"},
    "spec": {"queueName": "lq"},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "WaitingForQuota",
                               "message": "insufficient quota for cpu"}]},
}  # fmt: skip


class Answers:
    """Answers per visibility version: an exception to raise, or the items to return."""

    def __init__(self, **by_version: Any) -> None:
        self.by_version, self.asked = by_version, []

    def get_raw(self, path: str) -> dict[str, Any]:
        version = path.split("/")[3]
        self.asked.append(version)
        answer = self.by_version[version]
        if isinstance(answer, Exception):
            raise answer
        return {"items": answer}

    def find(self, *args: Any) -> dict[str, Any]:
        return {"spec": {"clusterQueue": "cq"}}


def item(name: str, cq: int, lq: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "positionInClusterQueue": cq, "positionInLocalQueue": lq}


def explain(kube: Answers) -> PendingReason | None:
    return explain_pending(WORKLOAD, QueuePositions(kube))  # type: ignore[arg-type]


def test_position_from_v1beta2_and_the_text_counts_from_one() -> None:
    reason = explain(Answers(v1beta2=[item("other", 0, 0), item("w", 1, 0)]))
    assert reason is not None and reason.position == QueuePosition(1, 0)
    assert reason == ("WaitingForQuota: insufficient quota for cpu "
                      "(position 2 in ClusterQueue cq, 1 in LocalQueue lq)")  # fmt: skip


def test_an_older_kueue_serving_only_v1beta1() -> None:
    kube = Answers(v1beta2=errors.NotFound("not found"), v1beta1=[item("w", 0, 0)])
    reason = explain(kube)
    assert (
        reason is not None and reason.position == QueuePosition(0, 0) and kube.asked == ["v1beta2", "v1beta1"]
    )


def test_unknown_positions_say_why() -> None:
    cases = {
        "is not served here": Answers(v1beta2=errors.NotFound("x"), v1beta1=errors.NotFound("x")),
        "not allowed": Answers(v1beta2=errors.Forbidden("no")),
        "did not answer": Answers(v1beta2=errors.ServerError("service unavailable")),
        "not in its ClusterQueue's queue": Answers(v1beta2=[item("other", 0, 0)]),
    }
    for words, kube in cases.items():
        reason = explain(kube)
        assert reason is not None and reason.position is None and words in reason.position_note, words
        assert reason.startswith("WaitingForQuota: insufficient quota for cpu (position unknown: ")
        assert reason.reason == "WaitingForQuota" and reason.message == "insufficient quota for cpu"


def test_one_call_per_local_queue() -> None:
    kube = Answers(v1beta2=[item("w", 0, 0)])
    positions = QueuePositions(kube)  # type: ignore[arg-type]
    for _ in range(3):
        positions.of(WORKLOAD)
    assert kube.asked == ["v1beta2"]
