"""Kubernetes resource quantities as exact integers of milli-units.

``parse_quantity`` turns "500m", "1.5Gi", "2e3" or "1k" into an ``int`` of milli-units (values
below a milli-unit round up, as the API server does); ``format_quantity`` writes one back in a
short canonical form. ``Quantity`` wraps the integer for model fields. No floats are used in
arithmetic, and no unit semantics (CPU vs bytes) are assumed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

_SUFFIXES: dict[str, Fraction] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_BINARY_OUT = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20))
_PATTERN = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(value: str | int | Quantity) -> int:
    """Return ``value`` in milli-units, exactly (sub-milli remainders round up)."""
    if isinstance(value, Quantity):
        return value.milli
    if isinstance(value, bool):
        raise QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return value * 1000
    match = _PATTERN.match(value.strip())
    if match is None:
        raise QuantityError(f"not a quantity: {value!r}")
    number, exponent, suffix = match.groups()
    amount = Fraction(number)
    if exponent:
        amount *= Fraction(10) ** int(exponent[1:])
    else:
        amount *= _SUFFIXES[suffix or ""]
    milli = amount * 1000
    return -((-milli.numerator) // milli.denominator)  # ceiling


def format_quantity(milli: int) -> str:
    """Write milli-units back as a short quantity string: "500m", "4", "16Gi"."""
    if milli % 1000:
        return f"{milli}m"
    units = milli // 1000
    for suffix, factor in _BINARY_OUT:
        if units and units % factor == 0:
            return f"{units // factor}{suffix}"
    return str(units)


@dataclass(frozen=True, order=True)
class Quantity:
    """An exact resource amount; ``milli`` is the amount in thousandths of a unit."""

    milli: int

    @classmethod
    def parse(cls, value: str | int | Quantity) -> Quantity:
        """Build from a quantity string, a whole number of units, or another Quantity."""
        if isinstance(value, Quantity):
            return value
        return cls(parse_quantity(value))

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.milli + other.milli)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.milli - other.milli)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.milli * factor)

    def __str__(self) -> str:
        return format_quantity(self.milli)
