"""Unit tests for body decoding: what json/yaml accept but Kubernetes (and our encoder) do not."""

from __future__ import annotations

import pytest

from codeflare.apiserver.endpoints import bodies


@pytest.mark.parametrize(
    "text", ['{"a": NaN}', "[Infinity]", "1e999", '"\\ud800"', '{"\\udfff": 1}', "[" * 150 + "]" * 150]
)
def test_json_rejections(text: str) -> None:
    with pytest.raises(ValueError):
        bodies.decode_json(text)


def test_json_keeps_valid_surrogate_pairs_and_big_ints() -> None:
    assert bodies.decode_json('{"\\ud800\\udc00": 123456789012345678901234567890}') == {
        "\U00010000": 123456789012345678901234567890
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 2001-12-14", {"a": "2001-12-14"}),
        ("a: !!binary aGk=", {"a": "aGk="}),
        ("1: 2", {"1": 2}),
        ("true: x", {"true": "x"}),
        ("a: !!set {y, x}", {"a": ["x", "y"]}),
    ],
)
def test_yaml_is_converted_to_json_values(text: str, expected: object) -> None:
    assert bodies.decode_yaml(text) == expected


@pytest.mark.parametrize("text", ["a: &x [*x]", "a: .nan", 'a: "\\ud800"'])
def test_yaml_rejections(text: str) -> None:
    with pytest.raises(ValueError):
        bodies.decode_yaml(text)


def test_yaml_alias_bomb_hits_the_node_budget() -> None:
    lines = ["a: &a [1,1,1,1,1,1,1,1,1,1]"]
    for prev, cur in zip("abcdefg", "bcdefgh", strict=True):
        lines.append(f"{cur}: &{cur} [{','.join([f'*{prev}'] * 10)}]")
    with pytest.raises(ValueError, match="more than"):
        bodies.decode_yaml("\n".join(lines))
