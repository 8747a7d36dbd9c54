"""Kubernetes resource quantities ("500m", "8Gi", "1e3"): one parser and one formatter.

The grammar and the arithmetic are those of apimachinery's ``resource.Quantity``: a signed
decimal number (``1``, ``1.5``, ``.5``, ``1.``) followed by at most one suffix, either binary
(``Ki Mi Gi Ti Pi Ei``), decimal (``n u m k M G T P E`` or none) or a decimal exponent
(``e3``, ``E-2``); nothing else, no whitespace (``1e3Gi`` and ``" 1"`` are refused). A parsed
value is rounded up (away from zero) to a whole nano-unit and binary values are capped at
2^63-1, as the API server does, so the value here is the value a cluster would store.

What callers get: the exact :class:`~decimal.Decimal` value (:func:`parse_quantity`),
Kubernetes' integer views (:func:`milli_value`, :func:`int_value`, both rounded up like
``MilliValue()``/``Value()``), the canonical string (:func:`canonical`, :func:`format_quantity`),
comparison, and :class:`Quantity`, an integer count of milli-units for the scheduling engine's
exact arithmetic (:func:`format_milli` writes one back). No knowledge of which resource a
quantity measures (cores, bytes, devices) lives here; conventions such as "a bare number of
memory means GiB" belong to the SDK.
"""

from __future__ import annotations

import decimal
import enum
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Union

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "QuantityInput",
    "canonical",
    "compare",
    "format_milli",
    "format_quantity",
    "int_value",
    "is_quantity",
    "milli_value",
    "parse_quantity",
]

QuantityInput = Union[str, int, float, Decimal, "Quantity"]
"""What the functions here accept: a quantity string, a number of base units, or a Quantity."""


class Format(enum.Enum):
    """How a quantity is written back, as Kubernetes remembers it from the parsed string."""

    DECIMAL_SI = "DecimalSI"  # 500m, 2k, 1G
    BINARY_SI = "BinarySI"  # 8Gi, 512Mi
    DECIMAL_EXPONENT = "DecimalExponent"  # 1e3, 80e-3


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity; the message says why."""


_BINARY_SHIFT = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_POWER = {shift // 10: suffix for suffix, shift in _BINARY_SHIFT.items()}
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in _DECIMAL_EXPONENT.items()}
_GRAMMAR = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<exponent>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_NANO = Decimal("1e-9")
_MAX_BINARY = Decimal(2**63 - 1)  # apimachinery's maxAllowed
_INT32 = 2**31 - 1  # exponents beyond int32 are refused, as apimachinery's suffix parser does
_MI = 2**20
_MAX_UNITS = 2**63 - 1  # binary suffixes only below the binary cap, so the string parses back
_MILLI_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", _MI))  # largest first
_COUNTABLE_DIGITS = 100  # integer views of values >= 1e100 are refused (they would not fit anywhere)


def _context(value: Decimal) -> decimal.Context:
    """A context exact enough for ``value`` (Decimal's default keeps only 28 digits)."""
    digits = len(value.as_tuple().digits)
    return decimal.Context(prec=max(64, digits + 32), Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _round_to_nano(value: Decimal) -> Decimal:
    """``value`` rounded up (away from zero) to whole nano-units, as the API server stores it."""
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int) or exponent >= -9:
        return value
    return value.quantize(_NANO, rounding=decimal.ROUND_UP, context=_context(value))


def _parse_text(text: str) -> tuple[Decimal, Format]:
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{text!r} is not a quantity (expected a number with an optional suffix such as "
            "500m, 2, 8Gi, 1e3)"
        )
    number = Decimal(match["number"])
    exact = _context(number)
    if match["binary"]:
        value, fmt = exact.multiply(number, Decimal(2 ** _BINARY_SHIFT[match["binary"]])), Format.BINARY_SI
    elif match["exponent"]:
        power = int(match["exponent"][1:])
        if abs(power) > _INT32:
            raise QuantityError(f"{text!r} is not a quantity (exponent out of range)")
        value, fmt = exact.scaleb(number, power), Format.DECIMAL_EXPONENT
    else:
        value, fmt = exact.scaleb(number, _DECIMAL_EXPONENT[match["decimal"]]), Format.DECIMAL_SI
    magnitude = _round_to_nano(value.copy_abs())
    if fmt is Format.BINARY_SI:
        magnitude = min(magnitude, _MAX_BINARY)
        if 0 < magnitude < 1:
            fmt = Format.DECIMAL_SI  # as apimachinery does: a fraction of a unit is not binary
    return (magnitude.copy_negate() if value < 0 else magnitude), fmt


def _parse(value: QuantityInput) -> tuple[Decimal, Format]:
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity (a boolean)")
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, Quantity):
        return Decimal(value.milli).scaleb(-3), Format.DECIMAL_SI
    if isinstance(value, int):
        return Decimal(value), Format.DECIMAL_SI
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a finite quantity")
        return _round_to_nano(Decimal(repr(value))), Format.DECIMAL_SI
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise QuantityError(f"{value!r} is not a finite quantity")
        return _round_to_nano(value), Format.DECIMAL_SI
    raise QuantityError(f"{value!r} is not a quantity (a {type(value).__name__})")


def parse_quantity(value: QuantityInput) -> Decimal:
    """The value of ``value`` in base units, as Kubernetes stores it: ``"500m"`` -> 0.5, ``"1Ki"`` -> 1024.

    Numbers are taken as base units (floats through their shortest repr, so ``0.1`` is exactly
    0.1). Booleans, NaN and infinities are refused. Sub-nano amounts round up to 1n.
    """
    return _parse(value)[0]


def is_quantity(value: object) -> bool:
    """Whether ``value`` parses as a quantity."""
    try:
        _parse(value)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def _countable(value: QuantityInput) -> Decimal:
    number = parse_quantity(value)
    if number.adjusted() >= _COUNTABLE_DIGITS:
        raise QuantityError(f"{value!r} is too large to count")
    return number


def milli_value(value: QuantityInput) -> int:
    """Integer milli-units of ``value``, rounded up as Kubernetes' ``MilliValue()`` does ("1.5" -> 1500)."""
    number = _countable(value)
    return math.ceil(_context(number).scaleb(number, 3))


def int_value(value: QuantityInput) -> int:
    """Integer base units (bytes, cores, devices), rounded up as ``Value()`` does ("1.5Ki" -> 1536)."""
    return math.ceil(_countable(value))


def compare(left: QuantityInput, right: QuantityInput) -> int:
    """-1, 0 or 1 as ``left`` is below, equal to or above ``right`` ("1000m" equals "1")."""
    a, b = parse_quantity(left), parse_quantity(right)
    return (a > b) - (a < b)


def format_quantity(value: QuantityInput, fmt: Format = Format.DECIMAL_SI) -> str:
    """Kubernetes' canonical string of ``value`` written in ``fmt``.

    Decimal forms use the largest exponent that is a multiple of 3 and leaves a whole mantissa
    (0.5 -> "500m", 1500 -> "1500", 2000 -> "2k"; beyond "E", an exponent: "1e21"). Binary form
    applies only to whole values of at least 1024 and uses the largest binary suffix that leaves a
    whole mantissa (1536Mi stays "1536Mi", 1024Mi is "1Gi"); anything else falls back to decimal,
    as do values above the binary cap (2^63-1), so every result parses back to ``value``.
    """
    number = parse_quantity(value)
    if number.is_zero():
        return "0"
    sign, magnitude = ("-" if number < 0 else ""), number.copy_abs()
    if fmt is Format.BINARY_SI:
        if 1024 <= magnitude <= _MAX_BINARY and magnitude == magnitude.to_integral_value():
            return sign + _binary(int(magnitude))
        fmt = Format.DECIMAL_SI
    mantissa, exponent = _decimal_mantissa(magnitude)
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    suffix = _DECIMAL_BY_EXPONENT.get(exponent)
    return f"{sign}{mantissa}" + (suffix if suffix is not None else f"e{exponent}")


def canonical(value: QuantityInput) -> str:
    """``value`` as Kubernetes writes it back: in the format of the string it was parsed from.

    ``"1024Mi"`` -> ``"1Gi"``, ``"0.5Gi"`` -> ``"512Mi"``, ``"1000m"`` -> ``"1"``, ``"1.2e3"`` ->
    ``"1200"``; numbers are written in decimal form (0.5 -> ``"500m"``).
    """
    number, fmt = _parse(value)
    return format_quantity(number, fmt)


def _binary(whole: int) -> str:
    power = 0
    while whole % 1024 == 0 and power < 6:
        whole //= 1024
        power += 1
    return f"{whole}{_BINARY_BY_POWER.get(power, '')}"


def _decimal_mantissa(magnitude: Decimal) -> tuple[int, int]:
    """(mantissa, exponent) with ``exponent`` the largest multiple of 3 leaving a whole mantissa."""
    _, digits, exponent = magnitude.normalize(context=_context(magnitude)).as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)))
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def format_milli(milli: int) -> str:
    """A short exact string for an amount of milli-units, as the engine reports usage and shortfalls.

    Fractions of a unit are written in milli-units ("1500m"), whole amounts that are multiples of
    1Mi (up to the binary cap) with the largest binary suffix ("16Gi", "3Mi"), other whole amounts
    as plain units ("4"). Every result parses back to the same amount.
    """
    if milli % 1000:
        return f"{milli}m"
    units = milli // 1000
    if units and units % _MI == 0 and -_MAX_UNITS <= units <= _MAX_UNITS:
        for suffix, factor in _MILLI_BINARY:
            if units % factor == 0:
                return f"{units // factor}{suffix}"
    return str(units)


@dataclass(frozen=True, order=True)
class Quantity:
    """An amount as an integer of milli-units: exact, ordered, fast arithmetic for the engine."""

    milli: int

    @classmethod
    def parse(cls, value: QuantityInput) -> Quantity:
        """From a quantity string, a number of base units, or another Quantity (sub-milli rounds up)."""
        if isinstance(value, Quantity):
            return value
        return cls(milli_value(value))

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.milli + other.milli)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.milli - other.milli)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.milli * factor)

    def __str__(self) -> str:
        return format_milli(self.milli)
