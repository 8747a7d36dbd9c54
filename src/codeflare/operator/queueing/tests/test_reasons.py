"""When a pending reason is rewritten, and which queue events reach the engine (pure parts).

Kueue writes a Workload's QuotaReserved=False condition only when it changed
(pkg/workload/workload.go: UnsetQuotaReservationWithCondition returns whether SetStatusCondition
changed anything, reason or message), and only for the heads its cycle examined. We deliberately
differ in what "changed" means: our message carries usage figures ("in use N"), which move with
every admission, so a rewrite is decided by the reason's identity (kind, queue, which resource
of which flavor is short), not by its figures; the message written is the newest one.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.operator.queueing.feeder import status_only
from codeflare.operator.queueing.reasons import stable_identity
from codeflare.scheduling import PendingInfo, Shortfall

amounts = st.integers(min_value=0, max_value=10**9)


def quota_info(resource: str, requested: int, available: int, in_use: int) -> PendingInfo:
    short = Shortfall("quota", "cq", "default", resource, requested, available, nominal=20000, in_use=in_use)
    return PendingInfo("QuotaShortfall", short.message, "cq", (short,))


@given(amounts, amounts, amounts, amounts, amounts, amounts)
def test_figures_alone_do_not_change_the_identity(
    r1: int, a1: int, u1: int, r2: int, a2: int, u2: int
) -> None:
    first, second = quota_info("cpu", r1, a1, u1), quota_info("cpu", r2, a2, u2)
    assert stable_identity("Pending", first) == stable_identity("Pending", second)


@given(amounts, amounts, amounts)
def test_another_resource_reason_or_scale_out_text_does(requested: int, available: int, in_use: int) -> None:
    cpu = quota_info("cpu", requested, available, in_use)
    memory = quota_info("memory", requested, available, in_use)
    assert stable_identity("Pending", cpu) != stable_identity("Pending", memory)
    assert stable_identity("Pending", cpu) != stable_identity("Inadmissible", cpu)
    assert stable_identity("Pending", cpu) != stable_identity("Pending", cpu, "scaling out group g")


def test_fixed_messages_are_their_own_identity() -> None:
    gone = PendingInfo("NoLocalQueue", "LocalQueue a doesn't exist")
    other = PendingInfo("NoLocalQueue", "LocalQueue b doesn't exist")
    assert stable_identity("Inadmissible", gone) == stable_identity("Inadmissible", gone)
    assert stable_identity("Inadmissible", gone) != stable_identity("Inadmissible", other)


def queue(generation: int | None, deleting: str | None = None, pending: int = 0) -> dict[str, object]:
    meta: dict[str, object] = {"name": "q"}
    if generation is not None:
        meta["generation"] = generation
    if deleting:
        meta["deletionTimestamp"] = deleting
    return {"metadata": meta, "spec": {}, "status": {"pendingWorkloads": pending}}


# (event, new, old, status only?)
STATUS_ONLY_CASES = [
    ("MODIFIED", queue(1, pending=3), queue(1, pending=2), True),  # our counters written
    ("MODIFIED", queue(2), queue(1), False),  # spec changed: generation bumped by the server
    ("MODIFIED", queue(1, "2026-01-01T00:00:00Z"), queue(1), False),  # deletion started
    ("MODIFIED", queue(None), queue(None), False),  # no generation: cannot tell, so feed it
    ("MODIFIED", queue(1), None, False),  # no previous version known
    ("ADDED", queue(1), queue(1), False),
    ("DELETED", queue(1), queue(1), False),
]


def test_status_only_modifications() -> None:
    for event, new, old, expected in STATUS_ONLY_CASES:
        assert status_only(event, new, old) is expected, (event, new, old)
