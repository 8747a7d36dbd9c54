"""Kueue objects to engine values and back, for admission fair sharing: the ClusterQueue's
admission mode, the LocalQueue's weight, and its recent usage read from and written to status."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.quantity import Quantity
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.operator.queueing import convert, status

Obj = dict[str, Any]
NOW = "2025-06-03T14:25:15Z"


def cluster_queue(**spec: Any) -> Obj:
    return {"metadata": {"name": "cq"}, "spec": spec}


def local_queue(spec: Obj | None = None, status: Obj | None = None) -> Obj:
    obj: Obj = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq", **(spec or {})}}
    if status is not None:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("scope", "mode"),
    [
        (None, None),
        ({"admissionMode": "UsageBasedAdmissionFairSharing"}, "UsageBasedAdmissionFairSharing"),
        ({"admissionMode": "NoAdmissionFairSharing"}, "NoAdmissionFairSharing"),
        # v1beta1 has no enum: an unknown mode reaches the engine, which treats it as off
        ({"admissionMode": "UsageBasedFairSharing"}, "UsageBasedFairSharing"),
        ({}, None),
    ],
)
def test_admission_mode_comes_from_the_admission_scope(scope: Obj | None, mode: str | None) -> None:
    spec = {} if scope is None else {"admissionScope": scope}
    assert convert.cluster_queue(cluster_queue(**spec)).admission_mode == mode


@pytest.mark.parametrize(
    ("fair_sharing", "weight"),
    [
        (None, None),  # absent: Kueue weighs 1, the engine's default
        ({}, None),
        ({"weight": "2"}, 2.0),
        ({"weight": 3}, 3.0),
        ({"weight": "500m"}, 0.5),
        ({"weight": "0"}, 0.0),  # not validated, as in Kueue: the engine ranks it last
    ],
)
def test_local_queue_weight(fair_sharing: Obj | None, weight: float | None) -> None:
    spec = {} if fair_sharing is None else {"fairSharing": fair_sharing}
    queue = convert.local_queue(local_queue(spec))
    assert (queue.namespace, queue.name, queue.cluster_queue) == ("ns", "lq", "cq")
    assert queue.fair_sharing_weight == weight


def test_an_unreadable_weight_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"LocalQueue lq: spec.fairSharing.weight"):
        convert.local_queue(local_queue({"fairSharing": {"weight": "two"}}))


def test_recent_usage_is_read_from_status() -> None:
    afs = {"consumedResources": {"cpu": "31999m", "memory": "1Gi"}, "lastUpdate": NOW}
    obj = local_queue(status={"fairSharing": {"weightedShare": 0, "admissionFairSharingStatus": afs}})
    assert convert.local_queue_usage(obj) == (
        {"cpu": Quantity(31999), "memory": Quantity(1024**3 * 1000)},
        epoch_seconds(NOW),
    )


@pytest.mark.parametrize(
    "queue_status",
    [
        None,
        {},
        {"fairSharing": {"weightedShare": 0}},  # written by fair sharing of another kind
        {"fairSharing": {"admissionFairSharingStatus": {"consumedResources": {"cpu": "1"}}}},  # no lastUpdate
        {
            "fairSharing": {
                "admissionFairSharingStatus": {"consumedResources": {"cpu": "x"}, "lastUpdate": NOW}
            }
        },
    ],
)
def test_no_recent_usage_to_resume(queue_status: Obj | None) -> None:
    assert convert.local_queue_usage(local_queue(status=queue_status)) is None


def test_recent_usage_status_as_kueue_writes_it() -> None:
    written = convert.local_queue_usage_status({"cpu": Quantity(31999)}, epoch_seconds(NOW) + 0.7)  # type: ignore[operator]
    # Kueue's docs example: {"admissionFairSharingStatus":{"consumedResources":{"cpu":"31999m"},
    # "lastUpdate":"2025-06-03T14:25:15Z"},"weightedShare":0}
    assert written == {
        "weightedShare": 0,
        "admissionFairSharingStatus": {"consumedResources": {"cpu": "31999m"}, "lastUpdate": NOW},
    }
    again = local_queue(status={"fairSharing": written})
    assert convert.local_queue_usage(again) == ({"cpu": Quantity(31999)}, epoch_seconds(NOW))


# --- the LocalQueue status the reporter writes ----------------------------------------------


def lq_status(obj: Obj, fair_sharing: Obj | None = None) -> Obj | None:
    return status.local_queue_status(
        obj, pending=0, admitted=0, usage={}, cluster_queue_active=True, now=NOW, fair_sharing=fair_sharing
    )


def test_status_without_a_sample_leaves_fair_sharing_alone() -> None:
    assert "fairSharing" not in (lq_status(local_queue()) or {})
    kept = {"weightedShare": 0, "admissionFairSharingStatus": {"consumedResources": {}, "lastUpdate": NOW}}
    current = lq_status(local_queue())
    obj = local_queue(status={**(current or {}), "fairSharing": kept})
    assert lq_status(obj) is None  # nothing else changed: no write


def test_a_sample_replaces_the_usage_it_no_longer_has() -> None:
    old = convert.local_queue_usage_status({"cpu": Quantity(4000), "nvidia.com/gpu": Quantity(1000)}, 0.0)
    new = convert.local_queue_usage_status({"cpu": Quantity(2000)}, 300.0)
    written = lq_status(local_queue(status={"fairSharing": old}), new)
    assert written is not None
    # a merge patch: the resource no longer consumed is removed by a null
    assert written["fairSharing"]["admissionFairSharingStatus"]["consumedResources"] == {
        "nvidia.com/gpu": None,
        "cpu": "2",
    }
    emptied = lq_status(local_queue(status={"fairSharing": old}), convert.local_queue_usage_status({}, 300.0))
    assert emptied is not None
    assert emptied["fairSharing"]["admissionFairSharingStatus"]["consumedResources"] == {
        "cpu": None,
        "nvidia.com/gpu": None,
    }


def test_replacing_nulls_what_the_new_value_lacks_at_every_depth() -> None:
    assert status.replacing(None, {"a": 1}) == {"a": 1}
    assert status.replacing({"a": 1, "b": {"c": 1, "d": 2}}, {"b": {"c": 3}}) == {
        "a": None,
        "b": {"c": 3, "d": None},
    }
    assert status.replacing({"a": {"x": 1}}, {"a": {"x": 1}}) == {"a": {"x": 1}}
