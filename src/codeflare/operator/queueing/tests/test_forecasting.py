"""The forecast publication rules and the run-time history, as pure functions and data."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.k8s.constants import ESTIMATE_UNBOUNDED, ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.operator.queueing.forecasting import (
    annotations_of,
    declared_duration,
    needs_write,
    waiting_for_words,
)
from codeflare.operator.queueing.runtimes import RUNS_KEPT, RunTimeHistory, finished_run
from codeflare.scheduling.forecast import Estimate

NOW = 1_800_000_000.0


def test_declared_duration_order() -> None:
    assert (
        declared_duration(
            {"spec": {"maximumExecutionTimeSeconds": 60}}, {"spec": {"activeDeadlineSeconds": 5}}
        )
        == 60.0
    )
    assert declared_duration({"spec": {}}, {"spec": {"activeDeadlineSeconds": 5}}) == 5.0
    assert declared_duration({"spec": {}}, None) is None
    assert declared_duration({"spec": {"maximumExecutionTimeSeconds": True}}, None) is None


def test_a_requeued_workload_has_only_its_remaining_execution_time_left() -> None:
    # the operator deactivates at the maximum counted over every admission (maxexec)
    spec = {"maximumExecutionTimeSeconds": 60}
    def used(seconds: int) -> dict[str, object]:
        return {"spec": spec, "status": {"accumulatedPastExecutionTimeSeconds": seconds}}

    assert declared_duration(used(45), None) == 15.0
    assert declared_duration(used(90), None) == 1.0


def test_waiting_for_names_only_own_namespace() -> None:
    estimate = Estimate("a/x", NOW, waiting_for=("a/one", "b/secret", "c/other"))
    assert waiting_for_words(estimate, "a") == "one and 2 workloads of other namespaces"
    assert (
        waiting_for_words(Estimate("a/x", NOW, waiting_for=("b/s",)), "a") == "1 workload of other namespaces"
    )
    assert annotations_of(Estimate("a/x", None), "a") == {ESTIMATED_START_ANNOTATION: ESTIMATE_UNBOUNDED,
                                                         WAITING_FOR_ANNOTATION: ""}  # fmt: skip


CASES = [  # (written, new start, rewrite?)
    (None, NOW + 50, True),
    (ESTIMATE_UNBOUNDED, NOW + 50, True),
    (ESTIMATE_UNBOUNDED, None, False),
    (format_rfc3339(NOW + 50), None, True),
    (format_rfc3339(NOW + 50), NOW + 55, False),  # within 10 s
    (format_rfc3339(NOW + 50), NOW + 61, True),
    (format_rfc3339(NOW + 1000), NOW + 1080, False),  # within 10% of the 1000 s wait
    (format_rfc3339(NOW + 1000), NOW + 1200, True),
    ("garbage", NOW + 1, True),
]


def test_rewrite_only_beyond_tolerance() -> None:
    for written, start, expected in CASES:
        current = {} if written is None else {ESTIMATED_START_ANNOTATION: written}
        assert needs_write(current, Estimate("a/x", start), NOW) is expected, (written, start)


@given(start=st.floats(NOW, NOW + 86400))
def test_a_written_estimate_is_stable(start: float) -> None:
    values = annotations_of(Estimate("a/x", start), "a")
    assert not needs_write(values, Estimate("a/x", start), NOW)


def finished(uid: str, reserved: str, done: str) -> dict:  # type: ignore[type-arg]
    return {
        "metadata": {"uid": uid},
        "status": {"conditions": [
            {"type": "QuotaReserved", "status": "True", "lastTransitionTime": reserved},
            {"type": "Finished", "status": "True", "lastTransitionTime": done},
        ]},
    }  # fmt: skip


def test_history_median_once_per_uid_and_survives_a_restart() -> None:
    run = finished_run(finished("u1", "2026-01-01T00:00:00Z", "2026-01-01T00:01:40Z"))
    assert run is not None and run[1] == 100.0
    assert finished_run({"status": {"conditions": []}}) is None
    history = RunTimeHistory()
    assert history.observe("u1", "ns", "q", "shape", run[0], 100.0)
    assert not history.observe("u1", "ns", "q", "shape", run[0], 100.0)
    for i, seconds in enumerate((10.0, 30.0)):
        history.observe(f"u{i + 2}", "ns", "q", "shape", run[0] + i, seconds)
    assert history.expected("ns", "q", "shape") == 30.0
    assert history.expected("ns", "q", "other") is None and history.knows_queue("ns", "q")
    restarted = RunTimeHistory()
    restarted.load(history.document())
    assert restarted.expected("ns", "q", "shape") == 30.0
    assert not restarted.observe("u0", "ns", "q", "shape", run[0] - 10, 5.0)  # recorded before the restart
    for i in range(RUNS_KEPT + 5):
        restarted.observe(f"n{i}", "ns", "q", "shape", run[0] + 10 + i, 7.0)
    assert restarted.expected("ns", "q", "shape") == 7.0 and len(restarted.runs["ns/q/shape"]) == RUNS_KEPT
    broken = RunTimeHistory()
    broken.load({"runtimes.json": "{not json"})
    assert broken.runs == {}
