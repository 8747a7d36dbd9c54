"""Go-style duration strings ("90s", "5m", "1h30m", "500ms") to and from ``timedelta``.

The operator configuration and AppWrapper annotations write durations the way Kubernetes
components do (Go's ``time.ParseDuration`` syntax), so admins can copy values between the
Go-based projects and ours. This module only parses and renders; which durations are allowed
(non-negative, clamped to a ceiling) is decided by the code that owns each knob.
Resolution is the microsecond (``timedelta``'s); nanosecond values are truncated.
"""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = ["DurationError", "format_duration", "parse_duration"]

# Unit suffixes accepted by Go's time.ParseDuration, with their length in microseconds.
_UNIT_MICROSECONDS: dict[str, float] = {
    "ns": 0.001,
    "us": 1,
    "µs": 1,  # U+00B5 micro sign
    "μs": 1,  # U+03BC Greek mu
    "ms": 1_000,
    "s": 1_000_000,
    "m": 60_000_000,
    "h": 3_600_000_000,
}
_COMPONENT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
# Largest first: a duration is rendered with the largest unit that represents it exactly.
_RENDER_UNITS: tuple[tuple[str, int], ...] = (
    ("h", 3_600_000_000),
    ("m", 60_000_000),
    ("s", 1_000_000),
    ("ms", 1_000),
    ("us", 1),
)


class DurationError(ValueError):
    """The text is not a Go-style duration."""


def parse_duration(text: str) -> timedelta:
    """Parse ``text`` ("90s", "1h30m", "-2m", "0") into a timedelta, as Go's ParseDuration does.

    Raises DurationError for anything else, including a bare number other than "0" (Go requires
    a unit) and surrounding whitespace.
    """
    if not isinstance(text, str):
        raise DurationError(f"expected a string, got {type(text).__name__}")
    body, sign = text, 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return timedelta(0)
    if not body:
        raise DurationError(f"invalid duration {text!r}")
    total, position = 0.0, 0
    for match in _COMPONENT.finditer(body):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNIT_MICROSECONDS[match.group(2)]
        position = match.end()
    if position != len(body):
        raise DurationError(f"invalid duration {text!r}")
    return sign * timedelta(microseconds=int(total))


def format_duration(value: timedelta) -> str:
    """Render ``value`` in the largest unit that states it exactly: "90s", "5m", "168h", "500ms".

    The output always parses back to the same timedelta with ``parse_duration`` and with Go's
    ParseDuration. Zero is "0s", as Go writes it.
    """
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    if micros == 0:
        return "0s"
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    for unit, size in _RENDER_UNITS:
        if micros % size == 0:
            return f"{sign}{micros // size}{unit}"
    raise AssertionError("unreachable: every timedelta is a whole number of microseconds")
