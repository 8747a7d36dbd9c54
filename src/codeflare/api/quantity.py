"""Kubernetes resource quantities ("500m", "8Gi", "1e3"), parsed and formatted exactly.

Manifests carry quantities as strings; client-side validation must compare them (limits against
requests, quota against usage) without float rounding, so values are :class:`~decimal.Decimal`
numbers of base units (cores, bytes, devices). Also here: the conversions the SDK needs for Ray
(``--num-cpus`` is a whole number), memory in bytes, and the codeflare-sdk convention that a bare
number of memory means GiB. Formatting is exact: nothing is rounded, unlike Kubernetes' canonical
form which rounds up below 1n. Pure functions; no knowledge of which resource a quantity belongs to.
"""

from __future__ import annotations

import decimal
import math
import re
from decimal import Decimal

__all__ = [
    "QuantityError",
    "canonical",
    "compare",
    "cpu_quantity",
    "format_quantity",
    "is_quantity",
    "memory_bytes",
    "memory_quantity",
    "parse_quantity",
    "ray_num_cpus",
    "whole_count",
]

QuantityInput = str | int | float | Decimal

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL.items()}
_QUANTITY_RE = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<exponent>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))$"
)
# Quantities of a few hundred digits stay exact; Decimal's default context keeps only 28.
_EXACT = decimal.Context(prec=400, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
GIB = 1024**3


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity; the message says why."""


def parse_quantity(value: QuantityInput) -> Decimal:
    """The exact value of ``value`` in base units: ``"500m"`` -> 0.5, ``"1Ki"`` -> 1024.

    Strings follow Kubernetes' grammar (signed decimal number, then a binary suffix Ki..Ei, a
    decimal suffix n/u/m/k/M/G/T/P/E, or an integer exponent ``e3``). Numbers are taken as they
    are (floats through their shortest repr, so ``0.1`` is exactly 0.1). Booleans, NaN and
    infinities are refused.
    """
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity (a boolean)")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
        if not number.is_finite():
            raise QuantityError(f"{value!r} is not a finite quantity")
        return number
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a finite quantity")
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity (a {type(value).__name__})")
    match = _QUANTITY_RE.match(value)
    if match is None:
        raise QuantityError(
            f"{value!r} is not a quantity (expected a number with an optional suffix such as "
            "500m, 2, 8Gi, 1e3)"
        )
    number = Decimal(match["number"])
    if match["binary"]:
        return _EXACT.multiply(number, Decimal(1024 ** _BINARY[match["binary"]]))
    if match["exponent"]:
        return _EXACT.scaleb(number, Decimal(int(match["exponent"][1:])))
    return _EXACT.scaleb(number, Decimal(_DECIMAL[match["decimal"]]))


def is_quantity(value: object) -> bool:
    """Whether ``value`` parses as a quantity."""
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def format_quantity(value: QuantityInput, *, binary: bool = False) -> str:
    """The shortest exact string for ``value``: 0.5 -> "500m", 2000 -> "2k", 2**33 -> "8Gi" (binary).

    With ``binary``, whole values that are multiples of 1024 use the largest exact binary suffix
    (1536Mi stays "1536Mi"); otherwise the largest decimal suffix that leaves a whole number is
    used, down to "n". Values finer than a nano-unit are written with an exponent ("15e-12") so
    that ``parse_quantity(format_quantity(q)) == q`` always holds.
    """
    number = parse_quantity(value)
    if number.is_zero():
        return "0"
    sign = "-" if number < 0 else ""
    magnitude = number.copy_abs()  # abs() would round to the default 28 digits
    if binary and _is_whole(magnitude):
        whole = int(magnitude)
        for suffix, power in sorted(_BINARY.items(), key=lambda item: -item[1]):
            unit = 1024**power
            if whole % unit == 0:
                return f"{sign}{whole // unit}{suffix}"
    for exponent in sorted(_DECIMAL_BY_EXPONENT, reverse=True):
        mantissa = _EXACT.scaleb(magnitude, Decimal(-exponent))
        if _is_whole(mantissa):
            return f"{sign}{int(mantissa)}{_DECIMAL_BY_EXPONENT[exponent]}"
    digits, exponent = _integer_mantissa(magnitude)
    return f"{sign}{digits}e{exponent}"


def canonical(value: QuantityInput) -> str:
    """``value`` re-formatted; binary suffixes are kept binary ("1024Mi" -> "1Gi", "0.5" -> "500m")."""
    binary = isinstance(value, str) and _QUANTITY_RE.match(value) is not None and value[-1:] == "i"
    return format_quantity(value, binary=binary)


def compare(left: QuantityInput, right: QuantityInput) -> int:
    """-1, 0 or 1 as ``left`` is below, equal to or above ``right`` ("1000m" equals "1")."""
    a, b = parse_quantity(left), parse_quantity(right)
    return (a > b) - (a < b)


def cpu_quantity(value: QuantityInput) -> str:
    """A CPU amount as a manifest string: numbers are cores (0.5 -> "500m"), strings quantities."""
    return canonical(value)


def memory_quantity(value: QuantityInput) -> str:
    """A memory amount as a manifest string, following codeflare-sdk: a number means GiB (8 -> "8Gi",
    0.5 -> "512Mi"); a string is a quantity in bytes ("8Gi", "500M")."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity (a boolean)")
    if isinstance(value, int | float | Decimal):
        return format_quantity(_EXACT.multiply(parse_quantity(value), Decimal(GIB)), binary=True)
    return canonical(value)


def memory_bytes(value: QuantityInput) -> int:
    """Whole bytes of a memory quantity string, rounded up as Kubernetes does ("1.5Ki" -> 1536)."""
    return math.ceil(parse_quantity(value))


def ray_num_cpus(value: QuantityInput, *, minimum: int = 1) -> int:
    """The ``--num-cpus`` Ray should advertise for a container with this CPU limit.

    Ray counts whole CPUs. We round *down* so Ray never schedules more parallel tasks than the
    container may run without throttling ("1500m" -> 1), and never below ``minimum`` (1 by default,
    so a "500m" worker still runs tasks; pass 0 for a head that should take none). KubeRay, when it
    derives the value itself, rounds up; we always set it explicitly, so both runtimes agree.
    """
    return max(minimum, math.floor(parse_quantity(value)))


def whole_count(value: QuantityInput) -> int:
    """An extended resource amount (GPUs, ...) as an int; QuantityError unless it is a whole number."""
    number = parse_quantity(value)
    if not _is_whole(number):
        raise QuantityError(f"{value!r} is not a whole number (extended resources come in whole units)")
    return int(number)


def _is_whole(number: Decimal) -> bool:
    return number == number.to_integral_value(context=_EXACT)


def _integer_mantissa(number: Decimal) -> tuple[int, int]:
    sign, digits, exponent = number.normalize(context=_EXACT).as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)) or "0")
    return (-mantissa if sign else mantissa), exponent
