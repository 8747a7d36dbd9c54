"""The short cuts of the forecast's hot path give what the plain constructions give.

``Assignment.admission`` builds its PodSetAssignments without running their ``__post_init__``,
``QuotaBook.view`` takes an ``available`` the caller has just read, ``refit`` re-checks a
fitting assignment after usage was charged and released, ``regraded`` re-reads the shortfalls of one that
needs preemption after usage was charged and released, and views, shortfalls and reasons are made
without their ``__init__`` (``records.made``): each must be equal to what the plain
construction, the fresh read or a new flavor assignment gives, for any input.
"""

from __future__ import annotations

import pickle

from hypothesis import event, given, settings
from hypothesis import strategies as st

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.assignment import (
    FIT,
    NO_FIT,
    Assignment,
    AssignmentContext,
    assign_flavors,
    refit,
    regrade_of,
    regraded,
)
from codeflare.scheduling.model import (
    Admission,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    PodSetAssignment,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from codeflare.scheduling.quota import QuotaBook
from codeflare.scheduling.results import quota_reason

from .helpers import assert_plain, cq

RESOURCES = ("cpu", "memory", "pods")
usages = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 10**12), min_size=1)
pod_sets = st.lists(
    st.tuples(
        st.sampled_from(["main", "workers", "head"]),
        st.dictionaries(st.sampled_from(RESOURCES), st.sampled_from(["a", "b"])),
        usages,
        st.integers(1, 64),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(pod_sets, st.floats(0, 1e9, allow_nan=False))
def test_admission_equals_the_plain_construction(
    sets: list[tuple[str, dict[str, str], dict[str, int], int]], now: float
) -> None:
    assignment = Assignment("cq", pod_sets=sets)
    made = assignment.admission(now)
    plain = Admission(
        "cq",
        tuple(PodSetAssignment(n, f, {r: Quantity(v) for r, v in u.items()}, c) for n, f, u, c in sets),
        admitted_at=now,
    )
    assert made == plain
    assert pickle.loads(pickle.dumps(made)) == plain
    for (_, flavors, _, _), psa in zip(sets, made.pod_set_assignments, strict=True):
        flavors["cpu"] = "changed later"  # the assignment's dict is not the admission's
        assert psa.flavors.get("cpu") != "changed later"
        assert all(type(q) is Quantity for q in psa.resource_usage.values())


quota = st.tuples(
    st.integers(0, 8), st.one_of(st.none(), st.integers(0, 4)), st.one_of(st.none(), st.integers(0, 8))
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(quota, min_size=1, max_size=4),
    st.booleans(),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6000), st.sampled_from([1, -1])), max_size=20),
)
def test_view_with_the_available_just_read_equals_a_fresh_view(
    quotas: list[tuple[int, int | None, int | None]], nested: bool, charges: list[tuple[int, int, int]]
) -> None:
    book = QuotaBook()
    if nested:
        book.set_cohort(Cohort("left", parent="root"), "left")
    names = []
    for i, (nominal, borrow, lend) in enumerate(quotas):
        name = f"cq-{i}"
        spec = (str(nominal), None if borrow is None else str(borrow), None if lend is None else str(lend))
        cohort = "left" if nested and i % 2 else "root"
        book.set_queue(cq(name, {"default": {"cpu": spec}}, cohort=cohort), name)
        names.append(name)
    fr = ("default", "cpu")
    for index, amount, sign in charges:
        name = names[index % len(names)]
        if sign < 0:
            amount = min(amount, book.usage[name].get(fr, 0))
        book.charge(name, {fr: amount}, sign)
        for other in names:
            assert book.view(other, fr, book.available(other, fr)) == book.view(other, fr)
            assert_plain(book.view(other, fr))


def _group(
    resources: tuple[str, ...], flavors: tuple[str, ...], nominal: int, borrow: int | None = None
) -> ResourceGroup:
    limit = None if borrow is None else str(borrow)
    quotas = tuple(ResourceQuota(r, str(nominal), limit) for r in resources)
    return ResourceGroup(resources, tuple(FlavorQuotas(f, quotas) for f in flavors))


def _refit_queue(index: int, nominal: int, borrow: int | None, two_flavors: bool, pods: bool) -> ClusterQueue:
    """A queue of a resource group per resource (cpu, memory, and pods when covered), one flavor
    each unless ``two_flavors`` (then refit must leave the choice to the full assignment)."""
    groups = [
        _group(("cpu",), ("a", "c") if two_flavors else ("a",), nominal, borrow),
        _group(("memory",), ("b",), nominal, borrow),
    ]
    if pods:
        groups.append(_group(("pods",), ("b",), nominal, borrow))
    return ClusterQueue(f"cq-{index}", tuple(groups), cohort="left" if index % 2 else "root")


refit_queues = st.lists(
    st.tuples(st.integers(0, 8), st.one_of(st.none(), st.integers(0, 4)), st.booleans()),
    min_size=2,
    max_size=4,
)
refit_shape = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 3000), st.integers(0, 3000)), min_size=1, max_size=3
)
refit_charges = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3000), st.integers(0, 3000)), max_size=12
)


# queues, nested, pool, pods, shape, charges before, charges after, which of before to release
refit_inputs = (
    refit_queues, st.booleans(), st.integers(0, 12), st.booleans(), refit_shape, refit_charges,
    refit_charges, st.lists(st.booleans(), max_size=12),
)  # fmt: skip
Charges = list[tuple[int, int, int]]  # (queue index, cpu, memory) in milli-units


class RefitBook:
    """The book of the refit and regrade properties: queues ``_refit_queue`` builds, optionally
    under a nested cohort and a shared pool at the root, and a shape of pod sets."""

    def __init__(
        self, queues: list[tuple[int, int | None, bool]], nested: bool, pool: int, pods: bool,
        shape_sets: list[tuple[int, int, int]],
    ) -> None:  # fmt: skip
        self.book = book = QuotaBook()
        if nested:
            book.set_cohort(Cohort("left", parent="root"), "left")
        if pool:  # a shared pool at the root, to borrow from
            pooled = (_group(("cpu",), ("a",), pool), _group(("memory",), ("b",), pool))
            book.set_cohort(Cohort("root", None, pooled), "root")
        self.names = [f"cq-{i}" for i in range(len(queues))]
        for i, (nominal, borrow, two) in enumerate(queues):
            book.set_queue(_refit_queue(i, nominal, borrow, two and i == 0, pods), self.names[i])
        self.ctx = AssignmentContext(book, {f: ResourceFlavor(f) for f in "abc"})
        self.compiled = book.queues["cq-0"]
        self.shape = tuple(
            (f"ps{i}", count, tuple((r, v) for r, v in (("cpu", cpu), ("memory", memory)) if v), None)
            for i, (count, cpu, memory) in enumerate(shape_sets)
        )

    def charge(self, charges: Charges, released: list[bool] | None = None) -> None:
        """Charge each of ``charges``; with ``released``, release those marked True instead."""
        sign = 1 if released is None else -1
        for i, (index, cpu, memory) in enumerate(charges):
            if released is None or (i < len(released) and released[i]):
                usage = {("a", "cpu"): cpu, ("b", "memory"): memory}
                self.book.charge(self.names[index % len(self.names)], usage, sign)

    def assign(self) -> Assignment:
        return assign_flavors(self.ctx, self.compiled, self.shape, "w")


@settings(max_examples=300, deadline=None)
@given(*refit_inputs)
def test_refit_after_charges_and_releases_equals_a_new_flavor_assignment(
    queues: list[tuple[int, int | None, bool]], nested: bool, pool: int, pods: bool,
    shape_sets: list[tuple[int, int, int]], before: list[tuple[int, int, int]],
    after: list[tuple[int, int, int]], released: list[bool],
) -> None:  # fmt: skip
    tree = RefitBook(queues, nested, pool, pods, shape_sets)
    compiled = tree.compiled
    tree.charge(before)
    first = tree.assign()
    tree.charge(after)
    tree.charge(before, released)
    again = refit(tree.ctx, compiled, first)
    fresh = tree.assign()
    for record in (*fresh.shortfalls, quota_reason(fresh.shortfalls, "cq-0", fresh.mismatches)):
        assert_plain(record)  # made without __init__ on the hot path
    if first.mode != FIT or not compiled.one_flavor or fresh.mode != FIT:
        assert again is None
    else:
        assert again == fresh


@settings(max_examples=600, deadline=None)  # 5-15% regraded, the rest decided before
@given(*refit_inputs)
def test_regraded_after_charges_and_releases_equals_a_new_flavor_assignment(
    queues: list[tuple[int, int | None, bool]], nested: bool, pool: int, pods: bool,
    shape_sets: list[tuple[int, int, int]], before: list[tuple[int, int, int]],
    after: list[tuple[int, int, int]], released: list[bool],
) -> None:  # fmt: skip
    """Whenever ``regraded`` answers for an assignment that needs preemption, a new flavor
    assignment grades the same and gives exactly its shortfalls; under another configuration
    generation it never answers."""
    tree = RefitBook(queues, nested, pool, pods, shape_sets)
    ctx, compiled = tree.ctx, tree.compiled
    full = queues[0][0] * 1000
    tree.charge([(0, full, full)])  # its nominal quota in use: it must borrow or preempt
    tree.charge(before)
    first = tree.assign()
    memo = regrade_of(ctx, compiled, tree.shape, first, 7)
    if first.mode in (FIT, NO_FIT) or not compiled.one_flavor:
        assert memo is None
        return
    assert memo is not None
    assert regraded(ctx, compiled, memo, 8) is None
    tree.charge(after)
    tree.charge(before, released)
    answer = regraded(ctx, compiled, memo, 7)
    fresh = tree.assign()
    event("regraded" if answer is not None else "assigned again")
    if answer is not None:
        assert (fresh.mode, fresh.shortfalls, fresh.mismatches) == (first.mode, answer, ())
        assert fresh.usage == memo.usage
