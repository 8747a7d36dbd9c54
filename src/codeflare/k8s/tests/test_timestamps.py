"""RFC 3339: what the API writes (seconds with Z, micro-time) and what the one parser accepts."""

from __future__ import annotations

import datetime

import pytest

from codeflare.k8s import timestamps

UTC = datetime.UTC
MOMENT = datetime.datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)


def test_formats_seconds_and_micro_time() -> None:
    assert timestamps.format_rfc3339(MOMENT) == "2024-05-01T12:30:15Z"
    assert timestamps.format_micro(MOMENT) == "2024-05-01T12:30:15.123456Z"
    assert timestamps.format_rfc3339(MOMENT.timestamp()) == "2024-05-01T12:30:15Z"
    assert timestamps.format_rfc3339(MOMENT.replace(tzinfo=None)) == "2024-05-01T12:30:15Z"  # naive is UTC
    plus_two = MOMENT.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    assert timestamps.format_rfc3339(plus_two) == "2024-05-01T12:30:15Z"


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-05-01T12:30:15Z", MOMENT.replace(microsecond=0)),
    ("2024-05-01T12:30:15.123456Z", MOMENT),
    ("2024-05-01T12:30:15.123456789Z", MOMENT),  # nanoseconds: truncated to microseconds
    ("2024-05-01T12:30:15.5Z", MOMENT.replace(microsecond=500000)),
    ("2024-05-01T14:30:15+02:00", MOMENT.replace(microsecond=0)),
    ("2024-05-01T07:00:15-05:30", MOMENT.replace(microsecond=0)),
    ("2024-05-01t12:30:15z", MOMENT.replace(microsecond=0)),
])
def test_parser_accepts_both_precisions_and_offsets(text: str, expected: datetime.datetime) -> None:
    parsed = timestamps.parse_rfc3339(text)
    assert parsed == expected and parsed.tzinfo == UTC


@pytest.mark.parametrize(
    "text", ["", "2024-05-01", "2024-05-01T12:30:15", "yesterday", "2024-13-01T00:00:00Z"]
)
def test_parser_refuses_what_is_not_rfc3339(text: str) -> None:
    with pytest.raises(ValueError):
        timestamps.parse_rfc3339(text)
    assert timestamps.epoch_seconds(text) is None


def test_round_trips_and_epoch_seconds() -> None:
    assert timestamps.parse_rfc3339(timestamps.format_micro(MOMENT)) == MOMENT
    assert timestamps.epoch_seconds(timestamps.format_rfc3339(1_700_000_000)) == 1_700_000_000
    assert timestamps.epoch_seconds(None) is None


def test_now_helpers_are_utc_and_parse_back() -> None:
    assert timestamps.now().tzinfo == UTC
    before = timestamps.now().replace(microsecond=0)
    assert timestamps.parse_rfc3339(timestamps.now_rfc3339()) >= before
    assert timestamps.parse_rfc3339(timestamps.now_micro()) >= before
