"""Hypothesis strategies that build request bodies from a published OpenAPI v3 schema.

The fuzz tests read each kind's schema from the server's own ``/openapi/v3`` (built-in kinds)
or from a CRD's ``openAPIV3Schema`` and draw either well-typed bodies (every value of the type
its schema says, nested a few levels) or mistyped ones (one value, somewhere below the root, of
another JSON type), returning the dotted path a correct server must name in its answer.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SKIPPED_ROOT = frozenset(("apiVersion", "kind", "metadata", "status"))
TYPES = frozenset(("string", "integer", "number", "boolean", "array", "object"))
WRONG: dict[str, list[Any]] = {
    "string": [7, True, [], {}],
    "integer": ["x", 1.5, [], {}],
    "number": ["x", [], {}],
    "boolean": ["x", 1, []],
    "array": ["x", 1, {}],
    "object": ["x", 1, [1]],
}
TIMES = ["2026-01-02T03:04:05Z", "2026-12-31T23:59:59.123456Z", "2026-06-01T00:00:00+02:00"]
QUANTITIES = ["1", "500m", "2Gi", "0", "1e3"]
STRINGS = st.sampled_from(["a", "x-1", "TCP", "Always", "default", "v1", "10.0.0.1"]) | st.text(
    alphabet="abc-._/ Z0", max_size=6
)


def typed_node(schema: Any) -> str | None:
    """The one JSON type a schema node requires, or None (int-or-string, free-form, junctors)."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-int-or-string"):
        return None
    kind = schema.get("type")
    return kind if isinstance(kind, str) and kind in TYPES else None


def well_typed(schema: Any, depth: int = 3) -> st.SearchStrategy[Any]:
    """Values of the types ``schema`` declares (enums from the enum, times as RFC 3339)."""
    if not isinstance(schema, dict):
        return st.none()
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        return st.integers(1, 100) | st.sampled_from(["http", "50%"])
    if "oneOf" in schema or "anyOf" in schema:
        return st.sampled_from(QUANTITIES)
    kind = schema.get("type")
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.sampled_from(TIMES)
        if schema.get("format") == "byte":
            return st.sampled_from(["", "dg==", "aGVsbG8="])
        return STRINGS
    if kind == "integer":
        return st.integers(0, 100) | st.just(3.0)  # 3.0: refused for built-ins, as Go refuses it
    if kind == "number":
        return st.integers(0, 10) | st.floats(0, 10, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if depth <= 0:
        return st.just([] if kind == "array" else {}) if kind in ("array", "object") else st.none()
    if kind == "array":
        return st.lists(well_typed(schema.get("items"), depth - 1), max_size=2)
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        names = sorted(props)
        chosen = st.lists(st.sampled_from(names), max_size=3, unique=True)
        return chosen.flatmap(
            lambda keys: st.fixed_dictionaries({k: well_typed(props[k], depth - 1) for k in keys})
        )
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return st.dictionaries(st.sampled_from(["a", "b.c", "d_e"]), well_typed(extra, depth - 1), max_size=2)
    return st.just({})


def typed_paths(schema: Any, path: str = "", depth: int = 3) -> list[tuple[str, Any]]:
    """(path, node) of the typed nodes below ``schema`` (object properties, first array item,
    one map key ``k``), to at most ``depth`` levels, root type-meta and status left out."""
    out: list[tuple[str, Any]] = []
    if depth <= 0 or not isinstance(schema, dict):
        return out
    for name, sub in (schema.get("properties") or {}).items():
        if not path and name in SKIPPED_ROOT:
            continue
        child = f"{path}.{name}" if path else name
        if typed_node(sub):
            out.append((child, sub))
        out += typed_paths(sub, child, depth - 1)
    if isinstance(schema.get("items"), dict):
        child = f"{path}[0]"
        if typed_node(schema["items"]):
            out.append((child, schema["items"]))
        out += typed_paths(schema["items"], child, depth - 1)
    if isinstance(schema.get("additionalProperties"), dict):
        child = f"{path}.k"
        if typed_node(schema["additionalProperties"]):
            out.append((child, schema["additionalProperties"]))
        out += typed_paths(schema["additionalProperties"], child, depth - 1)
    return out


def body_at(path: str, value: Any) -> dict[str, Any]:
    """The smallest object holding ``value`` at ``path`` (``spec.ports[0].port``)."""
    tokens: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        tokens.append(name)
        if rest:
            tokens.append(int(rest.rstrip("]")))
    out: Any = value
    for token in reversed(tokens):
        out = [out] if isinstance(token, int) else {token: out}
    assert isinstance(out, dict)
    return out


@st.composite
def mistyped(draw: st.DrawFn, schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A body with one wrong-typed value, and that value's path."""
    path, node = draw(st.sampled_from(typed_paths(schema)))
    wrong = draw(st.sampled_from(WRONG[str(typed_node(node))]))
    return body_at(path, wrong), path
