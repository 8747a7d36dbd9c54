"""Properties of the schema engine over generated schemas and objects: no crash, idempotence, speed."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.k8s.schema import (
    CompiledSchema,
    check_structural,
    validate,
)
from codeflare.k8s.schema.field import ErrorType
from codeflare.k8s.schema.tests.samples import RAYCLUSTER_SCHEMA, raycluster

# --- invariants -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


keywords = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "additionalProperties",
        "required",
        "default",
        "nullable",
        "enum",
        "pattern",
        "allOf",
        "anyOf",
        "not",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
        "minimum",
        "maxLength",
        "metadata",
    ]
)
schema_like = st.recursive(
    st.dictionaries(keywords, json_values, max_size=4),
    lambda children: st.dictionaries(
        keywords, children | st.lists(children, max_size=2) | json_values, max_size=4
    ),
    max_leaves=12,
)


@FAST
@given(schema_like, json_values)
def test_garbage_schemas_never_crash_any_entry_point(schema: dict[str, Any], value: Any) -> None:
    check_structural(schema)
    compiled = CompiledSchema(schema)
    obj = {"spec": value}
    compiled.default(obj)
    compiled.prune(obj)
    compiled.validate(obj)


@FAST
@given(json_values)
def test_validate_never_raises_on_arbitrary_json(value: Any) -> None:
    validate(value, RAYCLUSTER_SCHEMA)
    validate({"spec": value, "status": value}, RAYCLUSTER_SCHEMA)


def raycluster_like() -> st.SearchStrategy[dict[str, Any]]:
    group = st.fixed_dictionaries(
        {"groupName": st.text(min_size=1, max_size=5)},
        optional={
            "replicas": st.integers(0, 5) | st.none(),
            "junk": json_values,
            "template": json_values,
            "scaleStrategy": st.fixed_dictionaries(
                {}, optional={"workersToDelete": st.lists(st.text(max_size=3)), "x": json_values}
            ),
        },
    )
    spec = st.fixed_dictionaries(
        {
            "headGroupSpec": st.fixed_dictionaries(
                {}, optional={"serviceType": st.just("ClusterIP"), "y": json_values}
            )
        },
        optional={
            "workerGroupSpecs": st.lists(group, max_size=3),
            "enableInTreeAutoscaling": st.none(),
            "unknown": json_values,
        },
    )
    return st.fixed_dictionaries(
        {"apiVersion": st.just("ray.io/v1"), "kind": st.just("RayCluster"), "spec": spec},
        optional={
            "status": st.dictionaries(st.sampled_from(["state", "junk"]), st.text(max_size=3)),
            "other": json_values,
        },
    )


@FAST
@given(raycluster_like())
def test_prune_then_validate_reports_no_unknown_fields_and_prune_is_idempotent(obj: dict[str, Any]) -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    compiled.prune(obj)
    assert compiled.prune(copy.deepcopy(obj)) == []
    errs = compiled.validate(obj)
    assert all(e.type != ErrorType.FORBIDDEN for e in errs)
    assert set(obj) <= {"apiVersion", "kind", "metadata", "spec", "status"}


@FAST
@given(raycluster_like())
def test_defaulting_is_idempotent_and_never_removes_set_values(obj: dict[str, Any]) -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    compiled.default(obj)
    once = copy.deepcopy(obj)
    compiled.default(obj)
    assert obj == once
    assert once["spec"].get("enableInTreeAutoscaling") is False


# --- speed (measured, not asserted hard: benchmarks own timing) ----------------------------------------


def test_compiled_schema_validates_a_raycluster_quickly() -> None:
    compiled = CompiledSchema(RAYCLUSTER_SCHEMA)
    obj = raycluster()
    assert len(json.dumps(obj)) > 1000
    start = time.perf_counter()
    for _ in range(200):
        compiled.default(obj)
        compiled.prune(obj)
        assert compiled.validate(obj) == []
    per_object = (time.perf_counter() - start) / 200
    assert per_object < 0.01  # generous: a shared CI core; typically ~0.1 ms
