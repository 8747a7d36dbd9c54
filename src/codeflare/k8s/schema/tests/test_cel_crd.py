"""A CRD whose rules cannot work is refused when it is written, with Kubernetes' paths and words.

Messages follow apiextensions ``validation.go`` (``ValidateCustomResourceDefinitionOpenAPISchema``);
the pieces underneath - the CEL environment, the token scan, the value view - are pinned too.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from codeflare.k8s.schema import check_structural
from codeflare.k8s.schema.celenv import BUILTINS, CompileError, compile_expression, library
from codeflare.k8s.schema.celscan import scan
from codeflare.k8s.schema.celvalues import escape, parse_duration, to_cel
from codeflare.k8s.schema.rulecheck import parse_field_path
from codeflare.k8s.schema.tests.samples import messages

ROOT = "spec.validation.openAPIV3Schema"
BASE = f"{ROOT}.properties[spec]"
RULE0 = f"{BASE}.x-kubernetes-validations[0].rule"


def schema_with(rules: list[Any], **extra: Any) -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": rules,
        **extra,
    }
    return {"type": "object", "properties": {"spec": spec}}


def problems(rules: list[Any]) -> list[str]:
    return messages(check_structural(schema_with(rules)))


def test_well_formed_rules_pass() -> None:
    rules = [
        {
            "rule": "self.a > 0",
            "message": "a must be positive",
            "reason": "FieldValueForbidden",
            "fieldPath": ".a",
        },
        {
            "rule": "self.a >= oldSelf.a",
            "optionalOldSelf": True,
            "messageExpression": "'a was ' + string(oldSelf)",
        },
    ]
    assert problems(rules) == []


def test_a_rule_that_does_not_parse_names_its_path_and_the_compiler_words() -> None:
    (message,) = problems([{"rule": "self.a >"}])
    assert message.startswith(
        f'{RULE0}: Invalid value: {{"rule": "self.a >"}}: '
        "compilation failed: ERROR: <input>:1:9: Syntax error:"
    )
    assert message.endswith(" | self.a >\n | ........^")


def test_an_undeclared_name_is_a_compile_error() -> None:
    assert problems([{"rule": "slef.a > 0"}]) == [
        f'{RULE0}: Invalid value: {{"rule": "slef.a > 0"}}: compilation failed: '
        "ERROR: <input>:1:1: undeclared reference to 'slef' (in container '')\n | slef.a > 0\n | ^"
    ]
    assert "undeclared reference to 'nosuch'" in problems([{"rule": "self.a.nosuch()"}])[0]
    assert problems([{"rule": "self.a in [1].map(x, x)"}]) == []  # comprehension variables are declared


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"rule": " "}, "[0].rule: Required value: rule is not specified"),
        (
            {"rule": "true", "message": " "},
            '[0].message: Invalid value: " ": message must be non-empty if specified',
        ),
        (
            {"rule": "true", "message": "two\nlines"},
            '[0].message: Invalid value: "two\\nlines": message must not contain line breaks',
        ),
        (
            {"rule": "true &&\ntrue"},
            "[0].message: Required value: message must be specified if rule contains line breaks",
        ),
        (
            {"rule": "true", "messageExpression": " "},
            "[0].messageExpression: Required value: messageExpression must be non-empty if specified",
        ),
        (
            {"rule": "true", "reason": "Nope"},
            '[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
            '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        ),
        (
            {"rule": "true", "fieldPath": ".b"},
            '[0].fieldPath: Invalid value: ".b": fieldPath must be a valid path',
        ),
        (
            {"rule": "true", "optionalOldSelf": True},
            "[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
        ),
    ],
)
def test_rule_shape_errors(rule: dict[str, Any], expected: str) -> None:
    assert problems([rule]) == [f"{BASE}.x-kubernetes-validations{expected}"]


def test_a_message_expression_that_does_not_compile() -> None:
    (message,) = problems([{"rule": "true", "messageExpression": "'a' +"}])
    assert message.startswith(
        f"{BASE}.x-kubernetes-validations[0].messageExpression: Invalid value: "
        '{"messageExpression": "\'a\' +", "rule": "true"}: messageExpression compilation failed: ERROR:'
    )


def test_old_self_below_a_list_that_is_not_a_map_list_is_refused() -> None:
    items = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
    }
    schema = {
        "type": "object",
        "properties": {"l": {"type": "array", "x-kubernetes-list-type": "atomic", "items": items}},
    }
    assert messages(check_structural(schema)) == [
        f"{ROOT}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "
        '"self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within '
        f"{ROOT}.properties[l]"
    ]
    keyed = {
        **schema["properties"]["l"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["n"],
    }
    keyed["items"] = {**items, "required": ["n"]}
    assert check_structural({"type": "object", "properties": {"l": keyed}}) == []


def test_rules_are_not_compiled_when_the_schema_itself_is_wrong() -> None:
    schema = schema_with([{"rule": "self.a >"}])
    schema["properties"]["spec"]["properties"]["a"]["type"] = "integr"
    assert [e.field for e in check_structural(schema)] == [f"{BASE}.properties[a].type"]


# --- the pieces underneath --------------------------------------------------------------------

# One call of each library function the undeclared-reference check treats as built in.
PROBES = {
    "size": "size('a') == 1",
    "contains": "'ab'.contains('a')",
    "startsWith": "'ab'.startsWith('a')",
    "endsWith": "'ab'.endsWith('b')",
    "matches": "'ab'.matches('^a')",
    "int": "int('1') == 1",
    "uint": "uint(1) == 1u",
    "double": "double(1) == 1.0",
    "string": "string(1) == '1'",
    "bytes": "bytes('a') == b'a'",
    "timestamp": "timestamp('2020-01-01T00:00:00Z').getFullYear() == 2020",
    "duration": "duration('1s') > duration('0s')",
    "type": "type(1) == int",
    "dyn": "dyn(1) == 1",
    "getFullYear": "timestamp('2020-01-01T00:00:00Z').getFullYear() == 2020",
    "getMonth": "timestamp('2020-01-01T00:00:00Z').getMonth() == 0",
    "getDate": "timestamp('2020-01-02T00:00:00Z').getDate() == 2",
    "getDayOfMonth": "timestamp('2020-01-02T00:00:00Z').getDayOfMonth() == 1",
    "getDayOfWeek": "timestamp('2020-01-02T00:00:00Z').getDayOfWeek() == 4",
    "getDayOfYear": "timestamp('2020-01-02T00:00:00Z').getDayOfYear() == 1",
    "getHours": "duration('1h').getHours() == 1",
    "getMinutes": "duration('1h').getMinutes() == 60",
    "getSeconds": "duration('1m').getSeconds() == 60",
    "getMilliseconds": "duration('1s').getMilliseconds() == 1000",
    "hasValue": "optional.of(1).hasValue()",
    "value": "optional.of(1).value() == 1",
    "orValue": "optional.none().orValue(1) == 1",
    "or": "optional.none().or(optional.of(1)).value() == 1",
    "of": "optional.of(1).hasValue()",
    "none": "!optional.none().hasValue()",
    "ofNonZeroValue": "!optional.ofNonZeroValue(0).hasValue()",
}


def test_every_builtin_the_check_allows_is_one_the_library_runs() -> None:
    assert set(PROBES) == BUILTINS
    for name, source in PROBES.items():
        assert compile_expression(source).program.execute({}) is True, name


def test_compile_errors_and_what_a_compiled_rule_knows() -> None:
    with pytest.raises(CompileError):
        compile_expression("(")
    expression = compile_expression("self.all(x, x.lowerAscii() in oldSelf)")
    assert expression.uses_old_self
    assert expression.extensions == ("lowerAscii",)
    assert library() is library()


@pytest.mark.parametrize(
    ("source", "depth"),
    [
        ("self == oldSelf", 0),
        ("x in self", 1),
        ("self.all(x, x > 0)", 1),
        ("self.a.all(x, x) && self.b.all(y, y)", 1),
        ("self.map(x, x * 2).filter(e, e > 5).exists(e, e == 6)", 1),
        ("self.all(x, x in self)", 2),
        ("self.all(x, self.all(y, x + y >= 0))", 2),
        ("self.rg.all(g, g.flavors.all(f, f.resources.all(r, !has(r.limit))))", 3),
        ("self.x.matches('a(b)') && '.all(' == 'x'", 0),
    ],
)
def test_comprehension_depth(source: str, depth: int) -> None:
    assert scan(source).depth == depth


def test_property_names_escape_as_kubernetes_does() -> None:
    assert escape("namespace") == "__namespace__"
    assert escape("dash-dash") == "dash__dash__dash"
    assert escape("a__b") == "a__underscores__b"
    assert escape("x.y/z") == "x__dot__y__slash__z"
    assert escape("plain_name") == "plain_name"
    assert escape("k!") is None and escape("9lives") is None


def test_formatted_strings_and_numbers_become_their_cel_types() -> None:
    schema = {
        "type": "object",
        "properties": {
            "d": {"type": "string", "format": "duration"},
            "t": {"type": "string", "format": "date-time"},
            "n": {"type": "number"},
            "gone": {"type": "string", "nullable": True},
        },
    }
    view = to_cel({"d": "1h30m", "t": "2024-05-01T12:00:00Z", "n": 1, "gone": None}, schema)
    assert view == {
        "d": datetime.timedelta(hours=1, minutes=30),
        "t": datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.UTC),
        "n": 1.0,
    }
    assert parse_duration("3723.004s") == datetime.timedelta(seconds=3723, milliseconds=4)
    assert parse_duration("2 days") == datetime.timedelta(days=2)
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_field_paths_name_properties_and_map_keys() -> None:
    schema = {
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
    }
    assert parse_field_path(".m['a.b']", schema) == "m[a.b]"
    assert parse_field_path("['m']", schema) == "m"
    for bad in (".x", "m", ".m[a]", ".m['a'", "..m"):
        with pytest.raises(ValueError):
            parse_field_path(bad, schema)
