"""Unit tests for body decoding: what json/yaml accept but Kubernetes (and our encoder) do not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# Repeated keys: kept (the last wins, as Go's decoder does) and listed for fieldValidation. The
# bodies are those of kubernetes test/integration/apiserver/field_validation_test.go
# (invalidBodyJSON / invalidBodyYAML), cut to their duplicates.
DUPLICATES_JSON = """{"spec": {"paused": true, "paused": false,
  "template": {"spec": {"containers": [{"name": "nginx", "imagePullPolicy": "Always",
  "imagePullPolicy": "Never"}]}}}}"""
DUPLICATES_YAML = """spec:
  paused: true
  paused: false
  template:
    spec:
      containers:
      - name: nginx
        imagePullPolicy: Always
        imagePullPolicy: Never
"""


def test_json_duplicates_are_listed_by_path() -> None:
    value = bodies.decode_json(DUPLICATES_JSON)
    assert isinstance(value, bodies.DecodedObject)
    assert value.duplicate_fields == [
        ("spec.paused", 'duplicate field "paused"'),
        ("spec.template.spec.containers[0].imagePullPolicy", 'duplicate field "imagePullPolicy"'),
    ]
    assert value["spec"]["paused"] is False


def test_yaml_duplicates_are_worded_as_kube_apiserver_words_them() -> None:
    value = bodies.decode_yaml(DUPLICATES_YAML)
    assert isinstance(value, bodies.DecodedObject)
    assert [message for _, message in value.duplicate_fields] == [
        'line 3: key "paused" already set in map',
        'line 9: key "imagePullPolicy" already set in map',
    ]
    assert value["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_strings_that_look_like_keys_are_not_duplicates() -> None:
    value = bodies.decode_json('{"a": "\\"b\\": 1", "b": "x\\": y"}')
    assert type(value) is dict and value == {"a": '"b": 1', "b": 'x": y'}


KEYS = st.text(alphabet='ab":\\ ', min_size=1, max_size=3)
TREES = st.recursive(
    st.integers() | st.text(alphabet='ab":\\ ', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(tree=st.dictionaries(KEYS, TREES, min_size=1, max_size=4), repeat=st.booleans())
def test_duplicates_are_found_exactly(tree: dict[str, Any], repeat: bool) -> None:
    text = json.dumps(tree)
    key = next(iter(tree))
    if repeat:  # the first key once more, at the end of the top object
        text = text[:-1] + f", {json.dumps(key)}: 0}}"
    value = bodies.decode_json(text)
    expected = [(key, f"duplicate field {json.dumps(key)}")] if repeat else []
    assert getattr(value, "duplicate_fields", []) == expected
    assert value == ({**tree, key: 0} if repeat else tree)
