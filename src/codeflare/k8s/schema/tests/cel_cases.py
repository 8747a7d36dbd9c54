"""Kubernetes' own CEL rule cases, as data: schema, object, rules that hold, rules that fail.

Ported from kubernetes/kubernetes
``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go``,
``TestValidationExpressions`` (each case keeps its upstream name). Left out, each for a stated
reason, are the cases whose outcome comes from Kubernetes' static type checker (``undefined
field 'z'``, ``no matching overload for '_==_'`` against a map literal, ``null`` comparisons:
the CEL library here checks no types before running), the order-insensitive equality and
merging ``+`` of set and map lists, ``size()`` counting code points, the URL, regex ``find``
and two-variable comprehension libraries, and ``exists()`` ignoring an error when another
element satisfies it (cel-go does; the library raises). These differences are listed in
:mod:`codeflare.k8s.schema.rules` and :mod:`codeflare.k8s.schema.celenv`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Schema = dict[str, Any]

INTEGER: Schema = {"type": "integer"}
INT32: Schema = {"type": "integer", "format": "int32"}
INT64: Schema = {"type": "integer", "format": "int64"}
NUMBER: Schema = {"type": "number"}
FLOAT: Schema = {"type": "number", "format": "float"}
DOUBLE: Schema = {"type": "number", "format": "double"}
STRING: Schema = {"type": "string"}
BYTE: Schema = {"type": "string", "format": "byte"}
BOOLEAN: Schema = {"type": "boolean"}
DURATION: Schema = {"type": "string", "format": "duration"}
DATE: Schema = {"type": "string", "format": "date"}
DATE_TIME: Schema = {"type": "string", "format": "date-time"}
INT_OR_STRING: Schema = {"x-kubernetes-int-or-string": True}
MAX_INT64 = 2**63 - 1
MAX_INT32 = 2**31 - 1
MAX_FLOAT64 = 1.7976931348623157e308
MAX_FLOAT32 = 3.4028234663852886e38


def obj(props: dict[str, Schema]) -> Schema:
    return {"type": "object", "properties": props}


def vals(*schemas: Schema) -> Schema:
    return obj({f"val{i + 1}": s for i, s in enumerate(schemas)})


def values(*items: Any) -> dict[str, Any]:
    return {f"val{i + 1}": v for i, v in enumerate(items)}


def list_of(items: Schema, list_type: str = "atomic", keys: list[str] | None = None) -> Schema:
    out: Schema = {"type": "array", "items": items, "x-kubernetes-list-type": list_type}
    if keys:
        out["x-kubernetes-list-map-keys"] = keys
    return out


def map_of(items: Schema) -> Schema:
    return {"type": "object", "additionalProperties": items}


def nullable(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


def equal_and_literal(a: str, b: str, literal: str) -> str:
    """Upstream's ValsEqualThemselvesAndDataLiteral."""
    return f"{a} == {literal} && {literal} == {a} && {a} == {b}"


@dataclass
class Case:
    name: str
    schema: Schema
    obj: Any
    valid: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # rule -> text the error contains
    old: Any = None
    is_root: bool = False
    skipped: bool = False  # a transition rule with no old value: not evaluated at all


CASES: list[Case] = [
    Case(
        "integers",
        vals(INTEGER, INTEGER, INT32, INT32, INT64, INT64),
        values(MAX_INT64, MAX_INT64, MAX_INT32, MAX_INT32, MAX_INT64, MAX_INT64),
        valid=[
            equal_and_literal("self.val1", "self.val2", str(MAX_INT64)),
            equal_and_literal("self.val3", "self.val4", str(MAX_INT32)),
            equal_and_literal("self.val5", "self.val6", str(MAX_INT64)),
            "self.val1 == self.val6",
            "type(self.val1) == int",
            f"self.val3 + 1 == {MAX_INT32} + 1",
            "type(self.val3) == int",
            "type(self.val5) == int",
        ],
        errors={
            "self.val1 + 1 == 0": "integer overflow",
            "self.val5 + 1 == 0": "integer overflow",
            "1 / 0 == 1 / 0": "division by zero",
        },
    ),
    Case(
        "numbers",
        vals(NUMBER, NUMBER, FLOAT, FLOAT, DOUBLE, DOUBLE, DOUBLE),
        values(MAX_FLOAT64, MAX_FLOAT64, MAX_FLOAT32, MAX_FLOAT32, MAX_FLOAT64, MAX_FLOAT64, 1),
        valid=[
            "self.val1 == self.val2 && self.val1 == self.val6",
            "type(self.val1) == double",
            "type(self.val3) == double",
            "type(self.val5) == double",
            "type(self.val7) == double",
            "self.val7 == 1.0",
        ],
    ),
    Case(
        "numeric comparisons",
        vals(INTEGER, INTEGER, INTEGER, NUMBER, FLOAT, DOUBLE, NUMBER, FLOAT, DOUBLE),
        values(5, 10, 15, 10.0, 10.0, 10.0, 10, 10, 10),
        valid=[
            *(
                rule
                for v in ("val4", "val5", "val6", "val7", "val8", "val9")
                for rule in (
                    f"double(self.val1) < self.{v}",
                    f"double(self.val2) == self.{v}",
                    f"double(self.val3) > self.{v}",
                    f"self.val1 < int(self.{v})",
                    f"self.val2 == int(self.{v})",
                    f"self.val3 > int(self.{v})",
                )
            ),
            "double(5) < 10.0",
            "double(10) == 10.0",
            "double(15) > 10.0",
            "5 < int(10.0)",
            "10 == int(10.0)",
            "15 > int(10.0)",
            "double(self.val1) < 10.0",
            "double(self.val2) == 10.0",
            "double(self.val3) > 10.0",
        ],
    ),
    Case(
        "unicode strings",
        vals(STRING, STRING),
        values("Rook takes 👑", "Rook takes 👑"),
        valid=[
            equal_and_literal("self.val1", "self.val2", "'Rook takes 👑'"),
            "self.val1.startsWith('Rook')",
            "!self.val1.startsWith('knight')",
            "self.val1.contains('takes')",
            "!self.val1.contains('gives')",
            "self.val1.endsWith('👑')",
            "!self.val1.endsWith('pawn')",
            "self.val1.matches('^[^0-9]*$')",
            "!self.val1.matches('^[0-9]*$')",
            "type(self.val1) == string",
            "self.val1.charAt(3) == 'k'",
            "self.val1.indexOf('o') == 1",
            "self.val1.indexOf('o', 2) == 2",
            "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
            "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
            "self.val1.split(' ') == ['Rook', 'takes', '👑']",
            "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
            "self.val1.substring(5) == 'takes 👑'",
            "self.val1.substring(0, 4) == 'Rook'",
            "self.val1.substring(4, 10).trim() == 'takes'",
            "self.val1.upperAscii() == 'ROOK TAKES 👑'",
            "self.val1.lowerAscii() == 'rook takes 👑'",
        ],
    ),
    Case(
        "escaped strings",
        vals(STRING, STRING),
        values("l1\nl2", "l1\nl2"),
        valid=[equal_and_literal("self.val1", "self.val2", "'l1\\nl2'"), "self.val1 == '''l1\nl2'''"],
    ),
    Case(
        "bytes",
        vals(BYTE, BYTE),
        values("QUI=", "QUI="),
        valid=[
            "self.val1 == self.val2",
            "self.val1 == b'AB'",
            "self.val1 == bytes('AB')",
            "self.val1 == b'\\x41\\x42'",
            "type(self.val1) == bytes",
            "size(self.val1) == 2",
        ],
    ),
    Case(
        "booleans",
        vals(BOOLEAN, BOOLEAN, BOOLEAN, BOOLEAN),
        values(True, True, False, False),
        valid=[
            equal_and_literal("self.val1", "self.val2", "true"),
            equal_and_literal("self.val3", "self.val4", "false"),
            "self.val1 != self.val4",
            "type(self.val1) == bool",
        ],
    ),
    Case(
        "duration format",
        vals(DURATION, DURATION),
        values("1h2m3s4ms", "1h2m3s4ms"),
        valid=[
            equal_and_literal("self.val1", "self.val2", "duration('1h2m3s4ms')"),
            "self.val1 == duration('1h2m') + duration('3s4ms')",
            "self.val1.getHours() == 1",
            "self.val1.getMinutes() == 62",
            "self.val1.getSeconds() == 3723",
            "self.val1.getMilliseconds() == 3723004",
        ],
    ),
    Case(
        "date format",
        vals(DATE, DATE),
        values("1997-07-16", "1997-07-16"),
        valid=[
            equal_and_literal("self.val1", "self.val2", "timestamp('1997-07-16T00:00:00.000Z')"),
            "self.val1.getDate() == 16",
            "self.val1.getMonth() == 06",
            "self.val1.getFullYear() == 1997",
        ],
    ),
    Case(
        "date-time format",
        vals(DATE_TIME, DATE_TIME),
        values("2011-08-18T19:03:37.010000000+01:00", "2011-08-18T19:03:37.010000000+01:00"),
        valid=[
            equal_and_literal("self.val1", "self.val2", "timestamp('2011-08-18T19:03:37.010+01:00')"),
            "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
            "self.val1.getDate('01:00') == 18",
            "self.val1.getMonth('01:00') == 7",
            "self.val1.getFullYear('01:00') == 2011",
            "self.val1.getHours('01:00') == 19",
            "self.val1.getMinutes('01:00') == 03",
            "self.val1.getSeconds('01:00') == 37",
            "self.val1.getMilliseconds('01:00') == 10",
            "self.val1.getHours('UTC') == 18",
        ],
    ),
    Case(
        "enums",
        obj({"enumStr": {"type": "string", "enum": ["Pending", "Available", "Bound", "Released", "Failed"]}}),
        {"enumStr": "Pending"},
        valid=["self.enumStr == 'Pending'", "self.enumStr in ['Pending', 'Available']"],
    ),
    Case(
        "conversions",
        vals(
            INTEGER,
            NUMBER,
            NUMBER,
            NUMBER,
            BOOLEAN,
            STRING,
            BYTE,
            STRING,
            DURATION,
            STRING,
            DATE_TIME,
            STRING,
            DATE,
        ),
        values(
            10,
            10.0,
            10.49,
            10.5,
            True,
            "10",
            "MTA=",
            "3723.004s",
            "1h2m3s4ms",
            "2011-08-18T19:03:37.01+01:00",
            "2011-08-18T19:03:37.01+01:00",
            "2011-08-18T00:00:00Z",
            "2011-08-18",
        ),
        valid=[
            "int(self.val2) == self.val1",
            "int(self.val3) == self.val1",
            "int(self.val4) == self.val1",
            "int(self.val6) == self.val1",
            "double(self.val1) == self.val2",
            "double(self.val6) == self.val2",
            "bytes(self.val6) == self.val7",
            "string(self.val1) == self.val6",
            "string(self.val2) == '10'",
            "string(self.val3) == '10.49'",
            "string(self.val4) == '10.5'",
            "string(self.val5) == 'true'",
            "string(self.val7) == self.val6",
            "duration(self.val8) == self.val9",
            "timestamp(self.val10) == self.val11",
            "timestamp(self.val12) == self.val13",
        ],
    ),
    Case(
        "lists",
        vals(list_of(INTEGER), list_of(INTEGER)),
        values([1, 2, 3], [1, 2, 3]),
        valid=[
            equal_and_literal("self.val1", "self.val2", "[1, 2, 3]"),
            "1 in self.val1",
            "self.val2[0] in self.val1",
            "!(0 in self.val1)",
            "self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]",
            "self.val1 + [4, 5] == [1, 2, 3, 4, 5]",
        ],
    ),
    Case(
        "maps",
        vals(map_of(STRING), map_of(STRING)),
        values({"k1": "a", "k2": "b"}, {"k2": "b", "k1": "a"}),
        valid=[
            "self.val1 == self.val2",
            "'k1' in self.val1",
            "!('k3' in self.val1)",
            "self.val1 == {'k1': 'a', 'k2': 'b'}",
        ],
    ),
    Case(
        "objects",
        obj({"objs": list_of(obj({"f1": STRING, "f2": STRING}))}),
        {"objs": [{"f1": "a", "f2": "b"}, {"f1": "a", "f2": "b"}]},
        valid=["self.objs[0] == self.objs[1]"],
    ),
    Case(
        "object access",
        obj(
            {
                "a": obj({"b": INTEGER, "c": INTEGER, "d": nullable(INTEGER)}),
                "a1": obj({"b1": obj({"c1": INTEGER}), "d2": obj({"e2": INTEGER})}),
            }
        ),
        {"a": {"b": 1, "d": None}, "a1": {"b1": {"c1": 4}}, "a3": {}},
        valid=[
            "has(self.a.b)",
            "!has(self.a.c)",
            "!has(self.a.d)",
            "has(self.a1.b1.c1)",
            "!(has(self.a1.d2) && has(self.a1.d2.e2))",
            "!has(self.a1.d2)",
        ],
        errors={"has(self.a1.d2.e2)": "no such key: d2"},
    ),
    Case(
        "map access",
        obj({"val": map_of(INTEGER)}),
        {"val": {"b": 1, "d": 2}},
        valid=[
            "!('a' in self.val)",
            "'b' in self.val",
            "!('c' in self.val)",
            "'d' in self.val",
            "!has(self.val.a)",
            "has(self.val.b)",
            "!has(self.val.c)",
            "has(self.val.d)",
            "self.val.all(k, self.val[k] > 0)",
            "self.val.exists(k, self.val[k] > 1)",
            "self.val.exists_one(k, self.val[k] == 2)",
            "!self.val.exists(k, self.val[k] > 2)",
            "!self.val.exists_one(k, self.val[k] > 0)",
            "size(self.val) == 2",
            "self.val.map(k, self.val[k]).exists(v, v == 1)",
            "size(self.val.filter(k, self.val[k] > 1)) == 1",
        ],
        errors={"self.val['c'] == 1": "no such key: c"},
    ),
    Case(
        "listMap access",
        obj({"listMap": list_of(obj({"k": STRING, "v": STRING, "v2": STRING}), "map", ["k"])}),
        {"listMap": [{"k": "a1", "v": "b1"}, {"k": "a2", "v": "b2"}, {"k": "a3", "v": "b3", "v2": "z"}]},
        valid=[
            "has(self.listMap[0].v)",
            "self.listMap.all(m, m.k.startsWith('a'))",
            "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')",
            "self.listMap.exists(m, m.k.endsWith('1'))",
            "self.listMap.exists_one(m, m.k == 'a3')",
            "!self.listMap.all(m, m.k.endsWith('1'))",
            "!self.listMap.exists(m, m.v == 'x')",
            "!self.listMap.exists_one(m, m.k.startsWith('a'))",
            "size(self.listMap.filter(m, m.k == 'a1')) == 1",
            "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')",
            "self.listMap.map(m, m.v).exists(v, v == 'b1')",
            "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')",
            "!self.listMap.all(m, has(m.v2) && m.v2 != 'z')",
            "self.listMap.exists_one(m, has(m.v2) && m.v2 == 'z')",
            "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1",
            "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
            "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1",
        ],
        errors={
            "self.listMap.all(m, m.v2 == 'z')": "no such key: v2",
            "self.listMap.exists_one(m, m.v2 == 'z')": "no such key: v2",
            "self.listMap.filter(m, m.v2 == 'z').size() == 1": "no such key: v2",
            "self.listMap.map(m, m.v2).size() == 1": "no such key: v2",
            "self.listMap.map(m, m.v2 == 'z', m.v2).size() == 1": "no such key: v2",
        },
    ),
    Case(
        "list access",
        obj({"array": list_of(INTEGER)}),
        {"array": [1, 1, 2, 2, 3, 3, 4, 5]},
        valid=[
            "2 in self.array",
            "self.array.all(e, e > 0)",
            "self.array.exists(e, e > 2)",
            "self.array.exists_one(e, e > 4)",
            "!self.array.all(e, e < 2)",
            "!self.array.exists(e, e < 0)",
            "!self.array.exists_one(e, e == 2)",
            "self.array.all(e, e < 100)",
            "size(self.array.filter(e, e%2 == 0)) == 3",
            "self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)",
            "size(self.array) == 8",
        ],
        errors={"self.array[100] == 0": "index out of bounds: 100"},
    ),
    Case(
        "typemeta and objectmeta access not specified",
        obj({"spec": obj({"field1": STRING})}),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "foo", "generateName": "pickItForMe", "namespace": "xyz"},
            "spec": {"field1": "a"},
        },
        valid=[
            "self.kind == 'Pod'",
            "self.apiVersion == 'v1'",
            "self.metadata.name == 'foo'",
            "self.metadata.generateName == 'pickItForMe'",
            "self.spec.field1 == 'a'",
        ],
        is_root=True,
    ),
    Case(
        "embedded object",
        obj({"embedded": {"type": "object", "x-kubernetes-embedded-resource": True}}),
        {
            "embedded": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "foo", "generateName": "pickItForMe", "namespace": "xyz"},
                "spec": {"field1": "a"},
            }
        },
        valid=[
            "self.embedded.kind == 'Pod'",
            "self.embedded.apiVersion == 'v1'",
            "self.embedded.metadata.name == 'foo'",
            "self.embedded.metadata.generateName == 'pickItForMe'",
        ],
    ),
    Case(
        "string in intOrString",
        obj({"something": INT_OR_STRING}),
        {"something": "25%"},
        valid=[
            "self.something == '25%'",
            "self.something != 1",
            "self.something == 1 || self.something == '25%'",
            "self.something == '25%' || self.something == 1",
            "type(self.something) == string && self.something == '25%'",
            "type(self.something) == int ? self.something == 1 : self.something == '25%'",
            "self.something != ['anything']",
        ],
    ),
    Case(
        "int in intOrString",
        obj({"something": INT_OR_STRING}),
        {"something": 1},
        valid=[
            "self.something == 1",
            "self.something != 'some string'",
            "self.something == 1 || self.something == '25%'",
            "self.something == '25%' || self.something == 1",
            "type(self.something) == int && self.something == 1",
            "type(self.something) == int ? self.something == 1 : self.something == '25%'",
            "self.something != ['anything']",
        ],
    ),
    Case(
        "null in intOrString",
        obj({"something": nullable(INT_OR_STRING)}),
        {"something": None},
        valid=["!has(self.something)"],
        errors={"type(self.something) == int": "no such key"},
    ),
    Case(
        "percent comparison using intOrString",
        obj({"min": INT_OR_STRING, "current": INTEGER, "available": INTEGER}),
        {"min": "50%", "current": 5, "available": 10},
        valid=[
            r"type(self.min) == string && self.min.matches(r'(\d+(\.\d+)?%)')",
            "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available)"
            " >= double(self.min.replace('%', '')) / 100.0",
        ],
    ),
    Case(
        "preserve unknown fields",
        obj(
            {
                "withUnknown": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "withUnknownList": list_of({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
            }
        ),
        {
            "withUnknown": {"field1": "a", "field2": "b"},
            "withUnknownList": [
                {"field1": "a", "field2": "b"},
                {"field1": "x", "field2": "y"},
                {"field1": "x", "field2": "y"},
                {},
                {},
            ],
        },
        valid=[
            "has(self.withUnknown)",
            "self.withUnknownList.size() == 5",
            "self.withUnknownList[0] != self.withUnknownList[1]",
            "self.withUnknownList[1] == self.withUnknownList[2]",
            "self.withUnknownList[3] == self.withUnknownList[4]",
        ],
    ),
    Case(
        "field nullability",
        obj(
            {
                "unsetPlainStr": STRING,
                "unsetDefaultedStr": {**STRING, "default": "default value"},
                "unsetNullableStr": nullable(STRING),
                "setPlainStr": STRING,
                "setDefaultedStr": {**STRING, "default": "default value"},
                "setNullableStr": nullable(STRING),
                "setToNullNullableStr": nullable(STRING),
            }
        ),
        {
            "setPlainStr": "v1",
            "setDefaultedStr": "v2",
            "setNullableStr": "v3",
            "setToNullNullableStr": None,
            "unsetDefaultedStr": "default value",
        },
        valid=[
            "!has(self.unsetPlainStr)",
            "has(self.unsetDefaultedStr) && self.unsetDefaultedStr == 'default value'",
            "!has(self.unsetNullableStr)",
            "has(self.setPlainStr) && self.setPlainStr == 'v1'",
            "has(self.setDefaultedStr) && self.setDefaultedStr == 'v2'",
            "has(self.setNullableStr) && self.setNullableStr == 'v3'",
            "type(self.setNullableStr) != null_type",
            "!has(self.setToNullNullableStr)",
        ],
    ),
    Case(
        "null values in container types",
        obj(
            {
                "m": map_of(nullable(STRING)),
                "l": list_of(nullable(STRING)),
                "s": list_of(nullable(STRING), "set"),
            }
        ),
        {"m": {"a": None, "b": "not-nil"}, "l": [None, "not-nil"], "s": [None, "not-nil"]},
        valid=[
            "self.m.size() == 2",
            "'a' in self.m",
            "type(self.m['a']) == null_type",
            "self.l.size() == 2",
            "type(self.l[0]) == null_type",
            "self.s.size() == 2",
            "type(self.s[0]) == null_type",
        ],
    ),
    Case(
        "escaping",
        obj(
            {
                **{
                    word: INTEGER
                    for word in (
                        "true",
                        "false",
                        "null",
                        "in",
                        "as",
                        "break",
                        "const",
                        "continue",
                        "else",
                        "for",
                        "function",
                        "if",
                        "import",
                        "let",
                        "loop",
                        "package",
                        "namespace",
                        "return",
                        "var",
                        "void",
                        "while",
                    )
                },
                **{
                    word: INTEGER
                    for word in (
                        "int",
                        "uint",
                        "double",
                        "bool",
                        "string",
                        "bytes",
                        "list",
                        "map",
                        "null_type",
                        "type",
                        "self",
                        "getDate",
                        "all",
                        "_true",
                    )
                },
                "size": STRING,
                "dot.dot": INTEGER,
                "dash-dash": INTEGER,
                "slash/slash": INTEGER,
                "underscore_underscore": INTEGER,
                "doubleunderscore__doubleunderscore": INTEGER,
            }
        ),
        {
            "true": 1,
            "false": 2,
            "null": 3,
            "in": 4,
            "as": 5,
            "break": 6,
            "const": 7,
            "continue": 8,
            "else": 9,
            "for": 10,
            "function": 11,
            "if": 12,
            "import": 13,
            "let": 14,
            "loop": 15,
            "package": 16,
            "namespace": 17,
            "return": 18,
            "var": 19,
            "void": 20,
            "while": 21,
            "int": 101,
            "uint": 102,
            "double": 103,
            "bool": 104,
            "string": 105,
            "bytes": 106,
            "list": 107,
            "map": 108,
            "null_type": 109,
            "type": 110,
            "self": 201,
            "getDate": 202,
            "all": 203,
            "size": "204",
            "_true": 301,
            "dot.dot": 401,
            "dash-dash": 402,
            "slash/slash": 403,
            "underscore_underscore": 404,
            "doubleunderscore__doubleunderscore": 405,
        },
        valid=[
            "self.__true__ == 1",
            "self.__false__ == 2",
            "self.__null__ == 3",
            "self.__in__ == 4",
            "self.__as__ == 5",
            "self.__break__ == 6",
            "self.__const__ == 7",
            "self.__continue__ == 8",
            "self.__else__ == 9",
            "self.__for__ == 10",
            "self.__function__ == 11",
            "self.__if__ == 12",
            "self.__import__ == 13",
            "self.__let__ == 14",
            "self.__loop__ == 15",
            "self.__package__ == 16",
            "self.__namespace__ == 17",
            "self.__return__ == 18",
            "self.__var__ == 19",
            "self.__void__ == 20",
            "self.__while__ == 21",
            "self.int == 101",
            "self.uint == 102",
            "self.double == 103",
            "self.bool == 104",
            "self.string == 105",
            "self.bytes == 106",
            "self.list == 107",
            "self.map == 108",
            "self.null_type == 109",
            "self.type == 110",
            "self.self == 201",
            "self.getDate == 202",
            "self.all == 203",
            "self.size == '204'",
            "self._true == 301",
            "self.__true__ != 301",
            "self.dot__dot__dot == 401",
            "self.dash__dash__dash == 402",
            "self.slash__slash__slash == 403",
            "self.underscore_underscore == 404",
            "self.doubleunderscore__underscores__doubleunderscore == 405",
        ],
    ),
    Case(
        "map keys are not escaped",
        obj({"m": map_of(INTEGER)}),
        {"m": {"@": 1, "9": 2, "int": 3, "./-": 4, "👑": 5}},
        valid=[
            "self.m['@'] == 1",
            "self.m['9'] == 2",
            "self.m['int'] == 3",
            "self.m['./-'] == 4",
            "self.m['👑'] == 5",
        ],
    ),
    Case(
        "container type composition",
        obj(
            {
                "obj": obj({"field": STRING}),
                "mapOfMap": map_of(map_of(STRING)),
                "mapOfObj": map_of(obj({"field2": STRING})),
                "mapOfListMap": map_of(list_of(obj({"k": STRING, "v": STRING}), "map", ["k"])),
                "mapOfList": map_of(list_of(STRING)),
                "listMapOfObj": list_of(obj({"k2": STRING, "v2": STRING}), "map", ["k2"]),
                "listOfMap": list_of(map_of(STRING)),
                "listOfObj": list_of(obj({"field3": STRING})),
                "listOfListMap": list_of(list_of(obj({"k3": STRING, "v3": STRING}), "map", ["k3"])),
            }
        ),
        {
            "obj": {"field": "a"},
            "mapOfMap": {"x": {"y": "b"}},
            "mapOfObj": {"k": {"field2": "c"}},
            "mapOfListMap": {"o": [{"k": "1", "v": "d"}]},
            "mapOfList": {"l": ["e"]},
            "listMapOfObj": [{"k2": "2", "v2": "f"}],
            "listOfMap": [{"z": "g"}],
            "listOfObj": [{"field3": "h"}],
            "listOfListMap": [[{"k3": "3", "v3": "i"}]],
        },
        valid=[
            "self.obj.field == 'a'",
            "self.mapOfMap['x']['y'] == 'b'",
            "self.mapOfObj['k'].field2 == 'c'",
            "self.mapOfListMap['o'].exists(e, e.k == '1' && e.v == 'd')",
            "self.mapOfList['l'][0] == 'e'",
            "self.listMapOfObj.exists(e, e.k2 == '2' && e.v2 == 'f')",
            "self.listOfMap[0]['z'] == 'g'",
            "self.listOfObj[0].field3 == 'h'",
            "self.listOfListMap[0].exists(e, e.k3 == '3' && e.v3 == 'i')",
        ],
    ),
    Case(
        "stdlib list functions",
        obj(
            {
                "ints": list_of(INTEGER),
                "unsortedInts": list_of(INTEGER),
                "emptyInts": list_of(INTEGER),
                "doubles": list_of(DOUBLE),
                "unsortedDoubles": list_of(DOUBLE),
                "intBackedDoubles": list_of(DOUBLE),
                "durations": list_of(DURATION),
                "unsortedDurations": list_of(DURATION),
                "strings": list_of(STRING),
                "unsortedStrings": list_of(STRING),
                "emptyStrings": list_of(STRING),
                "dates": list_of(DATE),
                "unsortedDates": list_of(DATE),
                "objs": list_of(obj({"f1": STRING, "f2": STRING})),
            }
        ),
        {
            "ints": [1, 2, 2, 3],
            "unsortedInts": [2, 1],
            "emptyInts": [],
            "doubles": [1.0, 2.0, 2.0, 3.0],
            "unsortedDoubles": [2.0, 1.0],
            "intBackedDoubles": [1, 2, 2, 3],
            "durations": ["1s", "1m", "1m", "1h"],
            "unsortedDurations": ["1m", "1s"],
            "strings": ["a", "b", "b", "c"],
            "unsortedStrings": ["b", "a"],
            "emptyStrings": [],
            "dates": ["2000-01-01", "2000-02-01", "2000-02-01", "2010-01-01"],
            "unsortedDates": ["2000-02-01", "2000-01-01"],
            "objs": [
                {"f1": "a", "f2": "a"},
                {"f1": "a", "f2": "b"},
                {"f1": "a", "f2": "b"},
                {"f1": "a", "f2": "c"},
            ],
        },
        valid=[
            "self.ints.sum() == 8",
            "self.ints.min() == 1",
            "self.ints.max() == 3",
            "self.emptyInts.sum() == 0",
            "self.ints.isSorted()",
            "self.emptyInts.isSorted()",
            "self.unsortedInts.isSorted() == false",
            "self.ints.indexOf(2) == 1",
            "self.ints.lastIndexOf(2) == 2",
            "self.ints.indexOf(10) == -1",
            "self.ints.lastIndexOf(10) == -1",
            "self.doubles.sum() == 8.0",
            "self.doubles.min() == 1.0",
            "self.doubles.max() == 3.0",
            "self.doubles.isSorted()",
            "self.unsortedDoubles.isSorted() == false",
            "self.doubles.indexOf(2.0) == 1",
            "self.doubles.lastIndexOf(2.0) == 2",
            "self.intBackedDoubles.sum() == 8.0",
            "self.intBackedDoubles.indexOf(2.0) == 1",
            "self.durations.sum() == duration('1h2m1s')",
            "self.durations.min() == duration('1s')",
            "self.durations.max() == duration('1h')",
            "self.durations.isSorted()",
            "self.unsortedDurations.isSorted() == false",
            "self.durations.indexOf(duration('1m')) == 1",
            "self.durations.lastIndexOf(duration('1m')) == 2",
            "self.strings.min() == 'a'",
            "self.strings.max() == 'c'",
            "self.strings.isSorted()",
            "self.emptyStrings.isSorted()",
            "self.unsortedStrings.isSorted() == false",
            "self.strings.indexOf('b') == 1",
            "self.strings.lastIndexOf('b') == 2",
            "self.strings.indexOf('x') == -1",
            "self.dates.min() == timestamp('2000-01-01T00:00:00.000Z')",
            "self.dates.max() == timestamp('2010-01-01T00:00:00.000Z')",
            "self.dates.isSorted()",
            "self.unsortedDates.isSorted() == false",
            "self.dates.indexOf(timestamp('2000-02-01T00:00:00.000Z')) == 1",
            "[[1], [2]].indexOf([1]) == 0",
            "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
            "self.objs.indexOf(self.objs[1]) == 1",
            "self.objs.lastIndexOf(self.objs[1]) == 2",
            "([0] + self.emptyInts).min() == 0",
            "dyn([1, 2]).sum() == 3",
            "dyn([1.0, 2.0]).sum() == 3.0",
        ],
        errors={
            "self.emptyInts.min() == 1": "min called on empty list",
            "self.emptyInts.max() == 3": "max called on empty list",
            "self.emptyStrings.min() == 'a'": "min called on empty list",
            "self.emptyStrings.max() == 'c'": "max called on empty list",
        },
    ),
    Case(
        "transition rules",
        obj({"v": STRING}),
        {"v": "new"},
        old={"v": "old"},
        valid=["oldSelf.v != self.v", "oldSelf.v == 'old' && self.v == 'new'"],
    ),
    Case(
        "skipped transition rule for nil old primitive",
        STRING,
        "exists",
        valid=["oldSelf == self"],
        skipped=True,
    ),
    Case(
        "skipped transition rule for nil old array",
        list_of(STRING),
        [],
        valid=["oldSelf == self"],
        skipped=True,
    ),
    Case(
        "skipped transition rule for nil old object",
        obj({"f": STRING}),
        {"f": "exists"},
        valid=["oldSelf.f == self.f"],
        skipped=True,
    ),
]
