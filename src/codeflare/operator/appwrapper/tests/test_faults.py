"""Fault-tolerance knobs: configuration defaults, per-AppWrapper annotations, clamping, exit codes."""

from __future__ import annotations

from datetime import timedelta

from codeflare.operator.appwrapper.faults import fault_tolerance
from codeflare.operator.config import FaultToleranceConfig

P = "workload.codeflare.dev.appwrapper/"
DEFAULTS = FaultToleranceConfig()


def test_defaults_come_from_the_configuration() -> None:
    knobs, problems = fault_tolerance(DEFAULTS, None)
    assert problems == []
    assert knobs.admission_grace_period == timedelta(minutes=1)
    assert knobs.warmup_grace_period == timedelta(minutes=5)
    assert knobs.failure_grace_period == timedelta(minutes=1)
    assert knobs.retry_pause_period == timedelta(seconds=90)
    assert knobs.retry_limit == 3
    assert knobs.forceful_deletion_grace_period == timedelta(minutes=10)
    assert knobs.success_ttl == timedelta(hours=168)
    assert not knobs.is_terminal(1)


def test_annotations_override_each_knob() -> None:
    knobs, problems = fault_tolerance(
        DEFAULTS,
        {
            P + "admissionGracePeriod": "5s",
            P + "warmupGracePeriod": "10s",
            P + "failureGracePeriod": "1s",
            P + "retryPausePeriod": "500ms",
            P + "retryLimit": "7",
            P + "forcefulDeletionGracePeriod": "2m",
            P + "successTTL": "1h",
        },
    )
    assert problems == []
    assert (knobs.admission_grace_period, knobs.warmup_grace_period, knobs.failure_grace_period) == (
        timedelta(seconds=5),
        timedelta(seconds=10),
        timedelta(seconds=1),
    )
    assert knobs.retry_pause_period == timedelta(milliseconds=500)
    assert knobs.retry_limit == 7
    assert knobs.forceful_deletion_grace_period == timedelta(minutes=2)
    assert knobs.success_ttl == timedelta(hours=1)


def test_upstream_duration_suffix_is_accepted() -> None:
    knobs, _ = fault_tolerance(DEFAULTS, {P + "failureGracePeriodDuration": "3s"})
    assert knobs.failure_grace_period == timedelta(seconds=3)


def test_grace_periods_are_clamped_to_a_day() -> None:
    knobs, problems = fault_tolerance(DEFAULTS, {P + "warmupGracePeriod": "48h", P + "successTTL": "1000h"})
    assert knobs.warmup_grace_period == timedelta(hours=24)
    assert knobs.success_ttl == timedelta(hours=168)
    assert len(problems) == 2 and all("clamped" in p for p in problems)


def test_bad_annotations_are_reported_and_ignored() -> None:
    knobs, problems = fault_tolerance(
        DEFAULTS,
        {
            P + "failureGracePeriod": "soon",
            P + "retryLimit": "-1",
            P + "retryPausePeriod": "-5s",
            P + "terminalExitCodes": "1,x",
        },
    )
    assert knobs.failure_grace_period == timedelta(minutes=1)
    assert knobs.retry_limit == 3
    assert knobs.retry_pause_period == timedelta(seconds=90)
    assert knobs.terminal_exit_codes == frozenset()
    assert len(problems) == 4
    assert any(P + "retryLimit" in p for p in problems)


def test_terminal_exit_codes() -> None:
    knobs, _ = fault_tolerance(DEFAULTS, {P + "terminalExitCodes": "42, 43,"})
    assert knobs.is_terminal(42) and knobs.is_terminal(43)
    assert not knobs.is_terminal(1)
    assert knobs.any_terminal([1, 43])


def test_retryable_exit_codes_make_every_other_code_terminal() -> None:
    knobs, _ = fault_tolerance(DEFAULTS, {P + "retryableExitCodes": "137,143"})
    assert not knobs.is_terminal(137)
    assert knobs.is_terminal(1)
