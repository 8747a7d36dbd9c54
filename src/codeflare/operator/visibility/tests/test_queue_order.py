"""The positions' order is the queue's: every pending workload, across shape classes, by priority
then creation time then key (what ``AdmissionEngine.pending_order`` returns and Kueue's
``PendingWorkloadsInfo`` gives its visibility storage: the whole ClusterQueue queue sorted by its
ordering, inadmissible workloads included)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.scheduling.queues import PendingQueue, order_key

ops = st.lists(
    st.tuples(st.booleans(), st.integers(0, 9), st.integers(-2, 2), st.integers(0, 5), st.integers(0, 2)),
    max_size=40,
)


@given(ops)
def test_ordered_is_every_member_in_order_key_order(steps: list[tuple[bool, int, int, int, int]]) -> None:
    queue = PendingQueue("cq")
    alive: dict[str, tuple[int, float, str]] = {}
    for add, n, priority, created, shape in steps:
        key = f"ns/w{n}"
        if add:
            order = order_key(priority, float(created), key)
            queue.add(key, ((f"s{shape}", 1, (), None),), order)
            alive[key] = order
        else:
            queue.discard(key)
            alive.pop(key, None)
    assert queue.ordered() == [k for _, _, k in sorted(alive.values())]
