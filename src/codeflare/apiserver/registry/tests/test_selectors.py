"""Label and field selectors: query and object syntax, matching, and the errors bad ones get."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.errors import ApiError
from codeflare.apiserver.registry.selectors import (
    FieldSelector,
    LabelSelector,
    validate_label_selector_dict,
)

WEB = {"app": "web", "tier": "frontend", "env": "prod"}
DB = {"app": "db", "env": "dev"}


def select(text: str, *label_sets: dict[str, str]) -> list[bool]:
    sel = LabelSelector.parse(text)
    return [sel.matches(labels) for labels in label_sets]


# ---- label selector query syntax ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "web", "db"),
    [
        ("app=web", True, False),
        ("app==web", True, False),
        ("app!=web", False, True),
        ("tier!=frontend", False, True),  # a missing label is "not equal"
        ("app in (web, db)", True, True),
        ("app notin (web)", False, True),
        ("tier notin (x)", True, True),
        ("tier", True, False),
        ("!tier", False, True),
        ("app=web,env=prod", True, False),
        (" app = web , env in ( prod ) ", True, False),
        ("", True, True),
    ],
)
def test_label_selector_operators(text: str, web: bool, db: bool) -> None:
    assert select(text, WEB, DB) == [web, db]


def test_numeric_comparisons() -> None:
    assert select("gpus>1", {"gpus": "2"}, {"gpus": "1"}, {}, {"gpus": "x"}) == [True, False, False, False]
    assert select("gpus<2", {"gpus": "1"}, {"gpus": "2"}) == [True, False]


def test_empty_value_is_allowed() -> None:
    assert select("app=", {"app": ""}, {"app": "x"}) == [True, False]


def test_empty_selector_matches_everything_and_nothing_matches_nothing() -> None:
    assert LabelSelector.parse("").empty
    assert not LabelSelector.parse("a").empty
    assert not LabelSelector.nothing().matches({})
    assert not LabelSelector.nothing().empty


@pytest.mark.parametrize(
    "text",
    [
        "app in web",
        "app in (a",
        "app in ()",
        "app=web,",
        ",app",
        "app web",
        "!",
        "a b c",
        "-bad=x",
        "app=bad value!",
        "app=" + "x" * 64,
        "Example.com/app=x",
        "/app=x",
        "gpus>many",
        "a=(b)",
    ],
)
def test_malformed_label_selectors_are_400(text: str) -> None:
    with pytest.raises(ApiError) as err:
        LabelSelector.parse(text)
    assert err.value.code == 400
    assert err.value.reason == "BadRequest"
    assert err.value.message.startswith("unable to parse requirement: ")


def test_invalid_key_message_names_the_value() -> None:
    with pytest.raises(ApiError) as err:
        LabelSelector.parse("-bad=x")
    assert 'key: Invalid value: "-bad": name part must consist of' in err.value.message


def test_prefixed_keys_are_accepted() -> None:
    sel = LabelSelector.parse("kueue.x-k8s.io/queue-name=team-a")
    assert sel.matches({"kueue.x-k8s.io/queue-name": "team-a"})


def test_printing_is_canonical() -> None:
    sel = LabelSelector.parse("z in (b,a), !y, app==web, x, n!=1")
    assert str(sel) == "app=web,n!=1,x,!y,z in (a,b)"


keys = st.sampled_from(["app", "tier", "example.com/team", "a_b.c-d"])
values = st.sampled_from(["", "web", "db", "v1.2", "A_b"])
nonempty_values = st.sampled_from(["web", "db", "v1.2", "A_b"])
requirements = st.one_of(
    st.builds(lambda k, v: f"{k}={v}", keys, values),
    st.builds(lambda k, v: f"{k}!={v}", keys, values),
    st.builds(
        lambda k, vs: f"{k} in ({','.join(vs)})", keys, st.lists(nonempty_values, min_size=1, max_size=3)
    ),
    st.builds(
        lambda k, vs: f"{k} notin ({','.join(vs)})", keys, st.lists(nonempty_values, min_size=1, max_size=3)
    ),
    st.builds(lambda k: k, keys),
    st.builds(lambda k: f"!{k}", keys),
    st.builds(lambda k, n: f"{k}>{n}", keys, st.integers(-3, 3)),
)
label_sets = st.dictionaries(keys, values, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(requirements, max_size=4), label_sets)
def test_label_selector_print_parse_round_trip(parts: list[str], labels: dict[str, str]) -> None:
    sel = LabelSelector.parse(",".join(parts))
    again = LabelSelector.parse(str(sel))
    assert again == sel
    assert again.matches(labels) == sel.matches(labels)


@settings(max_examples=200, deadline=None)
@given(st.lists(requirements, min_size=1, max_size=4), label_sets)
def test_a_conjunction_matches_when_every_clause_matches(parts: list[str], labels: dict[str, str]) -> None:
    whole = LabelSelector.parse(",".join(parts)).matches(labels)
    assert whole == all(LabelSelector.parse(p).matches(labels) for p in parts)


# ---- label selector object form -----------------------------------------------------------------


def test_from_dict_combines_match_labels_and_expressions() -> None:
    sel = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches(WEB)
    assert not sel.matches({**WEB, "legacy": "1"})
    assert not sel.matches(DB)
    assert str(sel) == "app=web,env in (prod,staging),!legacy"


def test_from_dict_empty_matches_everything_and_none_nothing() -> None:
    assert LabelSelector.from_dict({}).matches(DB)
    assert LabelSelector.from_dict({}).empty
    assert not LabelSelector.from_dict(None).matches(DB)


@pytest.mark.parametrize(
    ("sel", "field", "fragment"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "s.matchExpressions[0].values",
            "Required value",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
            "s.matchExpressions[0].values",
            "",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "s.matchExpressions[0].values",
            "Forbidden",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Near"}]},
            "s.matchExpressions[0].operator",
            "Unsupported",
        ),
        ({"matchExpressions": [{"operator": "Exists"}]}, "s.matchExpressions[0].key", "Required value"),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["bad value"]}]},
            "s.matchExpressions[0].values[0]",
            "",
        ),
        ({"matchLabels": {"bad key": "x"}}, "s.matchLabels", "Invalid value"),
        ({"matchLabels": {"k": "bad value"}}, "s.matchLabels", "Invalid value"),
        ({"matchLabels": ["k"]}, "s.matchLabels", ""),
    ],
)
def test_invalid_selector_objects_name_the_field(sel: dict[str, Any], field: str, fragment: str) -> None:
    errors = validate_label_selector_dict(sel, "s")
    assert [e.field for e in errors] == [field]
    assert fragment in errors[0].message()


def test_valid_selector_object_has_no_errors() -> None:
    sel = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]}
    assert validate_label_selector_dict(sel, "spec.selector") == []


def test_from_dict_rejects_invalid_objects_with_422() -> None:
    with pytest.raises(ApiError) as err:
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "In"}]})
    assert err.value.code == 422
    assert err.value.causes[0].field == "selector.matchExpressions[0].values"


# ---- field selectors ----------------------------------------------------------------------------

POD_FIELDS = ("metadata.name", "metadata.namespace", "status.phase", "spec.nodeName", "spec.unschedulable")
POD = {"metadata": {"name": "p1", "namespace": "ns"}, "status": {"phase": "Running"}, "spec": {}}


def test_field_selector_equality_and_inequality() -> None:
    assert FieldSelector.parse("metadata.name=p1", POD_FIELDS).matches(POD)
    assert FieldSelector.parse("metadata.name==p1", POD_FIELDS).matches(POD)
    assert not FieldSelector.parse("status.phase!=Running", POD_FIELDS).matches(POD)
    assert FieldSelector.parse("metadata.namespace=ns,status.phase=Running", POD_FIELDS).matches(POD)
    assert not FieldSelector.parse("metadata.namespace=ns,status.phase=Failed", POD_FIELDS).matches(POD)


def test_missing_field_reads_as_empty_string() -> None:
    assert FieldSelector.parse("spec.nodeName=", POD_FIELDS).matches(POD)
    assert FieldSelector.parse("spec.nodeName!=node-1", POD_FIELDS).matches(POD)


def test_booleans_and_numbers_compare_as_kubernetes_prints_them() -> None:
    node = {"spec": {"unschedulable": True}}
    assert FieldSelector.parse("spec.unschedulable=true", POD_FIELDS).matches(node)
    assert FieldSelector.parse("spec.nodeName=3", POD_FIELDS).matches({"spec": {"nodeName": 3}})


def test_unsupported_field_is_400_with_kubernetes_message() -> None:
    with pytest.raises(ApiError) as err:
        FieldSelector.parse("spec.containers=x", POD_FIELDS)
    assert err.value.code == 400
    assert err.value.message == "field label not supported: spec.containers"


@pytest.mark.parametrize("text", ["metadata.name", "metadata.name=a,status.phase", "a\\q=b"])
def test_malformed_field_selector_is_400(text: str) -> None:
    with pytest.raises(ApiError) as err:
        FieldSelector.parse(text, (*POD_FIELDS, "a"))
    assert err.value.code == 400


def test_exact_value_lets_the_server_use_an_index() -> None:
    sel = FieldSelector.parse("metadata.name=p1,status.phase!=Failed", POD_FIELDS)
    assert sel.exact_value("metadata.name") == "p1"
    assert sel.exact_value("status.phase") is None
    assert sel.exact_value("metadata.namespace") is None


def test_empty_field_selector_matches_everything() -> None:
    sel = FieldSelector.parse("", POD_FIELDS)
    assert sel.empty and sel.matches({})


def test_escaped_values() -> None:
    sel = FieldSelector.parse("metadata.name=a\\,b\\=c", POD_FIELDS)
    assert sel.exact_value("metadata.name") == "a,b=c"
    assert str(sel) == "metadata.name=a\\,b\\=c"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(POD_FIELDS), st.sampled_from(["=", "!="]), st.text("ab,=!\\ x", max_size=5)
        ),
        max_size=4,
    )
)
def test_field_selector_print_parse_round_trip(terms: list[tuple[str, str, str]]) -> None:
    from codeflare.apiserver.registry.selectors import FieldTerm

    sel = FieldSelector(tuple(FieldTerm(f, op, v) for f, op, v in terms))
    assert FieldSelector.parse(str(sel), POD_FIELDS) == sel
