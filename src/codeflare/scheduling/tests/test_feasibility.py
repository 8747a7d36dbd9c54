"""Feasibility of a described job: now, by preempting, waiting (position, start), never (figures)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.scheduling import AdmissionEngine, Preemption
from codeflare.scheduling.feasibility import check_feasibility
from codeflare.scheduling.tests.helpers import cq, engine_with, wl

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def two_queues(preemption: Preemption | None = None) -> AdmissionEngine:
    """ClusterQueue a: 32 cpu nominal, may borrow 16 from b (cohort co, b nominal 40)."""
    return engine_with(
        cq("a", {"default": {"cpu": ("32", "16")}}, cohort="co", preemption=preemption or Preemption()),
        cq("b", {"default": {"cpu": ("40",)}}, cohort="co"),
    )


def test_fits_now_names_queue_and_flavor() -> None:
    engine = two_queues()
    answer = check_feasibility(engine, 0.0, {}, wl("job", "lq-a", "8"))
    assert answer.verdict == "AdmitNow"
    assert answer.cluster_queue == "a" and answer.flavors == (("cpu", "default"),)
    assert answer.message == "would be admitted now in ClusterQueue a (flavor default)"
    assert engine.workload("ns/job") is None and engine.usage("a") == {}  # nothing created or charged


def test_never_gives_the_numbers() -> None:
    answer = check_feasibility(two_queues(), 0.0, {}, wl("big", "lq-a", "64"))
    assert answer.verdict == "Never" and not answer.ever
    assert answer.message == (
        "can never be admitted: needs cpu 64, the most ClusterQueue a can ever give is 48 in flavor "
        "default (nominal 32 + borrowing 16)"
    )
    assert [(lim.needs, lim.most, lim.nominal, lim.borrowing) for lim in answer.limits] == [
        (64000, 48000, 32000, 16000)
    ]


def test_never_when_the_queue_is_missing_or_resource_not_covered() -> None:
    assert check_feasibility(two_queues(), 0.0, {}, wl("j", "nope", "1")).verdict == "Never"
    gpu = wl("g", "lq-a", "1", extra={"nvidia.com/gpu": "1"})
    answer = check_feasibility(two_queues(), 0.0, {}, gpu)
    assert answer.verdict == "Never" and "nvidia.com/gpu" in answer.message


def test_waits_with_position_start_and_blockers() -> None:
    engine = two_queues()
    engine.add_workload(wl("running", "lq-a", "48"))
    engine.add_workload(wl("first", "lq-a", "40", created=1.0))
    engine.schedule(0.0)
    durations: dict[str, float | None] = {"ns/running": 100.0, "ns/first": 50.0}
    answer = check_feasibility(engine, 10.0, durations, wl("job", "lq-a", "40"), 5.0)
    assert answer.verdict == "Wait"
    assert answer.position == 1 and answer.estimated_start == 150.0
    assert answer.behind == ("ns/first",)
    assert "would wait: position 2 in ClusterQueue a, estimated start" in answer.message
    unknown = check_feasibility(engine, 10.0, {"ns/running": None, "ns/first": 50.0}, wl("job", "lq-a", "40"))
    assert unknown.verdict == "Wait" and unknown.estimated_start is None
    assert "no bound" in unknown.message and "ns/running" in unknown.message


def test_admitted_by_preempting_names_victims() -> None:
    engine = two_queues(preemption=Preemption("LowerPriority"))
    engine.add_workload(wl("low", "lq-a", "32", priority=0))
    engine.add_workload(wl("lender", "lq-b", "40"))  # b uses all it has: nothing to borrow
    engine.schedule(0.0)
    answer = check_feasibility(
        engine, 1.0, {"ns/low": None, "ns/lender": None}, wl("high", "lq-a", "32", priority=5)
    )
    assert answer.verdict == "AdmitByPreempting", answer.message
    assert answer.preempts == ("ns/low",)
    assert engine.admission("ns/low") is not None  # the real one keeps running


@SETTINGS
@given(need=st.integers(1, 100), used=st.integers(0, 48))
def test_property_never_exactly_when_beyond_nominal_plus_borrowing(need: int, used: int) -> None:
    engine = two_queues()
    engine.add_workload(wl("busy", "lq-a", str(used)))
    engine.schedule(0.0)
    answer = check_feasibility(engine, 1.0, {"ns/busy": 30.0}, wl("job", "lq-a", str(need)), 10.0)
    assert (answer.verdict == "Never") == (need > 48)
    if need <= 48 - used:
        assert answer.verdict == "AdmitNow"
    elif need <= 48:
        assert answer.verdict == "Wait" and answer.estimated_start == 30.0
