"""Quantities parse, round, compare and print exactly as Kubernetes' resource.Quantity does.

Cases come from the shared corpus (``quantity_corpus``, ported from apimachinery's tests); the
property tests check that every formatted string parses back to the same value.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.k8s.quantity import (
    Format,
    Quantity,
    QuantityError,
    canonical,
    compare,
    format_milli,
    format_quantity,
    int_value,
    is_quantity,
    milli_value,
    parse_quantity,
)
from codeflare.k8s.tests import quantity_corpus as corpus


@pytest.mark.parametrize(("text", "value", "fmt"), corpus.VALID)
def test_valid_strings_parse_to_their_kubernetes_value(text: str, value: Decimal, fmt: Format) -> None:
    assert parse_quantity(text) == value
    assert canonical(text) == format_quantity(value, fmt)
    if text[0] not in "+-":
        assert parse_quantity("-" + text) == -value
        assert parse_quantity("+" + text) == value


@pytest.mark.parametrize("text", corpus.INVALID)
def test_invalid_strings_are_refused(text: str) -> None:
    assert not is_quantity(text)
    with pytest.raises(QuantityError, match="not a quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(("text", "expected"), corpus.CANONICAL)
def test_canonical_form(text: str, expected: str) -> None:
    assert canonical(text) == expected
    assert canonical(expected) == expected


@pytest.mark.parametrize(("left", "right", "sign"), corpus.COMPARE)
def test_compare(left: str, right: str, sign: int) -> None:
    assert compare(left, right) == sign
    assert compare(right, left) == -sign


@pytest.mark.parametrize(("text", "milli"), corpus.MILLI)
def test_milli_value_rounds_up(text: str, milli: int) -> None:
    assert milli_value(text) == milli
    assert Quantity.parse(text) == Quantity(milli)


def test_numbers_are_base_units_and_non_quantities_are_refused() -> None:
    assert parse_quantity(2) == 2 and parse_quantity(0.1) == Decimal("0.1")
    assert parse_quantity(Decimal("0.5")) == Decimal("0.5")
    assert int_value("1.5Ki") == 1536 and int_value("1m") == 1 and int_value(3) == 3
    for bad in (True, float("nan"), float("inf"), Decimal("NaN"), None, [1]):
        with pytest.raises(QuantityError):
            parse_quantity(bad)  # type: ignore[arg-type]
    with pytest.raises(QuantityError, match="too large"):
        milli_value("1e1000000")


def test_format_in_each_format() -> None:
    assert format_quantity(Decimal(2**30), Format.BINARY_SI) == "1Gi"
    assert format_quantity(Decimal(2**30)) == "1073741824"
    assert format_quantity(1500, Format.DECIMAL_EXPONENT) == "1500"
    assert format_quantity(2000, Format.DECIMAL_EXPONENT) == "2e3"
    assert format_quantity(0.5, Format.BINARY_SI) == "500m"
    assert format_quantity(Decimal("1e-12")) == "1n"


def test_format_milli_is_short_and_exact() -> None:
    for text in ["500m", "4", "16Gi", "3Mi", "1500m", "-250m", "1000"]:
        assert format_milli(milli_value(text)) == text
    assert format_milli(milli_value("2048Mi")) == "2Gi"
    assert str(Quantity.parse("1.5Gi")) == "1536Mi"


def test_milli_quantity_arithmetic_is_exact() -> None:
    total = Quantity.parse("0.1") + Quantity.parse("0.2")
    assert total == Quantity.parse("300m")
    assert Quantity.parse(3) * 2 == Quantity.parse("6")
    assert Quantity.parse("1") - Quantity.parse("250m") == Quantity(750)
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert Quantity.parse(Quantity(5)) == Quantity(5)
    assert milli_value(Quantity(1500)) == 1500 and parse_quantity(Quantity(1500)) == Decimal("1.5")


def test_values_keep_more_than_28_significant_digits() -> None:
    value = parse_quantity("100000.00001E")
    assert parse_quantity(format_quantity(value)) == value


_number = st.from_regex(r"\A[+-]?([0-9]{1,12}(\.[0-9]{0,9})?|\.[0-9]{1,9})\Z")
_suffix = st.sampled_from(["", "m", "n", "u", "k", "M", "G", "T", "P", "E",
                           "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "E-2", "e+7", "e0"])


@given(_number, _suffix)
@settings(max_examples=300)
def test_every_formatted_quantity_parses_back(number: str, suffix: str) -> None:
    text = number + suffix
    value = parse_quantity(text)
    for fmt in Format:
        formatted = format_quantity(value, fmt)
        assert parse_quantity(formatted) == value
        assert format_quantity(parse_quantity(formatted), fmt) == formatted
    assert parse_quantity(canonical(text)) == value
    assert format_milli(milli_value(text)) == format_milli(milli_value(format_milli(milli_value(text))))
