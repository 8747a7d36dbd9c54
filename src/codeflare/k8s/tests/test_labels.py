"""The one label-selector matcher: operators, value rules, unknown operators refused."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from codeflare.k8s.labels import (
    LABEL_OPERATORS,
    NODE_OPERATORS,
    LabelSelector,
    Requirement,
    SelectorError,
    node_selector_matches,
    requirement_errors,
)

# (operator, values, labels, matches): Kubernetes' semantics (apimachinery labels/selector.go)
MATCHES = [
    ("In", ("a", "b"), {"k": "a"}, True),
    ("In", ("a",), {"k": "c"}, False),
    ("In", ("a",), {}, False),
    ("NotIn", ("a",), {"k": "a"}, False),
    ("NotIn", ("a",), {"k": "b"}, True),
    ("NotIn", ("a",), {}, True),
    ("Exists", (), {"k": ""}, True),
    ("Exists", (), {}, False),
    ("DoesNotExist", (), {}, True),
    ("DoesNotExist", (), {"k": "x"}, False),
    ("Gt", ("3",), {"k": "4"}, True),
    ("Gt", ("3",), {"k": "3"}, False),
    ("Gt", ("3",), {"k": "x"}, False),
    ("Lt", ("3",), {"k": "2"}, True),
    ("Lt", ("3",), {}, False),
]


@pytest.mark.parametrize(("operator", "values", "labels", "expected"), MATCHES)
def test_requirement_matches(
    operator: str, values: tuple[str, ...], labels: dict[str, str], expected: bool
) -> None:
    assert Requirement("k", operator, values).matches(labels) is expected


@pytest.mark.parametrize(
    ("operator", "values", "rule"),
    [
        ("in", ("a",), "unsupported value 'in'"),  # the typo that used to select the opposite set
        ("Equals", ("a",), "unsupported value"),
        ("In", (), "must be specified"),
        ("NotIn", (), "must be specified"),
        ("Exists", ("a",), "may not be specified"),
        ("DoesNotExist", ("a",), "may not be specified"),
        ("Gt", (), "one integer"),
        ("Lt", ("x",), "one integer"),
    ],
)
def test_bad_requirement_is_an_error(operator: str, values: tuple[str, ...], rule: str) -> None:
    with pytest.raises(SelectorError, match=rule):
        Requirement("k", operator, values)
    errors = requirement_errors(
        {"key": "k", "operator": operator, "values": list(values)}, "sel", NODE_OPERATORS
    )
    assert errors and all(e.field.startswith("sel.") for e in errors)


def test_label_selector_refuses_node_only_operators() -> None:
    with pytest.raises(SelectorError, match="only valid in node selectors"):
        LabelSelector({}, (Requirement("k", "Gt", ("1",)),))
    assert requirement_errors({"key": "k", "operator": "Gt", "values": ["1"]}, "s")[0].field == "s.operator"


def test_label_selector_from_dict() -> None:
    sel = LabelSelector.from_dict(
        {
            "matchLabels": {"team": "a"},
            "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}],
        }
    )
    assert sel.matches({"team": "a"})
    assert not sel.matches({"team": "a", "env": "prod"})
    assert not sel.matches({"env": "dev"})
    assert LabelSelector().matches({})
    with pytest.raises(SelectorError):
        LabelSelector.from_dict({"matchExpressions": [{"key": "env", "operator": "in", "values": ["x"]}]})


def test_node_selector_terms_are_ored_and_an_empty_term_matches_nothing() -> None:
    gpu = (Requirement("gpu", "Exists"),)
    zone = (Requirement("zone", "In", ("a",)),)
    assert node_selector_matches([gpu, zone], {"zone": "a"})
    assert not node_selector_matches([gpu, zone], {"zone": "b"})
    assert not node_selector_matches([()], {"zone": "a"})


values = st.lists(st.sampled_from("abc"), min_size=1, max_size=3).map(tuple)
label_sets = st.dictionaries(st.sampled_from(["k", "j"]), st.sampled_from("abcd"), max_size=2)


@given(values, label_sets)
def test_not_in_is_the_negation_of_in(vals: tuple[str, ...], labels: dict[str, str]) -> None:
    assert Requirement("k", "NotIn", vals).matches(labels) is not Requirement("k", "In", vals).matches(labels)


@given(label_sets)
def test_does_not_exist_is_the_negation_of_exists(labels: dict[str, str]) -> None:
    assert Requirement("k", "DoesNotExist").matches(labels) is not Requirement("k", "Exists").matches(labels)


@given(st.text(max_size=12))
def test_only_known_operators_build(operator: str) -> None:
    assume(operator not in NODE_OPERATORS)
    with pytest.raises(SelectorError):
        Requirement("k", operator, ("1",))
    assert operator not in LABEL_OPERATORS
