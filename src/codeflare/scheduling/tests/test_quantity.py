import pytest

from codeflare.scheduling import Quantity, QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("500m", 500),
        ("1", 1000),
        ("1.5", 1500),
        ("2e3", 2_000_000),
        ("1k", 1_000_000),
        ("1Ki", 1_024_000),
        ("1.5Gi", 1_610_612_736_000),
        ("100n", 1),  # below a milli-unit rounds up
        ("0.0001", 1),
        ("0", 0),
        (".5", 500),
        ("3E-3", 3),
        ("1M", 10**9),
    ],
)
def test_parse_exact(text: str, milli: int) -> None:
    assert parse_quantity(text) == milli


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "5 Gi", "1Q"])
def test_parse_rejects_garbage(bad: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


def test_format_round_trips() -> None:
    for text in ["500m", "4", "16Gi", "3Mi", "1500m"]:
        assert format_quantity(parse_quantity(text)) == text
    assert format_quantity(parse_quantity("2048Mi")) == "2Gi"


def test_quantity_arithmetic_is_exact() -> None:
    total = Quantity.parse("0.1") + Quantity.parse("0.2")
    assert total == Quantity.parse("300m")
    assert Quantity.parse(3) * 2 == Quantity.parse("6")
    assert Quantity.parse("1") - Quantity.parse("250m") == Quantity(750)
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert str(Quantity.parse("1.5Gi")) == "1536Mi"
