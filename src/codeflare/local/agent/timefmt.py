"""INTERIM: RFC 3339 helpers until codeflare.k8s.timestamps lands (then this module goes)."""

from __future__ import annotations

import contextlib
import datetime


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def format_time(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    with contextlib.suppress(ValueError):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return None


def now_rfc3339() -> str:
    return format_time(now())


def micro_now() -> str:
    return now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_timestamp(seconds: float) -> str:
    return format_time(datetime.datetime.fromtimestamp(seconds, datetime.UTC))
