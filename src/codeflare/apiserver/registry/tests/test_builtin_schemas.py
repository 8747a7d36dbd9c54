"""The built-in kinds' schemas: one per served kind, published with ``required``, validated without.

What the server does with them over HTTP is in tests/apiserver/test_builtin_validation.py.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.registry import builtin_schemas
from codeflare.apiserver.registry.resources import builtin_resources


def test_every_served_builtin_kind_has_a_schema() -> None:
    # (the review kinds have one too: tests/apiserver/test_builtin_validation.py reads them all
    # from the server's /openapi/v3)
    served = {(rt.group, rt.version, rt.kind) for rt in builtin_resources()}
    assert served <= set(builtin_schemas.kinds())
    for group, version, kind in served:
        schema = builtin_schemas.published_schema(group, version, kind)
        assert schema is not None and schema["type"] == "object", kind
        assert builtin_schemas.compiled(group, version, kind) is not None


def test_published_schema_keeps_required_and_map_value_types() -> None:
    binding = builtin_schemas.published_schema("rbac.authorization.k8s.io", "v1", "RoleBinding")
    assert binding is not None and binding["required"] == ["roleRef"]
    assert {"kind", "name"} <= set(binding["properties"]["roleRef"]["required"])
    cm = builtin_schemas.published_schema("", "v1", "ConfigMap")
    assert cm is not None and cm["properties"]["data"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    pod = builtin_schemas.published_schema("", "v1", "Pod")
    assert pod is not None
    port = pod["properties"]["spec"]["properties"]["containers"]["items"]["properties"]["ports"]["items"]
    assert port["properties"]["containerPort"] == {"type": "integer"}
    assert "x-codeflare-quantity" not in str(pod)


def test_validation_ignores_published_required_fields() -> None:
    # kube-apiserver's decoder does not enforce the published required lists (a RoleBinding's
    # roleRef fields are checked by its RBAC rules, with their own messages).
    compiled = builtin_schemas.compiled("rbac.authorization.k8s.io", "v1", "RoleBinding")
    assert compiled is not None
    assert compiled.compiled.validate({"roleRef": {}}) == []
    assert [e.field for e in compiled.compiled.validate({"roleRef": "x"})] == ["roleRef"]


def test_unknown_fields_are_pruned_with_their_paths() -> None:
    compiled = builtin_schemas.compiled("", "v1", "Pod")
    assert compiled is not None
    pod = {"spec": {"foo": 1, "containers": [{"name": "c", "bar": {}}]}, "baz": True}
    assert sorted(compiled.compiled.prune(pod)) == ["baz", "spec.containers[0].bar", "spec.foo"]
    assert pod == {"spec": {"containers": [{"name": "c"}]}}


QUANTITIES = st.one_of(
    st.integers(min_value=0, max_value=10**9),
    st.sampled_from(["500m", "1Gi", "2", "0.5", "1e3", "100Mi"]),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=100, deadline=None)
@given(cpu=QUANTITIES, memory=QUANTITIES)
def test_quantities_are_stored_as_strings(cpu: object, memory: object) -> None:
    # The typed kubernetes client decodes quantities as strings only: whatever a client sent,
    # the stored value is a string that parses to the same quantity.
    from codeflare.k8s.quantity import parse_quantity

    compiled = builtin_schemas.compiled("", "v1", "Pod")
    assert compiled is not None
    limits = {"cpu": cpu, "memory": memory}
    pod: dict[str, Any] = {"spec": {"containers": [{"name": "c", "resources": {"limits": dict(limits)}}]}}
    assert compiled.compiled.validate(pod) == []
    assert compiled.canonical_scalars(pod) == []
    stored = pod["spec"]["containers"][0]["resources"]["limits"]
    for key, value in limits.items():
        assert isinstance(stored[key], str)
        assert parse_quantity(stored[key]) == parse_quantity(value)  # type: ignore[arg-type]


def test_a_malformed_quantity_is_invalid() -> None:
    compiled = builtin_schemas.compiled("", "v1", "ResourceQuota")
    assert compiled is not None
    (err,) = compiled.canonical_scalars({"spec": {"hard": {"pods": "ten"}}})
    assert err.field == "spec.hard.pods"
    assert "quantities must match the regular expression" in err.message()


def test_integers_written_as_floats_are_refused_and_required_fields_filled() -> None:
    compiled = builtin_schemas.compiled("", "v1", "Pod")
    assert compiled is not None
    pod: dict[str, Any] = {"spec": {"containers": [{"ports": [{"containerPort": 80.0}]}]}}
    compiled.fill_required(pod)
    # Go writes fields without omitempty even when empty: typed clients expect them
    assert pod["spec"]["containers"][0] == {"name": "", "ports": [{"containerPort": 80.0}]}
    (err,) = compiled.canonical_scalars(pod)
    assert (
        err.message()
        == 'spec.containers[0].ports[0].containerPort: Invalid value: "number": must be of type integer'
    )
