"""The shared corpus of Kubernetes quantity strings: what parses, to what, and how it is written back.

Ported as data from Kubernetes' apimachinery ``pkg/api/resource/quantity_test.go``
(TestQuantityParse: the valid table and the ``invalid`` list; TestQuantityString and
TestQuantityParseEmit: canonical forms; TestQuantityCmp: comparisons), plus the cases our callers
relied on. Every test of quantity handling in this repository reads its cases from here, so there
is one definition of "a quantity" to agree with.
"""

from __future__ import annotations

from decimal import Decimal

from codeflare.k8s.quantity import Format

D, B, X = Format.DECIMAL_SI, Format.BINARY_SI, Format.DECIMAL_EXPONENT
MAX_BINARY = Decimal(2**63 - 1)

# (input, value in base units, format Kubernetes records)
VALID: list[tuple[str, Decimal, Format]] = [
    ("0", Decimal(0), D), ("0n", Decimal(0), D), ("0u", Decimal(0), D), ("0m", Decimal(0), D),
    ("0Ki", Decimal(0), B), ("0k", Decimal(0), D), ("0Mi", Decimal(0), B), ("0M", Decimal(0), D),
    ("0Gi", Decimal(0), B), ("0G", Decimal(0), D), ("0Ti", Decimal(0), B), ("0T", Decimal(0), D),
    ("1", Decimal(1), D),
    # binary suffixes
    ("1Ki", Decimal(1024), B), ("8Ki", Decimal(8 * 1024), B), ("7Mi", Decimal(7 * 2**20), B),
    ("6Gi", Decimal(6 * 2**30), B), ("5Ti", Decimal(5 * 2**40), B), ("4Pi", Decimal(4 * 2**50), B),
    ("3Ei", Decimal(3 * 2**60), B), ("10Ti", Decimal(10 * 2**40), B), ("100Ti", Decimal(100 * 2**40), B),
    # decimal suffixes
    ("5n", Decimal("5e-9"), D), ("4u", Decimal("4e-6"), D), ("3m", Decimal("3e-3"), D),
    ("9", Decimal(9), D), ("8k", Decimal("8e3"), D), ("50k", Decimal("5e4"), D), ("7M", Decimal("7e6"), D),
    ("6G", Decimal("6e9"), D), ("5T", Decimal("5e12"), D), ("40T", Decimal("4e13"), D),
    ("300T", Decimal("3e14"), D), ("2P", Decimal("2e15"), D), ("1E", Decimal("1e18"), D),
    # decimal exponents
    ("1E-3", Decimal("1e-3"), X), ("1e3", Decimal("1e3"), X), ("1E6", Decimal("1e6"), X),
    ("1e9", Decimal("1e9"), X), ("1E12", Decimal("1e12"), X), ("1e15", Decimal("1e15"), X),
    ("1E18", Decimal("1e18"), X),
    # nonstandard but still parsable
    ("1e14", Decimal("1e14"), X), ("1e13", Decimal("1e13"), X), ("100.035k", Decimal(100035), D),
    # things that look like floating point
    ("0.001", Decimal("1e-3"), D), ("0.0005k", Decimal("0.5"), D), ("0.005", Decimal("5e-3"), D),
    ("0.05", Decimal("5e-2"), D), ("0.5", Decimal("0.5"), D), ("0.00050k", Decimal("0.5"), D),
    ("0.00500", Decimal("5e-3"), D), ("0.05000", Decimal("5e-2"), D), ("0.50000", Decimal("0.5"), D),
    ("0.5e0", Decimal("0.5"), X), ("0.5e-1", Decimal("5e-2"), X), ("0.5e-2", Decimal("5e-3"), X),
    ("10.035M", Decimal("10035e3"), D),
    ("1.2e3", Decimal("12e2"), X), ("1.3E+6", Decimal("13e5"), X), ("1.40e9", Decimal("14e8"), X),
    ("1.53E12", Decimal("153e10"), X), ("1.6e15", Decimal("16e14"), X), ("1.7E18", Decimal("17e17"), X),
    ("9.01", Decimal("9.01"), D), ("8.1k", Decimal("81e2"), D), ("7.123456M", Decimal(7123456), D),
    ("6.987654321G", Decimal(6987654321), D), ("5.444T", Decimal("5444e9"), D),
    ("40.1T", Decimal("401e11"), D), ("300.2T", Decimal("3002e11"), D), ("2.5P", Decimal("25e14"), D),
    ("1.01E", Decimal("101e16"), D),
    # things that saturate or round (up, to whole nano-units)
    ("3.001n", Decimal("4e-9"), D), ("1.1E-9", Decimal("2e-9"), X), ("0.0000000001", Decimal("1e-9"), D),
    ("0.0000000005", Decimal("1e-9"), D), ("0.00000000050", Decimal("1e-9"), D),
    ("0.5e-9", Decimal("1e-9"), X), ("0.9n", Decimal("1e-9"), D), ("0.00000012345", Decimal("124e-9"), D),
    ("0.00000012354", Decimal("124e-9"), D), ("9Ei", MAX_BINARY, B), ("9223372036854775807Ki", MAX_BINARY, B),
    ("12E", Decimal("12e18"), D),
    # fractional binary amounts
    ("100.035Ki", Decimal("102435.84"), B), ("0.5Mi", Decimal(2**19), B),
    ("0.05Gi", Decimal("53687091.2"), B), ("0.025Ti", Decimal("27487790694.4"), B),
    # things written by trolls
    ("0.000000000001Ki", Decimal("2e-9"), D), (".001", Decimal("1e-3"), D), (".0001k", Decimal("0.1"), D),
    ("1.", Decimal(1), D), ("1.G", Decimal("1e9"), D),
    # cases our callers relied on
    (".5", Decimal("0.5"), D), ("-2k", Decimal(-2000), D), ("+1M", Decimal(10**6), D),
    ("1.5Gi", Decimal(1536 * 2**20), B), ("100n", Decimal("1e-7"), D),
]

INVALID: list[str] = [
    "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
    " 1", "1 ",  # surrounding whitespace is forbidden
    "", ".", "1e3Gi", "1Gb", "Gi", "1 Gi", "5 Gi", "1e1.5", "0x10", "one", "1Q", "1.2.3", "1e", "--1",
]

# (input, canonical string): Kubernetes writes a parsed quantity back in its own format.
CANONICAL: list[tuple[str, str]] = [
    # TestQuantityParseEmit
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1000M", "1G"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"), (".000000000001Ki", "2n"),
    # TestQuantityString: alternate spellings and the canonical form they print as
    ("1024Mi", "1Gi"), ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"), ("1024Gi", "1Ti"),
    ("0.5", "500m"), ("1000M", "1G"), ("0.001T", "1G"), ("1000u", "1m"), ("1.08", "1080m"),
    ("1080000000n", "1080m"), ("1000E", "1e21"), ("5000E", "5e21"), ("1000000E", "1e24"),
    (".001e12", "1e9"), ("0.001e0", "1e-3"), ("1000e-12", "1e-9"), ("00", "0"),
    ("1e9", "1e9"), ("1e-3", "1e-3"), ("1e-9", "1e-9"), ("80e-3", "80e-3"), ("300e6", "300e6"),
    ("1e12", "1e12"), ("1e3", "1e3"), ("3e3", "3e3"), ("3k", "3k"), ("1n", "1n"), ("80n", "80n"),
    ("1080n", "1080n"), ("1u", "1u"), ("80u", "80u"), ("1080u", "1080u"), ("1234567M", "1234567M"),
    ("1T", "1T"), ("300M", "300M"), ("80m", "80m"), ("6Ki", "6Ki"), ("1025", "1025"),
    # binary below 1024 or fractional falls back to decimal; exponents are multiples of 3
    ("5000m", "5"), ("2000m", "2"), ("1000", "1k"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"),
    ("1.5Ki", "1536"), ("0", "0"), ("1.2e3", "1200"), ("1e-12", "1e-9"), ("-1.5Ki", "-1536"),
    ("-1Gi", "-1Gi"), ("-500m", "-500m"), ("9Ei", "9223372036854775807"),
]

# (left, right, sign of left - right); from TestQuantityCmp and ours.
COMPARE: list[tuple[str, str, int]] = [
    ("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1),
    ("1000m", "1", 0), ("1Gi", "1G", 1), ("1Ki", "1024", 0), ("-1", "0", -1),
]

# (input, MilliValue): Kubernetes' integer milli-units round up.
MILLI: list[tuple[str, int]] = [
    ("500m", 500), ("1", 1000), ("1.5", 1500), ("2e3", 2_000_000), ("1k", 1_000_000),
    ("1Ki", 1_024_000), ("1.5Gi", 1_610_612_736_000), ("100n", 1), ("0.0001", 1), ("0", 0),
    (".5", 500), ("3E-3", 3), ("1M", 10**9), ("9.01", 9010), ("1.0001m", 2),
]
