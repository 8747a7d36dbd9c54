"""CEL rules as kube-apiserver applies them: transition rules, messages, reasons, paths, costs.

Behaviour is taken from apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``
(``validateExpressions``, ``fieldErrorForReason``, ``evalMessageExpression``, the map-list
correlation of ``validateArray``) and the CRD documentation's "Validation rules" section.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.schema import CompiledSchema, validate
from codeflare.k8s.schema.field import ErrorType
from codeflare.k8s.schema.rules import PER_CALL_LIMIT, compile_tree, evaluate
from codeflare.k8s.schema.tests.samples import messages

Rules = list[dict[str, Any]]


def spec_schema(props: dict[str, Any], rules: Rules | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": props}
    if rules:
        spec["x-kubernetes-validations"] = rules
    return {"type": "object", "properties": {"spec": spec}}


def cr(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a"}, "spec": spec}


IMMUTABLE_QUEUE = spec_schema(
    {
        "clusterQueue": {
            "type": "string",
            "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}],
        },
        "stopPolicy": {"type": "string"},
    }
)


# --- transition rules ------------------------------------------------------------------------


def test_a_transition_rule_runs_on_update_only() -> None:
    assert validate(cr(clusterQueue="a"), IMMUTABLE_QUEUE) == []
    assert validate(cr(clusterQueue="a", stopPolicy="Hold"), IMMUTABLE_QUEUE, cr(clusterQueue="a")) == []
    assert messages(validate(cr(clusterQueue="b"), IMMUTABLE_QUEUE, cr(clusterQueue="a"))) == [
        'spec.clusterQueue: Invalid value: "string": field is immutable'
    ]


def test_a_transition_rule_does_not_run_where_the_old_object_had_no_value() -> None:
    assert validate(cr(clusterQueue="b"), IMMUTABLE_QUEUE, cr()) == []
    # ...nor where the new one has none (absent values are not validated).
    assert validate(cr(), IMMUTABLE_QUEUE, cr(clusterQueue="a")) == []


MAP_LIST = spec_schema(
    {
        "items": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "size": {
                        "type": "integer",
                        "x-kubernetes-validations": [
                            {"rule": "self >= oldSelf", "message": "may not shrink"}
                        ],
                    },
                },
            },
        }
    }
)


def test_map_list_items_correlate_with_their_old_versions_by_key() -> None:
    old = cr(items=[{"name": "a", "size": 5}, {"name": "b", "size": 5}])
    reordered = cr(items=[{"name": "b", "size": 6}, {"name": "a", "size": 5}, {"name": "c", "size": 1}])
    assert validate(reordered, MAP_LIST, old) == []  # "c" is new: nothing to compare with
    shrunk = cr(items=[{"name": "b", "size": 5}, {"name": "a", "size": 4}])
    assert messages(validate(shrunk, MAP_LIST, old)) == [
        'spec.items[1].size: Invalid value: "integer": may not shrink'
    ]


def test_items_of_an_atomic_list_are_not_correlated() -> None:
    schema = spec_schema(
        {
            "l": {
                "type": "array",
                "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
            }
        }
    )
    tree = compile_tree(schema)
    assert tree is not None
    assert evaluate(tree, cr(l=[2]), cr(l=[1])) == []
    # A rule on the list itself compares whole lists.
    whole = spec_schema(
        {
            "l": {
                "type": "array",
                "items": {"type": "integer"},
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
            }
        }
    )
    assert messages(validate(cr(l=[2]), whole, cr(l=[1]))) == [
        'spec.l: Invalid value: "array": failed rule: self == oldSelf'
    ]


OPTIONAL_OLD = spec_schema(
    {
        "replicas": {
            "type": "integer",
            "x-kubernetes-validations": [
                {
                    "rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self <= 10",
                    "message": "starts at 10 at most, never decreases",
                    "optionalOldSelf": True,
                }
            ],
        }
    }
)


def test_optional_old_self_runs_on_create_with_an_empty_optional() -> None:
    assert validate(cr(replicas=3), OPTIONAL_OLD) == []
    assert messages(validate(cr(replicas=11), OPTIONAL_OLD)) == [
        'spec.replicas: Invalid value: "integer": starts at 10 at most, never decreases'
    ]
    assert validate(cr(replicas=50), OPTIONAL_OLD, cr(replicas=40)) == []
    assert len(validate(cr(replicas=39), OPTIONAL_OLD, cr(replicas=40))) == 1
    # The old object had no value there: oldSelf is an empty optional, as on create.
    assert len(validate(cr(replicas=11), OPTIONAL_OLD, cr())) == 1


def test_root_rules_see_type_meta_and_the_whole_object() -> None:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('a') && self.kind == 'X'"},
            {"rule": "self.spec.n == oldSelf.spec.n", "message": "n is immutable"},
        ],
    }
    assert validate(cr(n=1), schema) == []
    assert messages(validate(cr(n=2), schema, cr(n=1))) == ['<nil>: Invalid value: "object": n is immutable']


# --- messages, reasons, field paths -----------------------------------------------------------


def _spec_rule(rule: dict[str, Any]) -> dict[str, Any]:
    return spec_schema(
        {"a": {"type": "integer"}, "m": {"type": "object", "additionalProperties": {"type": "string"}}},
        [rule],
    )


def test_message_expression_gives_the_message() -> None:
    rule = {"rule": "self.a > 1", "messageExpression": "'a is ' + string(self.a) + ', want more than 1'"}
    assert messages(validate(cr(a=1), _spec_rule(rule))) == [
        'spec: Invalid value: "object": a is 1, want more than 1'
    ]


@pytest.mark.parametrize(
    "expression",
    ["self.missing + 'x'", "1", "'two\\nlines'", "'   '"],
    ids=["fails", "not a string", "line break", "blank"],
)
def test_message_expression_that_gives_no_message_falls_back(expression: str) -> None:
    with_message = {"rule": "self.a > 1", "messageExpression": expression, "message": "a too small"}
    assert messages(validate(cr(a=1), _spec_rule(with_message))) == [
        'spec: Invalid value: "object": a too small'
    ]
    bare = {"rule": "self.a > 1", "messageExpression": expression}
    assert messages(validate(cr(a=1), _spec_rule(bare))) == [
        'spec: Invalid value: "object": failed rule: self.a > 1'
    ]


@pytest.mark.parametrize(
    ("reason", "kind", "text"),
    [
        ("FieldValueInvalid", ErrorType.INVALID, 'spec: Invalid value: "object": a too small'),
        ("FieldValueForbidden", ErrorType.FORBIDDEN, "spec: Forbidden: a too small"),
        ("FieldValueRequired", ErrorType.REQUIRED, "spec: Required value: a too small"),
        ("FieldValueDuplicate", ErrorType.DUPLICATE, 'spec: Duplicate value: "object"'),
    ],
)
def test_reason_picks_the_error_type(reason: str, kind: str, text: str) -> None:
    errs = validate(cr(a=1), _spec_rule({"rule": "self.a > 1", "message": "a too small", "reason": reason}))
    assert [(e.type, e.message()) for e in errs] == [(kind, text)]
    assert errs[0].cause()["reason"] == kind


@pytest.mark.parametrize(
    ("field_path", "where"),
    [(".a", "spec.a"), ("['a']", "spec.a"), (".m['some.key']", "spec.m[some.key]")],
)
def test_field_path_moves_the_error(field_path: str, where: str) -> None:
    rule = {"rule": "self.a > 1", "message": "a too small", "fieldPath": field_path}
    assert messages(validate(cr(a=1, m={}), _spec_rule(rule))) == [
        f'{where}: Invalid value: "object": a too small'
    ]


def test_a_rule_that_fails_at_runtime_is_an_error_naming_the_rule() -> None:
    errs = validate(cr(a=1), _spec_rule({"rule": "self.m.x == 'y'"}))
    assert messages(errs) == [
        "spec: Invalid value: \"object\": no such key: m evaluating rule: self.m.x == 'y'"
    ]
    overload = validate(cr(a=1), _spec_rule({"rule": "self.a + 'x' == 'y'", "message": "odd"}))
    assert messages(overload) == [
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported "
        "operator, function or macro signature for rule: odd"
    ]
    not_bool = validate(cr(a=1), _spec_rule({"rule": "self.a"}))
    assert messages(not_bool) == [
        'spec: Invalid value: "object": cel expression must evaluate to a bool evaluating rule: self.a'
    ]


def test_unavailable_kubernetes_functions_say_so() -> None:
    errs = validate(cr(a=1), _spec_rule({"rule": "url('https://x').getHost() == 'x'"}))
    assert "function 'url' is not available in this server's CEL environment" in messages(errs)[0]


def test_rules_are_skipped_after_blocking_schema_errors() -> None:
    schema = spec_schema({"a": {"type": "integer"}}, [{"rule": "self.a > 1"}])
    assert messages(validate(cr(a="x"), schema)) == [
        'spec.a: Invalid value: "string": must be of type integer',
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    ]


def test_quantities_compare_by_amount() -> None:
    schema = spec_schema(
        {"q": {"x-kubernetes-int-or-string": True}},
        [{"rule": "quantity(self.q).isLessThan(quantity('2Gi')) && quantity(self.q) == quantity('1024Mi')"}],
    )
    assert validate(cr(q="1Gi"), schema) == []
    assert len(validate(cr(q="1G"), schema)) == 1
    bad = validate(cr(q="lots"), schema)
    assert "quantities must match the regular expression" in messages(bad)[0]


# --- the cost bound ---------------------------------------------------------------------------

CUBIC = "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"


def test_a_rule_priced_over_the_per_call_limit_is_refused_without_running() -> None:
    schema = spec_schema(
        {"l": {"type": "array", "items": {"type": "integer"}}}, [{"rule": CUBIC}, {"rule": "false"}]
    )
    assert validate(cr(l=list(range(10))), schema)[0].message().endswith("failed rule: false")
    errs = validate(cr(l=list(range(5000))), schema)  # 1.25e11 iterations: would stall for hours
    assert messages(errs) == [
        "spec: Invalid value: \"object\": 'operation cancelled: estimated cost limit exceeded': no further "
        f"validation rules will be run due to call cost exceeds limit for rule: {CUBIC}"
    ]


def test_an_object_whose_rules_together_exceed_the_budget_is_refused() -> None:
    square = "self.l.all(x, self.l.all(y, x >= 0 || y >= 0))"
    schema = spec_schema({"l": {"type": "array", "items": {"type": "integer"}}}, [{"rule": square}] * 40)
    tree = compile_tree(schema)
    assert tree is not None
    errs = evaluate(tree, cr(l=list(range(150))))
    assert messages(errs) == [
        'spec: Invalid value: "object": validation failed due to running out of cost budget, no further '
        "validation rules will be run"
    ]
    assert PER_CALL_LIMIT > 20 * 151**2  # each rule alone would have been allowed


def test_a_value_nested_too_deeply_for_the_library_is_not_handed_to_it() -> None:
    schema = spec_schema(
        {"free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        [{"rule": "self.free == self.free"}],
    )
    deep: Any = {}
    for _ in range(1500):
        deep = {"d": deep}
    assert messages(validate(cr(free=deep), schema)) == [
        'spec: Invalid value: "object": value nested deeper than 1000 levels: rules not evaluated'
    ]
    assert validate(cr(free={"d": {}}), schema) == []
    # A rule that only tests presence is not handed the deep value at all, so it runs.
    presence = spec_schema(
        {"free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        [{"rule": "!has(self.free)"}],
    )
    assert messages(validate(cr(free=deep), presence)) == [
        'spec: Invalid value: "object": failed rule: !has(self.free)'
    ]


def test_rules_compile_once_per_schema() -> None:
    compiled = CompiledSchema(IMMUTABLE_QUEUE)
    first = compiled.rules()
    assert first is not None and compiled.rules() is first
    assert CompiledSchema({"type": "object"}).rules() is None


# --- rules Kueue's own CRDs carry -------------------------------------------------------------

# kubernetes-sigs/kueue apis/kueue/v1beta1/clusterqueue_types.go (ClusterQueueSpec, ResourceGroup).
KUEUE_SPEC_RULE = {
    "rule": "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true",
    "message": "borrowingLimit must be nil when cohort is empty",
}
KUEUE_GROUP_RULE = {
    "rule": "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
    "message": "flavors must have the same number of resources as the coveredResources",
}
QUOTA = {"x-kubernetes-int-or-string": True}
CLUSTER_QUEUE = spec_schema(
    {
        "cohort": {"type": "string"},
        "resourceGroups": {
            "type": "array",
            "items": {
                "type": "object",
                "x-kubernetes-validations": [KUEUE_GROUP_RULE],
                "properties": {
                    "coveredResources": {"type": "array", "items": {"type": "string"}},
                    "flavors": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "resources": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "name": {"type": "string"},
                                            "nominalQuota": QUOTA,
                                            "borrowingLimit": QUOTA,
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
    [KUEUE_SPEC_RULE],
)


def _group(*resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": "default", "resources": list(resources)}],
    }


def test_kueue_cluster_queue_rules_refuse_what_kueue_refuses() -> None:
    cpu, memory = {"name": "cpu", "nominalQuota": 9}, {"name": "memory", "nominalQuota": "36Gi"}
    assert validate(cr(resourceGroups=[_group(cpu, memory)]), CLUSTER_QUEUE) == []
    borrowing = {**cpu, "borrowingLimit": 1}
    assert validate(cr(cohort="all", resourceGroups=[_group(borrowing, memory)]), CLUSTER_QUEUE) == []
    assert messages(validate(cr(resourceGroups=[_group(borrowing, memory)]), CLUSTER_QUEUE)) == [
        'spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty'
    ]
    assert messages(validate(cr(resourceGroups=[_group(cpu)]), CLUSTER_QUEUE)) == [
        'spec.resourceGroups[0]: Invalid value: "object": '
        "flavors must have the same number of resources as the coveredResources"
    ]
