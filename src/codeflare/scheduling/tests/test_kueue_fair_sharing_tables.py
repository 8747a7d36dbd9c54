"""Kueue's unit-test tables for dominant resource shares, ported as data and run on our engine.

Sources (kubernetes-sigs/kueue, read at tag v0.19.2, commit 8eab6877; both files are unchanged
on main up to ff69552e, 2026-08-22):

- ``pkg/cache/scheduler/fair_sharing_test.go``: ``TestDominantResourceShare`` (the share of every
  ClusterQueue and Cohort of a small tree, optionally with a workload under evaluation),
  ``TestIsBorrowingOn`` (which flavor-resources a queue borrows on) and
  ``TestPreciseWeightedShareSerialized`` (the unrounded weighted share);
- ``pkg/scheduler/preemption/fairsharing/ordering_test.go``: ``TestMakeClusterQueueOrdering``
  (the order in which fair preemption visits target queues, highest share first);
- ``pkg/scheduler/fair_sharing_iterator_test.go`` does not exist in v0.19.2 nor on main; its only
  version is in pull request #13729/#13730 (commit 5b320a2e), ``TestFairSharingIteratorPush``, a
  single scenario of the admission tournament, ported below as one row.

Each row cites its Kueue file, test function and case name. Quantities are written as Kubernetes
quantities ("3" CPUs, "7" GPUs); Kueue's tables hold CPU in milli-units and GPUs in units, the
same amounts. Every row applies and passes except the serialized-share rows, whose Kueue check
(a log string) has no counterpart: they carry the reason in ``differs``, the test asserts it, and
runs the part that does apply (the value compared). No engine change was needed for any row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from codeflare.k8s.quantity import Quantity
from codeflare.scheduling import ClusterQueue, Cohort, FlavorQuotas, ResourceGroup, ResourceQuota
from codeflare.scheduling.fairsharing import (
    MAX_SHARE,
    Contender,
    Share,
    _Targets,
    cohort_share,
    fair_winner,
    queue_share,
    weighted_shares,
)
from codeflare.scheduling.preemption import AdmittedWorkload
from codeflare.scheduling.queues import order_key
from codeflare.scheduling.quota import FlavorResource, QuotaBook

GPU = "example.com/gpu"
CACHE_TEST = "pkg/cache/scheduler/fair_sharing_test.go"
ORDERING_TEST = "pkg/scheduler/preemption/fairsharing/ordering_test.go"
ITERATOR_TEST = "pkg/scheduler/fair_sharing_iterator_test.go@5b320a2e (PR #13729, unmerged)"

# flavor -> resource -> nominal, or (nominal, borrowing limit, lending limit)
Quotas = Mapping[str, Mapping[str, str | tuple[str, str | None, str | None]]]


@dataclass(frozen=True)
class Node:
    """A ClusterQueue (``queue=True``) or a Cohort of a case; ``parent`` is the cohort above."""

    name: str
    parent: str | None = None
    quotas: Quotas = field(default_factory=dict)
    weight: float = 1.0
    queue: bool = True


def cq(name: str, parent: str | None, quotas: Quotas, weight: float = 1.0) -> Node:
    return Node(name, parent, quotas, weight, True)


def cohort(name: str, parent: str | None = None, quotas: Quotas | None = None, weight: float = 1.0) -> Node:
    return Node(name, parent, quotas or {}, weight, False)


def _groups(quotas: Quotas) -> tuple[ResourceGroup, ...]:
    """One resource group over every flavor, as Kueue's cases write them (a flavor's resources
    in one group; flavors listing the same resources side by side)."""
    if not quotas:
        return ()
    flavors = []
    covered: list[str] = []
    for flavor, resources in quotas.items():
        entries = []
        for resource, value in resources.items():
            nominal, borrow, lend = value if isinstance(value, tuple) else (value, None, None)
            entries.append(ResourceQuota(resource, Quantity.parse(nominal), _opt(borrow), _opt(lend)))
            if resource not in covered:
                covered.append(resource)
        flavors.append(FlavorQuotas(flavor, tuple(entries)))
    return (ResourceGroup(tuple(covered), tuple(flavors)),)


def _opt(value: str | None) -> Quantity | None:
    return None if value is None else Quantity.parse(value)


def _book(nodes: tuple[Node, ...]) -> QuotaBook:
    """A quota book with the case's queues, then its cohorts (Kueue's order of adding them)."""
    book = QuotaBook()
    for node in nodes:
        if node.queue:
            spec = ClusterQueue(node.name, _groups(node.quotas), cohort=node.parent, fair_weight=node.weight)
            book.set_queue(spec, node.name)
    for node in nodes:
        if not node.queue:
            book.set_cohort(Cohort(node.name, node.parent, _groups(node.quotas), node.weight), node.name)
    return book


def _amounts(amounts: dict[tuple[str, str], str]) -> dict[FlavorResource, int]:
    return {fr: Quantity.parse(value).milli for fr, value in amounts.items()}


# -- TestDominantResourceShare -----------------------------------------------------------------
@dataclass(frozen=True)
class DrsCase:
    case: str  # Kueue's case name
    nodes: tuple[Node, ...]
    usage: dict[tuple[str, str], str]  # charged to "cq" (Kueue admits one workload per entry)
    want: dict[str, tuple[int, str, bool]]  # node -> weighted share, dominant resource, borrowing
    workload: dict[tuple[str, str], str] = field(default_factory=dict)  # flvResQ, evaluated on "cq"
    source: str = f"{CACHE_TEST} TestDominantResourceShare"
    note: str = ""  # how the value comes about, or where Kueue gets it differently


NONE = (0, "", False)
CPU_GPU_2_5 = {"default": {"cpu": "2", GPU: "5"}}
LENDER_8_5 = cq("lending-cq", "test-cohort", {"default": {"cpu": "8", GPU: "5"}})

DRS_CASES = [
    DrsCase(
        "no cohort",
        (cq("cq", None, {"default": {"cpu": "2000", GPU: "5"}}),),
        {("default", "cpu"): "1", ("default", GPU): "2"},
        {"cq": NONE},
    ),
    DrsCase(
        "usage below nominal",
        (cq("cq", "test-cohort", CPU_GPU_2_5), LENDER_8_5),
        {("default", "cpu"): "1", ("default", GPU): "2"},
        {"cq": NONE, "lending-cq": NONE, "test-cohort": NONE},
    ),
    DrsCase(
        "usage above nominal",
        (cq("cq", "test-cohort", CPU_GPU_2_5), LENDER_8_5),
        {("default", "cpu"): "3", ("default", GPU): "7"},
        {"cq": (200, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
        note="gpu (7-5)/10 beats cpu (3-2)/10",
    ),
    DrsCase(
        "usage slightly above nominal in a cohort with large quotas",
        (
            cq("cq", "test-cohort", {"default": {GPU: "500"}}),
            cq("lending-cq", "test-cohort", {"default": {GPU: "1000"}}, weight=300),
        ),
        {("default", GPU): "501"},
        {"cq": (1, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
        note="1/1500 per mille is 0.67, rounded up",
    ),
    DrsCase(
        "usage way above nominal in a cohort with large quotas and weights",
        (
            cq("cq", "test-cohort", {"default": {GPU: "500"}}, weight=300),
            cq("lending-cq", "test-cohort", {"default": {GPU: "1000"}}, weight=300),
        ),
        {("default", GPU): "800"},
        {"cq": (1, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
        note="300/1500 per mille is 200, over weight 300 is 0.67, rounded up",
    ),
    DrsCase(
        "one resource above nominal",
        (cq("cq", "test-cohort", CPU_GPU_2_5), LENDER_8_5),
        {("default", "cpu"): "3", ("default", GPU): "3"},
        {"cq": (100, "cpu", True), "lending-cq": NONE, "test-cohort": NONE},
    ),
    DrsCase(
        "usage with workload above nominal",
        (cq("cq", "test-cohort", CPU_GPU_2_5), LENDER_8_5),
        {("default", "cpu"): "1", ("default", GPU): "2"},
        {"cq": (300, "cpu", True), "lending-cq": NONE, "test-cohort": NONE},
        workload={("default", "cpu"): "4", ("default", GPU): "4"},
        note="(1+4-2)/10 cpu beats (2+4-5)/10 gpu",
    ),
    DrsCase(
        "A resource with zero lendable",
        (
            cq("cq", "test-cohort", {"default": {"cpu": "2", GPU: ("2", None, "0")}}),
            cq("lending-cq", "test-cohort", {"default": {"cpu": "8", GPU: ("64", None, "0")}}),
        ),
        {("default", "cpu"): "1", ("default", GPU): "1"},
        {"cq": (300, "cpu", True), "lending-cq": NONE, "test-cohort": NONE},
        workload={("default", "cpu"): "4", ("default", GPU): "4"},
        note="gpu is borrowed (5 > 2) but nothing of it is lendable: it cannot be dominant",
    ),
    DrsCase(
        "multiple flavors",
        (
            cq("cq", "test-cohort", {"on-demand": {"cpu": "20"}, "spot": {"cpu": "80"}}),
            cq("lending-cq", "test-cohort", {"default": {"cpu": "100"}}),
        ),
        {("on-demand", "cpu"): "15", ("spot", "cpu"): "5"},
        {"cq": (25, "cpu", True), "lending-cq": NONE, "test-cohort": NONE},
        workload={("on-demand", "cpu"): "10"},
        note="borrowed cpu is summed over flavors, over lendable cpu of every flavor (200)",
    ),
    DrsCase(
        "above nominal with integer weight",
        (
            cq("cq", "test-cohort", {"default": {GPU: "5"}}, weight=2),
            cq("lending-cq", "test-cohort", {"default": {GPU: "5"}}),
        ),
        {("default", GPU): "7"},
        {"cq": (100, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
    ),
    DrsCase(
        "above nominal with decimal weight",
        (
            cq("cq", "test-cohort", {"default": {GPU: "5"}}, weight=0.5),
            cq("lending-cq", "test-cohort", {"default": {GPU: "5"}}),
        ),
        {("default", GPU): "7"},
        {"cq": (400, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
    ),
    DrsCase(
        "above nominal with zero weight",
        (
            cq("cq", "test-cohort", {"default": {GPU: "5"}}, weight=0),
            cq("lending-cq", "test-cohort", {"default": {GPU: "10"}}),
        ),
        {("default", GPU): "7"},
        {"cq": (MAX_SHARE, GPU, True), "lending-cq": NONE, "test-cohort": NONE},
        note="Kueue's math.MaxInt is the largest int64 on its 64-bit builds",
    ),
    DrsCase(
        "cohort has resource share",
        (
            cq("cq", "child-cohort", {"default": {GPU: "5"}}),
            cohort("child-cohort", "root", weight=2),
            cohort("root", None, {"default": {GPU: "45"}}),
        ),
        {("default", GPU): "10"},
        {"cq": (100, GPU, True), "child-cohort": (50, GPU, True), "root": NONE},
    ),
    DrsCase(
        "resource share defined for resources only available at the root cohort",
        (
            cq("cq", "child-cohort", {"default": {GPU: "0"}}),
            cohort("child-cohort", "root", weight=2),
            cohort("root", None, {"default": {GPU: "50"}}),
        ),
        {("default", GPU): "10"},
        {"cq": (200, GPU, True), "child-cohort": (100, GPU, True), "root": NONE},
    ),
    DrsCase(
        "resource share affected by borrowing limit",
        (
            cq("cq", "child-cohort", {"default": {GPU: "0"}}),
            cohort("child-cohort", "root", {"default": {GPU: ("0", "10", None)}}),
            cohort("root", None, {"default": {GPU: "50"}}),
        ),
        {("default", GPU): "10"},
        {"cq": (1000, GPU, True), "child-cohort": (200, GPU, True), "root": NONE},
        note="the queue sees 10 lendable (the cohort's borrowing limit), the cohort 50",
    ),
    DrsCase(
        "borrowing against unlimited lendable capacity (exabyte-scale quota)",
        (
            cq("cq", "test-cohort", {"default": {"cpu": "0"}}),
            cq("lending-cq", "test-cohort", {"default": {"cpu": "1E"}}),
        ),
        {("default", "cpu"): "1"},
        {"cq": (1, "cpu", True), "lending-cq": NONE, "test-cohort": NONE},
        note=(
            "Kueue saturates 1E CPUs in milli-units to its int64 'unlimited' sentinel; our quotas "
            "are exact integers (10^21 milli): the ratio is tiny either way and rounds up to 1"
        ),
    ),
]


def _evaluated(book: QuotaBook, case: DrsCase) -> dict[str, Share]:
    """Every node's share, with the case's workload (if any) counted on "cq".

    Kueue's test adds the workload's request to the usage of each node it evaluates; our engine
    evaluates a candidate as its tournament does, charging it to its queue (and so up the tree).
    For the nodes of these cases both read the same: the workload's flavor-resources are within
    the lending queue's quota or not in it, and the cohort is a root.
    """
    workload = _amounts(case.workload)
    book.charge("cq", workload, 1, record=False)
    try:
        shares = {name: queue_share(book, name) for name in book.queues}
        shares.update({name: cohort_share(node) for name, node in book.cohorts.items()})
    finally:
        book.charge("cq", workload, -1, record=False)
    return shares


@pytest.mark.parametrize("case", DRS_CASES, ids=[c.case for c in DRS_CASES])
def test_dominant_resource_share_table(case: DrsCase) -> None:
    assert case.source and case.case
    book = _book(case.nodes)
    book.charge("cq", _amounts(case.usage), 1)
    shares = _evaluated(book, case)
    got = {name: (s.weighted_share(), s.resource, s.borrowing) for name, s in shares.items()}
    assert got == case.want, case.note
    if not case.workload:
        # the status values the engine reports (weightedShare of ClusterQueues, and of Cohort
        # objects: implicit cohorts such as "test-cohort" have no status to report)
        queues, cohorts = weighted_shares(book)
        assert queues == {n.name: case.want[n.name][0] for n in case.nodes if n.queue}
        assert cohorts == {n.name: case.want[n.name][0] for n in case.nodes if not n.queue}


# -- TestIsBorrowingOn -------------------------------------------------------------------------
@dataclass(frozen=True)
class BorrowingOnCase:
    case: str
    usage: dict[tuple[str, str], str]  # charged to "cq" (cpu 2, gpu 5) beside "lending-cq" (8, 5)
    requested: dict[tuple[str, str], str] | None  # the flavor-resources a candidate asks for
    want_borrowing_on_requested: bool
    want_borrowing: bool
    source: str = f"{CACHE_TEST} TestIsBorrowingOn"


CPU, GPU_FR = ("default", "cpu"), ("default", GPU)
BORROWING_ON_CASES = [
    BorrowingOnCase("borrows on requested flavor", {CPU: "3"}, {CPU: "1"}, True, True),
    BorrowingOnCase("borrows on unrequested flavor only", {CPU: "1", GPU_FR: "7"}, {CPU: "1"}, False, True),
    BorrowingOnCase("borrows on both, requests one", {CPU: "3", GPU_FR: "7"}, {GPU_FR: "1"}, True, True),
    BorrowingOnCase("no borrowing", {CPU: "1", GPU_FR: "2"}, {CPU: "1"}, False, False),
    BorrowingOnCase("nil requestedFRs", {CPU: "3"}, None, False, True),
]


@pytest.mark.parametrize("case", BORROWING_ON_CASES, ids=[c.case for c in BORROWING_ON_CASES])
def test_is_borrowing_on_table(case: BorrowingOnCase) -> None:
    assert case.source and case.case
    book = _book(
        (cq("cq", "cohort", CPU_GPU_2_5), cq("lending-cq", "cohort", {"default": {"cpu": "8", GPU: "5"}}))
    )
    book.charge("cq", _amounts(case.usage), 1)
    share = queue_share(book, "cq")
    assert share.borrowing is case.want_borrowing
    # what the tournament reads (fairsharing._tournament): the borrowed flavor-resources met by
    # those the candidate asks a positive amount of
    asked = {fr for fr, v in _amounts(case.requested or {}).items() if v > 0}
    assert (not share.borrowed.isdisjoint(asked)) is case.want_borrowing_on_requested


# -- TestPreciseWeightedShareSerialized --------------------------------------------------------
@dataclass(frozen=True)
class PreciseCase:
    case: str
    weight: float
    ratio: float  # unweighted, per mille
    serialized: str  # Kueue's PreciseWeightedShareSerialized
    key: tuple[int, float]  # what our Share.key() must be
    differs: str = (
        "not applicable as such: Kueue serializes the unrounded share for its log lines only "
        "('+Inf' for a zero weight that borrows) and the engine writes no such line. Ported: "
        "the comparable value Share.key() that the tournament and preemption order by (a zero "
        "weight that borrows ranks above every finite share, as +Inf does)"
    )
    source: str = f"{CACHE_TEST} TestPreciseWeightedShareSerialized"


PRECISE_CASES = [
    PreciseCase("zero weight returning Inf", 0.0, 100.0, "+Inf", (1, 100.0)),
    PreciseCase("zero unweighted ratio returns 0", 1.0, 0.0, "0", (0, 0.0)),
    PreciseCase("regular integer division", 2.0, 400.0, "200", (0, 200.0)),
    PreciseCase("decimal division", 4.0, 10.0, "2.5", (0, 2.5)),
]


@pytest.mark.parametrize("case", PRECISE_CASES, ids=[c.case for c in PRECISE_CASES])
def test_precise_weighted_share_table(case: PreciseCase) -> None:
    assert case.source and case.case
    assert "not applicable" in case.differs and "log" in case.differs
    share = Share(case.weight, case.ratio)
    assert share.key() == case.key
    if case.serialized == "+Inf":
        assert share.key() > Share(1.0, 1e300).key()
        assert share.weighted_share() == MAX_SHARE
    else:
        assert share.key() == (0, float(case.serialized))


# -- TestMakeClusterQueueOrdering --------------------------------------------------------------
@dataclass(frozen=True)
class OrderingCase:
    case: str
    nodes: tuple[Node, ...]
    admitted: tuple[tuple[str, str, str], ...]  # workload, ClusterQueue, cpu (charged, and candidates)
    preemptor: str
    candidate_queues: tuple[str, ...]
    want: tuple[str, ...]
    actions: tuple[str, ...] = ()  # per target yielded: "drop" drops its queue, else a workload is popped
    source: str = f"{ORDERING_TEST} TestMakeClusterQueueOrdering"


def _cpu(name: str, parent: str | None, nominal: str) -> Node:
    return cq(name, parent, {"default": {"cpu": nominal}})


FLAT = (_cpu("preemptor", "all", "4"), _cpu("high", "all", "2"), _cpu("low", "all", "2"))
TWO_IN_HIGH = (("h1", "high", "3"), ("h2", "high", "2"), ("l1", "low", "3"))
ORDERING_CASES = [
    OrderingCase(
        "no cohort: preemptor CQ yielded for in-CQ preemption; repro for nil pointer panic issue",
        (_cpu("preemptor", None, "4"),),
        (("wl1", "preemptor", "1"),),
        "preemptor",
        ("preemptor",),
        ("preemptor",),
    ),
    OrderingCase(
        "no cohort: DropQueue ends the iteration with candidates remaining",
        (_cpu("preemptor", None, "4"),),
        (("wl1", "preemptor", "1"), ("wl2", "preemptor", "1")),
        "preemptor",
        ("preemptor",),
        ("preemptor",),
        ("drop",),
    ),
    OrderingCase(
        "non-borrowing CQ is pruned even with candidates",
        (_cpu("preemptor", "all", "4"), _cpu("target", "all", "5")),
        (("t1", "target", "2"),),
        "preemptor",
        ("target",),
        (),
    ),
    OrderingCase(
        "higher DRS CQ returned before lower DRS CQ",
        FLAT,
        (("h1", "high", "5"), ("l1", "low", "3")),
        "preemptor",
        ("high", "low"),
        ("high", "low"),
    ),
    OrderingCase(
        "CQ with highest DRS returned again while it still has candidates",
        FLAT,
        TWO_IN_HIGH,
        "preemptor",
        ("high", "low"),
        ("high", "high", "low"),
    ),
    OrderingCase(
        "drop queue prevents CQ from being returned again",
        FLAT,
        TWO_IN_HIGH,
        "preemptor",
        ("high", "low"),
        ("high", "low"),
        ("drop", "pop"),
    ),
    OrderingCase(
        "hierarchical cohorts: higher-DRS subtree visited first",
        (
            _cpu("preemptor-cq", "root", "4"),
            _cpu("left-cq", "left-cohort", "2"),
            _cpu("right-cq", "right-cohort", "2"),
            cohort("root"),
            cohort("left-cohort", "root"),
            cohort("right-cohort", "root"),
        ),
        (("lc1", "left-cq", "5"), ("rc1", "right-cq", "3")),
        "preemptor-cq",
        ("left-cq", "right-cq"),
        ("left-cq", "right-cq"),
    ),
]


@pytest.mark.parametrize("case", ORDERING_CASES, ids=[c.case for c in ORDERING_CASES])
def test_cluster_queue_ordering_table(case: OrderingCase) -> None:
    assert case.source and case.case
    book = _book(case.nodes)
    candidates = []
    for name, queue, cpu in case.admitted:
        usage = _amounts({CPU: cpu})
        book.charge(queue, usage, 1)
        if queue in case.candidate_queues:
            candidates.append(AdmittedWorkload(f"ns/{name}", 0, 0.0, 0.0, queue, usage))
    order = _Targets(book, case.preemptor, candidates)
    got: list[str] = []
    for target in order:
        step = len(got)
        got.append(target)
        if step < len(case.actions) and case.actions[step] == "drop":
            order.drop(target)
        else:
            order.pop(target)
        assert len(got) <= 50, "the ordering does not end"
    assert tuple(got) == case.want


# -- TestFairSharingIteratorPush (pull request #13729, not merged) -----------------------------
def test_fair_sharing_iterator_push_scenario() -> None:
    """``pkg/scheduler/fair_sharing_iterator_test.go`` at 5b320a2e, TestFairSharingIteratorPush:
    iter-a (2 CPUs, borrowing limit 8) and iter-b (8) in iter-cohort, workloads of 1 CPU, a1 < a2
    < b1 < b2 by age. a1 goes first; once iter-a holds 3 CPUs, b1 beats the older a2 (iter-a
    would borrow, iter-b not); then a2, then b2 pushed after the rest. Kueue's iterator is
    stateful (pop/push); ours picks each next winner with fair_winner over the heads left."""
    book = _book(
        (
            cq("iter-a", "iter-cohort", {"default": {"cpu": ("2", "8", None)}}),
            cq("iter-b", "iter-cohort", {"default": {"cpu": "8"}}),
            cohort("iter-cohort"),
        )
    )
    one = _amounts({CPU: "1"})

    def head(queue: str, name: str, age: float) -> Contender:
        return Contender(queue, one, order_key(0, -age, f"default/{name}"))

    a1, a2, b1, b2 = (
        head("iter-a", "a1", 4),
        head("iter-a", "a2", 3),
        head("iter-b", "b1", 2),
        head("iter-b", "b2", 1),
    )
    popped = [fair_winner(book, {"iter-a": a1, "iter-b": b1})]
    assert popped == ["iter-a"]
    book.charge("iter-a", _amounts({CPU: "3"}), 1)  # as Kueue's test: iter-a now uses 3
    popped.append(fair_winner(book, {"iter-a": a2, "iter-b": b1}))
    popped.append(fair_winner(book, {"iter-a": a2}))
    popped.append(fair_winner(book, {"iter-b": b2}))
    assert popped == ["iter-a", "iter-b", "iter-a", "iter-b"]  # a1, b1, a2, b2
    # without the share, queue order alone would have put a2 before b1
    assert a2.order < b1.order
