"""The leaf checks of a compiled schema: formats, patterns, lengths, bounds, counts, uniqueness.

:mod:`codeflare.k8s.schema.node` builds one closure per keyword of a schema node (``maxLength``,
``pattern``, ``format``, ``minimum``, ``multipleOf``, ``minItems``, ``uniqueItems``...) from the
factories here; validation calls them with the value, its dotted path and the error list to
append to. Also the small helpers every part of the engine shares: JSON-value keys for
equality (``1 == 1.0``, ``True != 1``) and path joining. No tree walking happens here.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, cast

from codeflare.k8s.schema.field import ErrorType, FieldError

ROOT_PATH = "<root>"
Check = Callable[[Any, str, list[FieldError]], None]


def render(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def hashable(value: Any) -> Any:
    """A key equal for equal JSON values (1 == 1.0, True != 1), for enum/set/unique checks."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    return ("j", json.dumps(value, sort_keys=True))


class Pattern(Protocol):
    """A compiled ``pattern``: what :func:`pattern_check` needs of it."""

    def search(self, text: str) -> object | None: ...


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Pattern:
    """Compile a CRD ``pattern`` with RE2 semantics (linear time, as Kubernetes' Go ``regexp``).

    Kubernetes compiles ``pattern`` with Go's RE2 engine, so the syntax is RE2's (no
    backreferences, no lookaround, ``\\z`` for end of text); a pattern RE2 refuses raises
    ``re.error`` naming the reason, which the CRD's structural check turns into a 422. The
    ``google-re2`` binding (the ``server`` extra) is imported on first use. Without it - the
    SDK's base install, checking its own manifests against our own CRDs - Python's ``re`` is
    used; ``codeflare server`` refuses to start without RE2, so no client-supplied pattern is
    ever run by a backtracking engine in the server.
    """
    try:
        import re2
    except ImportError:
        return re.compile(pattern.replace(r"\z", r"\Z"), re.ASCII)
    options = re2.Options()
    options.log_errors = False  # the reason goes back to the client, not to stderr
    try:
        return cast(Pattern, re2.compile(pattern, options=options))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise re.error(f"error parsing regexp: {reason}") from None


_DATE = r"\d{4}-\d{2}-\d{2}"
_FORMATS: dict[str, re.Pattern[str]] = {
    "date": re.compile(_DATE),
    "date-time": re.compile(_DATE + r"[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"),
    "datetime": re.compile(_DATE + r"[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
    "uuid3": re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
    "uuid4": re.compile(
        r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}"
    ),
    "uuid5": re.compile(
        r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}"
    ),
    "hostname": re.compile(
        r"(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*\.?"
    ),
    "email": re.compile(r"[^@\s]+@[^@\s]+"),
    "mac": re.compile(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}|([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}"),
    "hexcolor": re.compile(r"#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})"),
    "duration": re.compile(
        r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+|\d+\s*(ns|us|ms|s|m|h|d|w"
        r"|seconds?|minutes?|hours?|days?|weeks?)"
    ),
}


def format_ok(fmt: str, value: str) -> bool:
    regex = _FORMATS.get(fmt)
    if regex is not None:
        return regex.fullmatch(value) is not None
    try:
        if fmt == "byte":
            base64.b64decode(value, validate=True)
        elif fmt == "ipv4":
            ipaddress.IPv4Address(value)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(value)
        elif fmt == "cidr":
            ipaddress.ip_network(value, strict=False)
    except (ValueError, binascii.Error):
        return False
    return True  # unknown formats (and int32, password, uri...) are not checked


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def shown_path(path: str) -> str:
    return path or ROOT_PATH


def max_length(limit: int) -> Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if len(value) > limit:
            errs.append(FieldError(ErrorType.TOO_LONG, shown_path(path), f"may not be longer than {limit}"))

    return check


def min_length(limit: int) -> Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if len(value) < limit:
            errs.append(
                FieldError(
                    ErrorType.INVALID, shown_path(path), f"should be at least {limit} chars long", value
                )
            )

    return check


def pattern_check(source: str, regex: Pattern) -> Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if regex.search(value) is None:
            errs.append(FieldError(ErrorType.INVALID, shown_path(path), f"should match '{source}'", value))

    return check


def format_check(fmt: str) -> Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if not format_ok(fmt, value):
            errs.append(FieldError(ErrorType.INVALID, shown_path(path), f"must be of type {fmt}", value))

    return check


def bound_check(bound: float, op: str, exclusive: bool) -> Check:
    if op == "min":
        word = "greater than" if exclusive else "greater than or equal to"
    else:
        word = "less than" if exclusive else "less than or equal to"
    detail = f"should be {word} {bound}"

    def check(value: float, path: str, errs: list[FieldError]) -> None:
        if op == "min":
            bad = value <= bound if exclusive else value < bound
        else:
            bad = value >= bound if exclusive else value > bound
        if bad:
            errs.append(FieldError(ErrorType.INVALID, shown_path(path), detail, value))

    return check


def multiple_of(factor: float) -> Check:
    def check(value: float, path: str, errs: list[FieldError]) -> None:
        if isinstance(value, int) and isinstance(factor, int):
            ok = value % factor == 0
        else:
            quotient = value / factor
            ok = math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9
        if not ok:
            errs.append(
                FieldError(ErrorType.INVALID, shown_path(path), f"should be a multiple of {factor}", value)
            )

    return check


def min_count(limit: int, word: str) -> Check:
    def check(value: Any, path: str, errs: list[FieldError]) -> None:
        if len(value) < limit:
            errs.append(
                FieldError(
                    ErrorType.INVALID, shown_path(path), f"should have at least {limit} {word}", len(value)
                )
            )

    return check


def max_count(limit: int, word: str) -> Check:
    def check(value: Any, path: str, errs: list[FieldError]) -> None:
        if len(value) > limit:
            errs.append(
                FieldError(
                    ErrorType.INVALID, shown_path(path), f"must have at most {limit} {word}", len(value)
                )
            )

    return check


def unique_items(value: list[Any], path: str, errs: list[FieldError]) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(value):
        key = hashable(item)
        if key in seen:
            errs.append(FieldError(ErrorType.DUPLICATE, f"{path}[{i}]", "", item))
        seen.add(key)


# --- defaulting and pruning helpers ------------------------------------------------------------
