"""The short cuts of the forecast's hot path give what the plain constructions give.

``Assignment.admission`` builds its PodSetAssignments without running their ``__post_init__``,
and ``QuotaBook.view`` takes an ``available`` the caller has just read: both must be equal to
what the plain construction or the fresh read gives, for any input.
"""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling.assignment import Assignment
from codeflare.scheduling.model import Admission, Cohort, PodSetAssignment
from codeflare.scheduling.quota import QuotaBook

from .helpers import cq

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
