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


# The container-only walk of JSON bodies (no string to check) keeps _check's budgets and counts.
@settings(max_examples=200, deadline=None)
@given(tree=TREES, depth=st.integers(min_value=0, max_value=bodies.MAX_DEPTH + 2))
def test_the_container_walk_counts_as_the_full_walk(tree: Any, depth: int) -> None:
    for _ in range(depth + 1):
        tree = [tree]
    full, fast = [0, 0], [1, 0]
    try:
        bodies._check(tree, 0, full, check_strings=False, convert=False)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)):
            bodies._count_containers(tree, 0, fast)
        return
    bodies._count_containers(tree, 0, fast)
    assert fast == full


@pytest.mark.parametrize("depth", [bodies.MAX_DEPTH, bodies.MAX_DEPTH + 1])
def test_json_depth_limit_is_exact(depth: int) -> None:
    text = "[" * depth + "1" + "]" * depth
    if depth > bodies.MAX_DEPTH:
        with pytest.raises(ValueError, match="nested deeper"):
            bodies.decode_json(text)
    else:
        assert bodies.decode_json(text) is not None


# JSON sent as YAML (client-go's apply bodies) takes the JSON decoder; YAML's answer stands
# wherever the JSON decoder refuses the text or finds repeated keys.
@settings(max_examples=100, deadline=None)
@given(tree=st.dictionaries(KEYS, TREES, max_size=4))
def test_json_sent_as_yaml_decodes_as_yaml_would(tree: dict[str, Any]) -> None:
    text = json.dumps(tree)
    assert bodies.decode_yaml(text) == tree
    loader = bodies._DuplicateKeyLoader(text)
    try:
        assert loader.get_single_data() == tree  # PyYAML agrees
    finally:
        loader.dispose()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": NaN}', {"a": "NaN"}),  # no JSON number, a YAML string
        ("{a: 1, b: [x, y]}", {"a": 1, "b": ["x", "y"]}),  # YAML flow, not JSON
        ('{"a": 1}\n', {"a": 1}),
    ],
)
def test_yaml_that_starts_like_json_keeps_yaml_semantics(text: str, expected: object) -> None:
    assert bodies.decode_yaml(text) == expected


def test_json_sent_as_yaml_with_repeated_keys_is_worded_as_yaml() -> None:
    value = bodies.decode_yaml('{"spec": {"paused": true,\n "paused": false}}')
    assert isinstance(value, bodies.DecodedObject)
    assert value.duplicate_fields == [("", 'line 2: key "paused" already set in map')]


def _keys(node: Any) -> int:
    if isinstance(node, dict):
        return len(node) + sum(_keys(v) for v in node.values())
    if isinstance(node, list):
        return sum(_keys(v) for v in node)
    return 0


@settings(max_examples=200, deadline=None)
@given(tree=TREES)
def test_key_ends_are_never_undercounted(tree: Any) -> None:
    """At least one match per key (a repeat can never go unnoticed)."""
    for text in (json.dumps(tree), json.dumps(tree, separators=(",", ":"))):
        assert len(bodies._KEY_END.findall(text)) >= _keys(tree)


def test_escaped_quotes_before_colons_are_not_key_ends() -> None:
    """A managedFields key holds ``\\":`` (the object that sent every write to the second pass)."""
    text = json.dumps({"f:spec": {"k:{\"name\":\"main\"}": {}}, "a\\": 1, "b": 'x\\\":y'})
    assert len(bodies._KEY_END.findall(text)) == 4
