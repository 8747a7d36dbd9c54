"""The SDK's resource amounts as manifests and Ray need them: CPU, memory, whole devices.

Users write amounts the codeflare-sdk way: CPU as cores or a quantity (0.5, "500m"), memory as
a number of GiB or a quantity (8, "8Gi"), GPUs and other extended resources as whole numbers.
This module turns them into container resource strings and Ray start parameters. The quantity
grammar itself is :mod:`codeflare.k8s.quantity`'s; what lives here are the conventions on top
of it (the GiB default, Ray's whole CPUs). Pure functions.
"""

from __future__ import annotations

import math
from decimal import Decimal

from codeflare.k8s.quantity import (
    Format,
    QuantityError,
    QuantityInput,
    canonical,
    format_quantity,
    parse_quantity,
)

__all__ = ["GIB", "cpu_amount", "memory_amount", "ray_num_cpus", "whole_count"]

GIB = 1024**3


def cpu_amount(value: QuantityInput) -> str:
    """A CPU amount as a manifest string: numbers are cores (0.5 -> "500m"), strings quantities."""
    return canonical(value)


def memory_amount(value: QuantityInput) -> str:
    """A memory amount as a manifest string, following codeflare-sdk: a number means GiB (8 -> "8Gi",
    0.5 -> "512Mi"); a string is a quantity of bytes ("8Gi", "500M")."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity (a boolean)")
    if isinstance(value, int | float | Decimal):
        return format_quantity(parse_quantity(value) * GIB, Format.BINARY_SI)
    return canonical(value)


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
    if number != number.to_integral_value():
        raise QuantityError(f"{value!r} is not a whole number (extended resources come in whole units)")
    return int(number)
