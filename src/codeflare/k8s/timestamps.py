"""RFC 3339 timestamps as the Kubernetes API writes them: one formatter per precision, one parser.

``metav1.Time`` fields (creationTimestamp, lastTransitionTime, ...) are written to the second
with a ``Z`` (:func:`format_rfc3339`); ``metav1.MicroTime`` fields (Lease renewTime, Event
eventTime) carry microseconds (:func:`format_micro`). :func:`parse_rfc3339` reads both, any
fraction and any UTC offset, and is the only parser. Formatters take an aware or naive-UTC
``datetime`` or POSIX seconds. Clocks are read only by the ``now*`` helpers, so pure code can be
handed the time instead. No durations, no time zones other than UTC on output.
"""

from __future__ import annotations

import datetime
import re

__all__ = [
    "epoch_seconds",
    "format_micro",
    "format_rfc3339",
    "now",
    "now_micro",
    "now_rfc3339",
    "parse_rfc3339",
]

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)

When = datetime.datetime | float | int


def _utc(when: When) -> datetime.datetime:
    if isinstance(when, datetime.datetime):
        if when.tzinfo is None:
            return when.replace(tzinfo=datetime.UTC)
        return when.astimezone(datetime.UTC)
    return datetime.datetime.fromtimestamp(when, datetime.UTC)


def format_rfc3339(when: When) -> str:
    """``when`` as a ``metav1.Time``: ``2024-05-01T12:00:00Z`` (fractions are dropped)."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro(when: When) -> str:
    """``when`` as a ``metav1.MicroTime``: ``2024-05-01T12:00:00.123456Z``."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(text: str) -> datetime.datetime:
    """An aware UTC ``datetime`` from an RFC 3339 string; ``ValueError`` when it is not one.

    Accepts ``Z`` or an offset, and a fraction of any length (digits beyond microseconds are
    dropped, as Kubernetes' nanoseconds would not fit a ``datetime``).
    """
    match = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not an RFC 3339 timestamp")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction, _, sign, off_hours, off_minutes = match.groups()[6:]
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    offset = datetime.timedelta(0)
    if sign:
        offset = datetime.timedelta(hours=int(off_hours), minutes=int(off_minutes))
        if sign == "-":
            offset = -offset
    zone = datetime.timezone(offset)
    moment = datetime.datetime(year, month, day, hour, minute, second, micros, tzinfo=zone)
    return moment.astimezone(datetime.UTC)


def epoch_seconds(text: str | None) -> float | None:
    """POSIX seconds of an RFC 3339 string, or None when it is missing or malformed."""
    if not text:
        return None
    try:
        return parse_rfc3339(text).timestamp()
    except ValueError:
        return None


def now() -> datetime.datetime:
    """The current time, aware, in UTC."""
    return datetime.datetime.now(datetime.UTC)


def now_rfc3339() -> str:
    """The current time as a ``metav1.Time`` string."""
    return format_rfc3339(now())


def now_micro() -> str:
    """The current time as a ``metav1.MicroTime`` string."""
    return format_micro(now())
