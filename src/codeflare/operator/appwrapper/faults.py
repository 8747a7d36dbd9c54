"""The fault-tolerance knobs of one AppWrapper: operator defaults, overridden per AppWrapper.

Each knob may be overridden by the annotation ``workload.codeflare.dev.appwrapper/<knob>``
(``<knob>Duration`` is accepted too, as the upstream project spells duration knobs). Durations
are Go-style ("30s", "5m"); grace periods are clamped to 24h and ``successTTL`` to the
configuration's ceiling. Exit codes are classified by ``terminalExitCodes`` and
``retryableExitCodes`` (comma-separated integers). A bad annotation is reported and ignored,
never fatal. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from codeflare.k8s.constants import APPWRAPPER_ANNOTATION_PREFIX
from codeflare.operator.config import GRACE_PERIOD_MAXIMUM, SUCCESS_TTL_MAXIMUM, FaultToleranceConfig
from codeflare.operator.durations import DurationError, format_duration, parse_duration

__all__ = ["FaultTolerance", "fault_tolerance"]

# knob name -> (attribute, ceiling)
_DURATION_KNOBS: dict[str, tuple[str, timedelta]] = {
    "admissionGracePeriod": ("admission_grace_period", GRACE_PERIOD_MAXIMUM),
    "warmupGracePeriod": ("warmup_grace_period", GRACE_PERIOD_MAXIMUM),
    "failureGracePeriod": ("failure_grace_period", GRACE_PERIOD_MAXIMUM),
    "retryPausePeriod": ("retry_pause_period", GRACE_PERIOD_MAXIMUM),
    "forcefulDeletionGracePeriod": ("forceful_deletion_grace_period", GRACE_PERIOD_MAXIMUM),
    "successTTL": ("success_ttl", SUCCESS_TTL_MAXIMUM),
}


@dataclass(frozen=True)
class FaultTolerance:
    """Effective knobs of one AppWrapper."""

    admission_grace_period: timedelta
    warmup_grace_period: timedelta
    failure_grace_period: timedelta
    retry_pause_period: timedelta
    retry_limit: int
    forceful_deletion_grace_period: timedelta
    success_ttl: timedelta
    terminal_exit_codes: frozenset[int] = frozenset()
    retryable_exit_codes: frozenset[int] | None = None

    def is_terminal(self, exit_code: int) -> bool:
        """Whether a container that exited with ``exit_code`` must not be retried."""
        if exit_code in self.terminal_exit_codes:
            return True
        return self.retryable_exit_codes is not None and exit_code not in self.retryable_exit_codes

    def any_terminal(self, exit_codes: Iterable[int]) -> bool:
        return any(self.is_terminal(code) for code in exit_codes)


def fault_tolerance(
    defaults: FaultToleranceConfig, annotations: Mapping[str, str] | None
) -> tuple[FaultTolerance, list[str]]:
    """The effective knobs and one message per annotation that was ignored or clamped."""
    annotations = annotations or {}
    problems: list[str] = []
    values: dict[str, object] = {attr: getattr(defaults, attr) for attr, _ in _DURATION_KNOBS.values()}
    for knob, (attr, ceiling) in _DURATION_KNOBS.items():
        key, text = _lookup(annotations, knob, f"{knob}Duration")
        if text is None:
            continue
        duration = _duration(key, text, ceiling, problems)
        if duration is not None:
            values[attr] = duration
    retry_limit = defaults.retry_limit
    key, text = _lookup(annotations, "retryLimit")
    if text is not None:
        parsed = _int(text)
        if parsed is None or parsed < 0:
            problems.append(f"{key}: expected a non-negative integer, got {text!r}; using {retry_limit}")
        else:
            retry_limit = parsed
    key, text = _lookup(annotations, "terminalExitCodes")
    terminal = _exit_codes(key, text, problems) if text is not None else frozenset()
    key, text = _lookup(annotations, "retryableExitCodes")
    retryable = _exit_codes(key, text, problems) if text is not None else None
    knobs = FaultTolerance(
        retry_limit=retry_limit,
        terminal_exit_codes=terminal or frozenset(),
        retryable_exit_codes=retryable,
        **values,  # type: ignore[arg-type]
    )
    return knobs, problems


def _lookup(annotations: Mapping[str, str], *knobs: str) -> tuple[str, str | None]:
    for knob in knobs:
        key = APPWRAPPER_ANNOTATION_PREFIX + knob
        if key in annotations:
            return key, str(annotations[key])
    return APPWRAPPER_ANNOTATION_PREFIX + knobs[0], None


def _duration(key: str, text: str, ceiling: timedelta, problems: list[str]) -> timedelta | None:
    try:
        value = parse_duration(text.strip())
    except DurationError:
        problems.append(f'{key}: invalid duration {text!r} (expected e.g. "30s", "5m"); ignored')
        return None
    if value < timedelta(0):
        problems.append(f"{key}: must not be negative, got {text!r}; ignored")
        return None
    if value > ceiling:
        problems.append(f"{key}: {text} exceeds the maximum {format_duration(ceiling)}; clamped")
        return ceiling
    return value


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def _exit_codes(key: str, text: str, problems: list[str]) -> frozenset[int] | None:
    codes: set[int] = set()
    for part in text.split(","):
        if not part.strip():
            continue
        code = _int(part)
        if code is None:
            problems.append(f"{key}: expected comma-separated integers, got {text!r}; ignored")
            return None
        codes.add(code)
    return frozenset(codes)
