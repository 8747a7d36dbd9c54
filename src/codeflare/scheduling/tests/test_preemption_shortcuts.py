"""The plans answered before collecting candidates give what the full search gives."""

from codeflare.scheduling import AdmissionEngine, Preemption
from codeflare.scheduling.preemption import Preemptor, _plan, _tree_levels, plan_preemption

from .helpers import cq, engine_with, wl


def _cohort_with_borrower() -> AdmissionEngine:
    """a (4 CPU, reclaims) uses 2, b (4 CPU) uses 6 (borrowing 2): the cohort is full."""
    a = cq("a", {"default": {"cpu": ("4",)}}, cohort="c", preemption=Preemption(reclaim_within_cohort="Any"))
    b = cq("b", {"default": {"cpu": ("4",)}}, cohort="c")
    engine = engine_with(a, b)
    engine.add_workload(wl("a1", "lq-a", "2"))
    engine.schedule(0)
    engine.add_workload(wl("b1", "lq-b", "6", created=1))
    assert list(engine.schedule(1).admissions) == ["ns/b1"]
    return engine


def _preemptor(engine: AdmissionEngine, cpu_milli: int) -> Preemptor:
    cache = engine.state.cache
    fr = ("default", "cpu")
    return Preemptor(cache.compiled("a"), 0, 5.0, {fr: cpu_milli}, frozenset((fr,)), "ns/x")


def test_a_request_over_nominal_reclaims_nothing_and_the_full_search_agrees() -> None:
    engine = _cohort_with_borrower()
    cache = engine.state.cache
    preemptor = _preemptor(engine, 4000)  # 2 used + 4 > 4 nominal: reclaiming would mean borrowing
    assert not plan_preemption(cache.ctx, preemptor, cache.admitted_by_cq).possible
    full = _plan(cache.ctx, preemptor, list(cache.admitted.values()), _tree_levels(cache.book, preemptor))
    assert not full.possible
    engine.add_workload(wl("a2", "lq-a", "4", created=2))
    result = engine.schedule(2)
    assert not result.preemptions
    assert "preemption cannot free enough quota" in result.pending["ns/a2"].message


def test_a_request_within_nominal_still_reclaims() -> None:
    engine = _cohort_with_borrower()
    cache = engine.state.cache
    plan = plan_preemption(cache.ctx, _preemptor(engine, 2000), cache.admitted_by_cq)
    assert [(v.key, reason) for v, reason in plan.victims] == [("ns/b1", "InCohortReclamation")]
    engine.add_workload(wl("a3", "lq-a", "2", created=2))
    assert [p.victim for p in engine.schedule(2).preemptions] == ["ns/b1"]
