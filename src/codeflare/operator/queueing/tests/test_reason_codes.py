"""Kueue 0.19's QuotaReserved reasons from the engine's pending kinds (pure).

The cases are Kueue's facts: the workload controller's queue blockers
(pkg/controller/core/workload_controller.go getQueueBlocker: missing LocalQueue or ClusterQueue
Misconfigured, stopped or inactive Suspended), the scheduler's (pkg/scheduler/scheduler.go
nominate: namespace mismatch Misconfigured; DeferredFit WaitingForPreemptedWorkloads) and the
flavor assigner's (pkg/scheduler/flavorassigner/flavorassigner.go fitsResourceQuota: request
beyond PotentialAvailable ExceedsMaxQuota, else WaitingForQuota; resolveNoFitReason: least severe
across alternative flavors, most severe across resources). Where we differ: node capacity, which
Kueue does not check, is WaitingForQuota.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.operator.queueing import reason_codes as rc
from codeflare.scheduling import PendingInfo, Shortfall

KIND_CASES = [
    (PendingInfo("NoLocalQueue", "m"), False, rc.MISCONFIGURED),
    (PendingInfo("NoLocalQueue", "m"), True, rc.SUSPENDED),
    (PendingInfo("NoClusterQueue", "m", "cq"), False, rc.MISCONFIGURED),
    (PendingInfo("NamespaceNotSelected", "m", "cq"), False, rc.MISCONFIGURED),
    (PendingInfo("ClusterQueueStopped", "m", "cq"), False, rc.SUSPENDED),
    (PendingInfo("ClusterQueueInactive", "m", "cq"), False, rc.SUSPENDED),
    (PendingInfo("Inactive", "m"), False, rc.DEACTIVATED),
    (PendingInfo("NotCovered", "m", "cq"), False, rc.NO_MATCHING_FLAVOR),
    (PendingInfo("NoMatchingFlavor", "m", "cq"), False, rc.NO_MATCHING_FLAVOR),
    (PendingInfo("WaitingForPreemption", "m", "cq"), False, rc.WAITING_FOR_PREEMPTED),
    (PendingInfo("Queued", "m", "cq"), False, rc.PENDING_EVALUATION),
    (PendingInfo("BlockedByHead", "m", "cq"), False, rc.PENDING_EVALUATION),
    (PendingInfo("CapacityShortfall", "m", "cq"), False, rc.WAITING_FOR_QUOTA),
]


def test_each_kind_has_kueues_code() -> None:
    for info, stopped, expected in KIND_CASES:
        assert rc.quota_reserved_reason(info, stopped) == expected, info


def short(flavor: str, resource: str, requested: int, maximum: int | None) -> Shortfall:
    return Shortfall("quota", "cq", flavor, resource, requested, 0, maximum=maximum)


def test_beyond_the_maximum_in_every_flavor_exceeds_max_quota() -> None:
    beyond = (short("a", "cpu", 5000, 4000), short("b", "cpu", 5000, 1000))
    assert rc.shortfall_reason(beyond) == rc.EXCEEDS_MAX_QUOTA
    # one alternative flavor could hold it once quota frees: the least severe wins
    assert rc.shortfall_reason((*beyond, short("c", "cpu", 5000, 8000))) == rc.WAITING_FOR_QUOTA
    # co-requisites in one flavor: the most severe wins
    assert rc.shortfall_reason((short("a", "cpu", 1, 2), short("a", "memory", 9, 2))) == rc.EXCEEDS_MAX_QUOTA
    # no maximum known (capacity shortfalls, old engines): a wait
    assert rc.shortfall_reason((short("a", "cpu", 9, None),)) == rc.WAITING_FOR_QUOTA
    info = PendingInfo("QuotaShortfall", "m", "cq", beyond)
    assert rc.quota_reserved_reason(info) == rc.EXCEEDS_MAX_QUOTA


amounts = st.integers(min_value=0, max_value=10**6)


@given(st.lists(st.tuples(st.sampled_from("abc"), amounts, amounts), min_size=1, max_size=6))
def test_exceeds_max_exactly_when_no_flavor_could_ever_hold_it(tried: list[tuple[str, int, int]]) -> None:
    shortfalls = [short(f, "cpu", requested, maximum) for f, requested, maximum in tried]
    hopeless = {f: False for f, _, _ in tried}
    for f, requested, maximum in tried:
        hopeless[f] = hopeless[f] or requested > maximum
    expected = rc.EXCEEDS_MAX_QUOTA if all(hopeless.values()) else rc.WAITING_FOR_QUOTA
    assert rc.shortfall_reason(shortfalls) == expected


def test_legacy_reasons_are_kueues_fallbacks() -> None:
    assert rc.legacy_reason(rc.MISCONFIGURED) == rc.legacy_reason(rc.SUSPENDED) == "Inadmissible"
    for code in (
        rc.WAITING_FOR_QUOTA,
        rc.EXCEEDS_MAX_QUOTA,
        rc.NO_MATCHING_FLAVOR,
        rc.WAITING_FOR_PREEMPTED,
        rc.PENDING_EVALUATION,
    ):
        assert rc.legacy_reason(code) == "Pending"
    assert rc.legacy_reason(rc.DEACTIVATED) == rc.DEACTIVATED
    assert rc.legacy_reason("Pending") == "Pending"


def test_unadmitted_status_sets_both_conditions_once() -> None:
    now = "2026-01-01T00:00:00Z"
    new = rc.unadmitted_status({"status": {}}, rc.WAITING_FOR_QUOTA, "short of cpu", now)
    assert new is not None
    by_type = {c["type"]: c for c in new["conditions"]}
    reserved = by_type["QuotaReserved"]
    assert (reserved["status"], reserved["reason"]) == ("False", "WaitingForQuota")
    assert by_type["QuotaReserved"]["message"] == "short of cpu"
    assert (by_type["Admitted"]["status"], by_type["Admitted"]["reason"]) == ("False", "NoReservation")
    assert rc.unadmitted_status({"status": new}, rc.WAITING_FOR_QUOTA, "short of cpu", now) is None
