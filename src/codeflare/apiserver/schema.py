"""OpenAPI v3 schema handling for custom resources: validation, defaulting, pruning.

Every write of a custom resource goes through the same three steps a real API server applies
with the CRD version's ``openAPIV3Schema``: drop fields the schema does not know (prune), fill
in ``default`` values, then validate. :class:`CompiledSchema` turns a schema into a tree of
nodes once (regexes compiled, enums hashed, "does this subtree default anything" precomputed)
so each write only walks the object. :func:`check_structural` holds the checks a CRD's schema
must pass before it is accepted. Pure functions, no I/O. Deliberately not supported:
``x-kubernetes-validations`` (CEL rules are accepted and ignored), ``$ref`` (forbidden in CRDs),
and range checks for numeric formats (Kubernetes does not apply them either).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import ipaddress
import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from codeflare.apiserver.errors import (
    FIELD_DUPLICATE,
    FIELD_FORBIDDEN,
    FIELD_INVALID,
    FIELD_NOT_SUPPORTED,
    FIELD_REQUIRED,
    FIELD_TOO_LONG,
    FIELD_TYPE_INVALID,
    FieldError,
)
from codeflare.apiserver.metadata import json_type, validate_object_meta

ROOT_PATH = "<root>"
_TYPE_META = ("apiVersion", "kind", "metadata")
_Check = Callable[[Any, str, list[FieldError]], None]


def _render(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _hashable(value: Any) -> Any:
    """A key equal for equal JSON values (1 == 1.0, True != 1), for enum/set/unique checks."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    return ("j", json.dumps(value, sort_keys=True))


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile an OpenAPI (ECMA/RE2-flavoured) pattern as a Python regex; raises re.error."""
    translated = pattern.replace(r"\z", r"\Z")
    return re.compile(translated, re.ASCII)


_DATE = r"\d{4}-\d{2}-\d{2}"
_FORMATS: dict[str, re.Pattern[str]] = {
    "date": re.compile(_DATE),
    "date-time": re.compile(_DATE + r"[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"),
    "datetime": re.compile(_DATE + r"[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
    "uuid3": re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
    "uuid4": re.compile(
        r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}"
    ),
    "uuid5": re.compile(
        r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}"
    ),
    "hostname": re.compile(
        r"(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*\.?"
    ),
    "email": re.compile(r"[^@\s]+@[^@\s]+"),
    "mac": re.compile(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}|([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}"),
    "hexcolor": re.compile(r"#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})"),
    "duration": re.compile(
        r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+|\d+\s*(ns|us|ms|s|m|h|d|w"
        r"|seconds?|minutes?|hours?|days?|weeks?)"
    ),
}


def _format_ok(fmt: str, value: str) -> bool:
    regex = _FORMATS.get(fmt)
    if regex is not None:
        return regex.fullmatch(value) is not None
    try:
        if fmt == "byte":
            base64.b64decode(value, validate=True)
        elif fmt == "ipv4":
            ipaddress.IPv4Address(value)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(value)
        elif fmt == "cidr":
            ipaddress.ip_network(value, strict=False)
    except (ValueError, binascii.Error):
        return False
    return True  # unknown formats (and int32, password, uri...) are not checked


class _Node:
    """One compiled schema node; see :meth:`CompiledSchema._compile` for the fields."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "array_checks",
        "default",
        "embedded",
        "enum",
        "has_default",
        "items",
        "list_keys",
        "list_type",
        "not_",
        "nullable",
        "number_checks",
        "object_checks",
        "one_of",
        "preserve",
        "properties",
        "required",
        "string_checks",
        "types",
    )

    def __init__(self) -> None:
        self.types: frozenset[str] | None = None  # None: any JSON type
        self.nullable = False
        self.enum: list[Any] | None = None
        self.string_checks: list[_Check] = []
        self.number_checks: list[_Check] = []
        self.array_checks: list[_Check] = []
        self.object_checks: list[_Check] = []
        self.properties: dict[str, _Node] = {}
        self.required: tuple[str, ...] = ()
        self.additional: _Node | bool | None = None
        self.items: _Node | None = None
        self.all_of: list[_Node] = []
        self.any_of: list[_Node] = []
        self.one_of: list[_Node] = []
        self.not_: _Node | None = None
        self.preserve = False
        self.embedded = False
        self.list_type = "atomic"
        self.list_keys: tuple[str, ...] = ()
        self.has_default = False
        self.default: Any = None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shown(path: str) -> str:
    return path or ROOT_PATH


class CompiledSchema:
    """A CRD version's ``openAPIV3Schema``, compiled once and applied to many objects.

    Field paths are dotted from the object root: ``spec.workerGroupSpecs[0].replicas``;
    map keys (``additionalProperties``) are appended with a dot as Kubernetes' CRD validation
    does (``spec.rayStartParams.num-cpus``). Integers: a JSON number without fractional part
    (``3`` or ``3.0``) is an integer, as in Kubernetes; booleans never are.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.root = self._compile(schema)

    # --- compilation -------------------------------------------------------------------

    def _compile(self, s: Any) -> _Node:
        node = _Node()
        if not isinstance(s, dict):
            return node
        typ = s.get("type")
        if s.get("x-kubernetes-int-or-string"):
            node.types = frozenset(("integer", "string"))
        elif isinstance(typ, str) and typ:
            node.types = frozenset((typ,))
        elif isinstance(typ, list) and typ:
            node.types = frozenset(t for t in typ if isinstance(t, str))
        if node.types is not None and "number" in node.types:
            node.types = node.types | {"integer"}
        node.nullable = bool(s.get("nullable"))
        node.preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
        node.embedded = bool(s.get("x-kubernetes-embedded-resource"))
        if isinstance(s.get("enum"), list):
            node.enum = list(s["enum"])
        if "default" in s:
            node.has_default, node.default = True, s["default"]
        self._compile_checks(node, s)
        props = s.get("properties")
        if isinstance(props, dict):
            node.properties = {k: self._compile(v) for k, v in props.items()}
        req = s.get("required")
        if isinstance(req, list):
            node.required = tuple(r for r in req if isinstance(r, str))
        add = s.get("additionalProperties")
        if isinstance(add, bool):
            node.additional = add
        elif isinstance(add, dict):
            node.additional = self._compile(add)
        if isinstance(s.get("items"), dict):
            node.items = self._compile(s["items"])
        for key, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
            if isinstance(s.get(key), list):
                setattr(node, attr, [self._compile(sub) for sub in s[key]])
        if isinstance(s.get("not"), dict):
            node.not_ = self._compile(s["not"])
        list_type = s.get("x-kubernetes-list-type")
        if list_type in ("set", "map"):
            node.list_type = list_type
            keys = s.get("x-kubernetes-list-map-keys") or ()
            node.list_keys = tuple(k for k in keys if isinstance(k, str))
        return node

    def _compile_checks(self, node: _Node, s: dict[str, Any]) -> None:
        strs, nums, arrs, objs = node.string_checks, node.number_checks, node.array_checks, node.object_checks
        if isinstance(s.get("maxLength"), int):
            strs.append(_max_length(s["maxLength"]))
        if isinstance(s.get("minLength"), int):
            strs.append(_min_length(s["minLength"]))
        if isinstance(s.get("pattern"), str):
            # An invalid pattern is rejected by check_structural when the CRD is created.
            with contextlib.suppress(re.error):
                strs.append(_pattern(s["pattern"], compile_pattern(s["pattern"])))
        if isinstance(s.get("format"), str):
            strs.append(_format(s["format"]))
        for key, excl_key, op in (
            ("minimum", "exclusiveMinimum", "min"),
            ("maximum", "exclusiveMaximum", "max"),
        ):
            bound = s.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                nums.append(_bound(bound, op, bool(s.get(excl_key))))
        mult = s.get("multipleOf")
        if isinstance(mult, int | float) and not isinstance(mult, bool) and mult > 0:
            nums.append(_multiple_of(mult))
        for key, word, fn in (("minItems", "items", _min_count), ("minProperties", "properties", _min_count)):
            if isinstance(s.get(key), int):
                (arrs if word == "items" else objs).append(fn(s[key], word))
        for key, word in (("maxItems", "items"), ("maxProperties", "properties")):
            if isinstance(s.get(key), int):
                (arrs if word == "items" else objs).append(_max_count(s[key], word))
        if s.get("uniqueItems") is True:
            arrs.append(_unique_items)

    # --- validation --------------------------------------------------------------------

    def validate(self, obj: Any) -> list[FieldError]:
        """Every way ``obj`` (a whole custom object) breaks the schema; empty when valid."""
        errs: list[FieldError] = []
        root = self.root
        if not isinstance(obj, dict):
            errs.append(FieldError(FIELD_TYPE_INVALID, ROOT_PATH, "must be of type object", json_type(obj)))
            return errs
        for key in root.required:
            if key not in obj:
                errs.append(FieldError(FIELD_REQUIRED, key))
        for check in root.object_checks:
            check(obj, "", errs)
        for key, value in obj.items():
            if key == "metadata":
                self._validate_root_metadata(value, errs)
                continue
            child = root.properties.get(key)
            if child is None:
                if key in _TYPE_META:
                    continue
                if isinstance(root.additional, _Node):
                    child = root.additional
                elif root.additional is False:
                    errs.append(FieldError(FIELD_FORBIDDEN, key, "is a forbidden property"))
                    continue
                else:
                    continue
            _validate(child, value, key, errs)
        for sub in root.all_of:
            _validate(sub, obj, "", errs)
        _validate_junctors(root, obj, "", errs)
        return errs

    def _validate_root_metadata(self, meta: Any, errs: list[FieldError]) -> None:
        node = self.root.properties.get("metadata")
        if node is None or not isinstance(meta, dict):
            return
        for key in ("name", "generateName"):
            child = node.properties.get(key)
            if child is not None and key in meta:
                _validate(child, meta[key], f"metadata.{key}", errs)

    # --- defaulting --------------------------------------------------------------------

    def default(self, obj: Any) -> None:
        """Apply ``default`` values in place, as Kubernetes does on every read and write.

        A property that is absent - or null while not nullable - gets a copy of its default;
        nested defaults apply under parents that exist or were just defaulted; ``items``
        defaults apply to each element. A null non-nullable property without a default is
        dropped (Kubernetes prunes those before validation). Root metadata is left alone.
        """
        if isinstance(obj, dict):
            _default_object(self.root, obj, root=True)

    # --- pruning -----------------------------------------------------------------------

    def prune(self, obj: Any) -> list[str]:
        """Remove, in place, fields the schema does not specify; return their dotted paths.

        Kept: everything under ``x-kubernetes-preserve-unknown-fields``, apiVersion, kind and
        metadata at the root and in embedded resources. Root metadata is not pruned here.
        """
        removed: list[str] = []
        if isinstance(obj, dict):
            _prune(self.root, obj, "", removed, root=True)
        return removed


# --- validation helpers ---------------------------------------------------------------------


def _type_error(node: _Node, value: Any, path: str) -> FieldError:
    wanted = " or ".join(sorted(node.types or ()))
    return FieldError(FIELD_TYPE_INVALID, _shown(path), f"must be of type {wanted}", json_type(value))


def _validate(node: _Node, value: Any, path: str, errs: list[FieldError]) -> None:
    types = node.types
    if value is None:
        if types is not None and not node.nullable:
            errs.append(_type_error(node, value, path))
        return
    if isinstance(value, str):
        if types is not None and "string" not in types:
            errs.append(_type_error(node, value, path))
            return
        for check in node.string_checks:
            check(value, path, errs)
    elif isinstance(value, bool):
        if types is not None and "boolean" not in types:
            errs.append(_type_error(node, value, path))
            return
    elif isinstance(value, int | float):
        kind = "number" if isinstance(value, float) and not value.is_integer() else "integer"
        if types is not None and kind not in types:
            errs.append(_type_error(node, value, path))
            return
        for check in node.number_checks:
            check(value, path, errs)
    elif isinstance(value, list):
        if types is not None and "array" not in types:
            errs.append(_type_error(node, value, path))
            return
        _validate_array(node, value, path, errs)
    elif isinstance(value, dict):
        if types is not None and "object" not in types:
            errs.append(_type_error(node, value, path))
            return
        _validate_object(node, value, path, errs)
    else:
        errs.append(
            FieldError(FIELD_TYPE_INVALID, _shown(path), "must be a JSON value", type(value).__name__)
        )
        return
    if node.enum is not None:
        _check_enum(node.enum, value, path, errs)
    if node.all_of:
        for sub in node.all_of:
            _validate(sub, value, path, errs)
    if node.any_of or node.one_of or node.not_ is not None:
        _validate_junctors(node, value, path, errs)


def _check_enum(enum: list[Any], value: Any, path: str, errs: list[FieldError]) -> None:
    key = _hashable(value)
    if any(_hashable(e) == key for e in enum):
        return
    supported = ", ".join(_render(e) for e in enum)
    errs.append(FieldError(FIELD_NOT_SUPPORTED, _shown(path), f"supported values: {supported}", value))


def _validate_junctors(node: _Node, value: Any, path: str, errs: list[FieldError]) -> None:
    if node.any_of:
        failures: list[list[FieldError]] = []
        for sub in node.any_of:
            sub_errs: list[FieldError] = []
            _validate(sub, value, path, sub_errs)
            if not sub_errs:
                break
            failures.append(sub_errs)
        else:
            errs.append(
                FieldError(FIELD_INVALID, _shown(path), "must validate at least one schema (anyOf)", value)
            )
            fewest: list[FieldError] = min(failures, key=len)
            errs.extend(fewest)
    if node.one_of:
        passing = 0
        for sub in node.one_of:
            sub_errs = []
            _validate(sub, value, path, sub_errs)
            passing += not sub_errs
        if passing != 1:
            errs.append(
                FieldError(
                    FIELD_INVALID, _shown(path), "must validate one and only one schema (oneOf)", value
                )
            )
    if node.not_ is not None:
        sub_errs = []
        _validate(node.not_, value, path, sub_errs)
        if not sub_errs:
            errs.append(FieldError(FIELD_INVALID, _shown(path), "must not validate the schema (not)", value))


def _validate_object(node: _Node, value: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    for key in node.required:
        if key not in value:
            errs.append(FieldError(FIELD_REQUIRED, _join(path, key)))
    for check in node.object_checks:
        check(value, path, errs)
    if node.embedded:
        _validate_embedded(value, path, errs)
    props, additional = node.properties, node.additional
    if not props and additional is None:
        return
    for key, child_value in value.items():
        child = props.get(key)
        if child is None:
            if isinstance(additional, _Node):
                child = additional
            elif additional is False and not (node.embedded and key in _TYPE_META):
                errs.append(FieldError(FIELD_FORBIDDEN, _join(path, key), "is a forbidden property"))
                continue
            else:
                continue
        _validate(child, child_value, _join(path, key), errs)


def _validate_embedded(value: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    for key in ("apiVersion", "kind"):
        field_value = value.get(key)
        if key not in value:
            errs.append(FieldError(FIELD_REQUIRED, _join(path, key), "must not be empty"))
        elif not isinstance(field_value, str):
            errs.append(FieldError(FIELD_INVALID, _join(path, key), "must be a string", field_value))
        elif not field_value:
            errs.append(FieldError(FIELD_INVALID, _join(path, key), "must not be empty", field_value))
    meta = value.get("metadata")
    if meta is None:
        return
    namespaced = isinstance(meta, dict) and bool(meta.get("namespace"))
    prefix = _join(path, "metadata")
    for err in validate_object_meta(meta, namespaced=namespaced, name_rule="path", require_name=False):
        errs.append(FieldError(err.type, prefix + err.field.removeprefix("metadata"), err.detail, err.value))


def _validate_array(node: _Node, value: list[Any], path: str, errs: list[FieldError]) -> None:
    for check in node.array_checks:
        check(value, path, errs)
    items = node.items
    if items is not None:
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", errs)
    if node.list_type == "set":
        seen: set[Any] = set()
        for i, item in enumerate(value):
            key = _hashable(item)
            if key in seen:
                errs.append(FieldError(FIELD_DUPLICATE, f"{path}[{i}]", "", item))
            seen.add(key)
    elif node.list_type == "map" and node.list_keys:
        seen_keys: set[tuple[Any, ...]] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key_tuple = tuple(_hashable(item.get(k)) for k in node.list_keys)
            if key_tuple in seen_keys:
                shown = {k: item.get(k) for k in node.list_keys if k in item}
                errs.append(FieldError(FIELD_DUPLICATE, f"{path}[{i}]", "", shown))
            seen_keys.add(key_tuple)


def _max_length(limit: int) -> _Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if len(value) > limit:
            errs.append(FieldError(FIELD_TOO_LONG, _shown(path), f"may not be longer than {limit}"))

    return check


def _min_length(limit: int) -> _Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if len(value) < limit:
            errs.append(
                FieldError(FIELD_INVALID, _shown(path), f"should be at least {limit} chars long", value)
            )

    return check


def _pattern(source: str, regex: re.Pattern[str]) -> _Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if regex.search(value) is None:
            errs.append(FieldError(FIELD_INVALID, _shown(path), f"should match '{source}'", value))

    return check


def _format(fmt: str) -> _Check:
    def check(value: str, path: str, errs: list[FieldError]) -> None:
        if not _format_ok(fmt, value):
            errs.append(FieldError(FIELD_INVALID, _shown(path), f"must be of type {fmt}", value))

    return check


def _bound(bound: float, op: str, exclusive: bool) -> _Check:
    if op == "min":
        word = "greater than" if exclusive else "greater than or equal to"
    else:
        word = "less than" if exclusive else "less than or equal to"
    detail = f"should be {word} {bound}"

    def check(value: float, path: str, errs: list[FieldError]) -> None:
        if op == "min":
            bad = value <= bound if exclusive else value < bound
        else:
            bad = value >= bound if exclusive else value > bound
        if bad:
            errs.append(FieldError(FIELD_INVALID, _shown(path), detail, value))

    return check


def _multiple_of(factor: float) -> _Check:
    def check(value: float, path: str, errs: list[FieldError]) -> None:
        if isinstance(value, int) and isinstance(factor, int):
            ok = value % factor == 0
        else:
            quotient = value / factor
            ok = math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9
        if not ok:
            errs.append(FieldError(FIELD_INVALID, _shown(path), f"should be a multiple of {factor}", value))

    return check


def _min_count(limit: int, word: str) -> _Check:
    def check(value: Any, path: str, errs: list[FieldError]) -> None:
        if len(value) < limit:
            errs.append(
                FieldError(FIELD_INVALID, _shown(path), f"should have at least {limit} {word}", len(value))
            )

    return check


def _max_count(limit: int, word: str) -> _Check:
    def check(value: Any, path: str, errs: list[FieldError]) -> None:
        if len(value) > limit:
            errs.append(
                FieldError(FIELD_INVALID, _shown(path), f"must have at most {limit} {word}", len(value))
            )

    return check


def _unique_items(value: list[Any], path: str, errs: list[FieldError]) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(value):
        key = _hashable(item)
        if key in seen:
            errs.append(FieldError(FIELD_DUPLICATE, f"{path}[{i}]", "", item))
        seen.add(key)


# --- defaulting and pruning helpers ------------------------------------------------------------


def _copy_default(value: Any) -> Any:
    return copy.deepcopy(value) if isinstance(value, dict | list) else value


def _default_object(node: _Node, obj: dict[str, Any], root: bool = False) -> None:
    props = node.properties
    if props:
        for key, child in props.items():
            if root and key in _TYPE_META:
                continue
            if key not in obj:
                if child.has_default:
                    obj[key] = _copy_default(child.default)
            elif obj[key] is None and not child.nullable:
                if child.has_default:
                    obj[key] = _copy_default(child.default)
                elif child.types is not None:
                    del obj[key]
        for key, child in props.items():
            if root and key in _TYPE_META:
                continue
            value = obj.get(key)
            if isinstance(value, dict | list):
                _default_value(child, value)
    additional = node.additional
    if isinstance(additional, _Node):
        for key, value in list(obj.items()):
            if key in props:
                continue
            if value is None and not additional.nullable and additional.has_default:
                obj[key] = _copy_default(additional.default)
            elif isinstance(value, dict | list):
                _default_value(additional, value)


def _default_value(node: _Node, value: Any) -> None:
    if isinstance(value, dict):
        _default_object(node, value)
    elif isinstance(value, list) and node.items is not None:
        items = node.items
        for i, item in enumerate(value):
            if item is None and items.has_default and not items.nullable:
                value[i] = _copy_default(items.default)
            elif isinstance(item, dict | list):
                _default_value(items, item)


def _prune(node: _Node, obj: dict[str, Any], path: str, removed: list[str], root: bool = False) -> None:
    props, additional = node.properties, node.additional
    keep_type_meta = root or node.embedded
    for key in list(obj):
        value = obj[key]
        child = props.get(key)
        if child is None:
            if keep_type_meta and key in _TYPE_META:
                continue
            if isinstance(additional, _Node):
                child = additional
            elif additional is True or node.preserve:
                continue
            else:
                del obj[key]
                removed.append(_join(path, key))
                continue
        if root and key == "metadata":
            continue
        _prune_value(child, value, _join(path, key), removed)


def _prune_value(node: _Node, value: Any, path: str, removed: list[str]) -> None:
    if isinstance(value, dict):
        if node.types is None and node.preserve and not node.properties and node.additional is None:
            return
        if node.types is not None and "object" not in node.types:
            return
        _prune(node, value, path, removed)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            _prune_value(node.items, item, f"{path}[{i}]", removed)


# --- module-level conveniences -------------------------------------------------------------


_CACHE: dict[str, CompiledSchema] = {}
_CACHE_MAX = 64


def compile_schema(schema: dict[str, Any]) -> CompiledSchema:
    """A :class:`CompiledSchema` for ``schema``, cached by content (keep your own for speed)."""
    key = json.dumps(schema, sort_keys=True, default=str)
    compiled = _CACHE.get(key)
    if compiled is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        compiled = _CACHE[key] = CompiledSchema(schema)
    return compiled


def validate(obj: Any, schema: dict[str, Any]) -> list[FieldError]:
    """Validate a whole custom object against its version's ``openAPIV3Schema``."""
    return compile_schema(schema).validate(obj)


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    """Apply the schema's defaults to ``obj`` in place (see :meth:`CompiledSchema.default`)."""
    compile_schema(schema).default(obj)


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Drop unknown fields from ``obj`` in place; return their paths (``spec.foo``)."""
    return compile_schema(schema).prune(obj)


# --- structural schema checks (CRD creation) ---------------------------------------------------

_TYPES = ("object", "array", "string", "integer", "number", "boolean")
_SCALARS = frozenset(("string", "integer", "number", "boolean"))
_UNSUPPORTED = (
    "$ref",
    "$schema",
    "id",
    "definitions",
    "dependencies",
    "patternProperties",
    "additionalItems",
)
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_NOT_IN_JUNCTORS = (
    "type",
    "default",
    "additionalProperties",
    "nullable",
    "description",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
)
_METADATA_NAME_KEYS = frozenset(
    ("type", "pattern", "minLength", "maxLength", "enum", "format", "description")
)


def check_structural(schema: Any, path: str = "spec.validation.openAPIV3Schema") -> list[FieldError]:
    """The checks a CRD's ``openAPIV3Schema`` must pass before the CRD is accepted.

    Structural-schema rules: every node outside allOf/anyOf/oneOf/not has a type (unless
    int-or-string or preserve-unknown-fields), the root is an object, those junctors add no
    type/default/nullable and no field that is not also declared outside them,
    ``properties`` and ``additionalProperties`` exclude each other, arrays declare ``items``,
    list-type set/map are well formed, patterns compile, root metadata only restricts name and
    generateName, and each ``default`` validates against its node and has no pruned fields.
    """
    errs: list[FieldError] = []
    if not isinstance(schema, dict):
        return [FieldError(FIELD_TYPE_INVALID, path, "must be of type object", json_type(schema))]
    _check_node(schema, path, errs, root=True)
    return errs


def _check_node(
    s: Any,
    path: str,
    errs: list[FieldError],
    root: bool = False,
    junctor: bool = False,
    int_or_string_branch: bool = False,
) -> None:
    if not isinstance(s, dict):
        errs.append(FieldError(FIELD_TYPE_INVALID, path, "must be of type object", json_type(s)))
        return
    _check_keywords(s, path, errs, junctor, int_or_string_branch)
    typ = s.get("type")
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields")
    if not junctor:
        if typ is None or typ == "":
            if not int_or_string and preserve is not True:
                detail = "must be object at the root" if root else "must not be empty for specified fields"
                errs.append(FieldError(FIELD_REQUIRED, f"{path}.type", detail))
        elif typ not in _TYPES:
            errs.append(FieldError(FIELD_NOT_SUPPORTED, f"{path}.type", _supported(_TYPES), typ))
        elif root and typ != "object":
            errs.append(FieldError(FIELD_INVALID, f"{path}.type", "must be object at the root", typ))
        if int_or_string and typ:
            errs.append(
                FieldError(
                    FIELD_INVALID, f"{path}.type", "must be empty if x-kubernetes-int-or-string is true", typ
                )
            )
    if preserve is not None and preserve is not True:
        errs.append(
            FieldError(
                FIELD_INVALID,
                f"{path}.x-kubernetes-preserve-unknown-fields",
                "must be true or undefined",
                preserve,
            )
        )
    if s.get("x-kubernetes-embedded-resource") is True:
        if typ != "object":
            errs.append(
                FieldError(
                    FIELD_INVALID,
                    f"{path}.type",
                    "must be object if x-kubernetes-embedded-resource is true",
                    typ,
                )
            )
        if not s.get("properties") and preserve is not True:
            errs.append(
                FieldError(
                    FIELD_REQUIRED,
                    f"{path}.properties",
                    "must not be empty if x-kubernetes-embedded-resource is true without "
                    "x-kubernetes-preserve-unknown-fields",
                )
            )
    if root:
        for key in ("nullable", "default"):
            if s.get(key) not in (None, False) or (key == "default" and "default" in s):
                errs.append(FieldError(FIELD_FORBIDDEN, f"{path}.{key}", "must not be set at the root"))
    props = s.get("properties")
    if isinstance(props, dict) and "additionalProperties" in s:
        errs.append(
            FieldError(
                FIELD_FORBIDDEN,
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if typ == "array" and not junctor and "items" not in s:
        errs.append(FieldError(FIELD_REQUIRED, f"{path}.items", "must be specified"))
    _check_list_type(s, path, errs)
    _check_children(s, path, errs, root, junctor)
    if "default" in s and not root and not junctor:
        _check_default(s, path, errs)


def _supported(values: tuple[str, ...]) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)


def _check_keywords(
    s: dict[str, Any], path: str, errs: list[FieldError], junctor: bool, int_or_string_branch: bool = False
) -> None:
    for key in _UNSUPPORTED:
        if key in s:
            errs.append(FieldError(FIELD_FORBIDDEN, f"{path}.{key}", f"{key} is not supported"))
    if s.get("uniqueItems") is True:
        errs.append(
            FieldError(
                FIELD_FORBIDDEN,
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    if isinstance(s.get("pattern"), str):
        try:
            compile_pattern(s["pattern"])
        except re.error as exc:
            errs.append(
                FieldError(
                    FIELD_INVALID,
                    f"{path}.pattern",
                    f"must be a valid regular expression, but isn't: {exc}",
                    s["pattern"],
                )
            )
    if junctor:
        # The one allowed type in a junctor: anyOf [{type: integer}, {type: string}] of int-or-string.
        int_or_string_branch = int_or_string_branch and s.get("type") in ("integer", "string")
        for key in _NOT_IN_JUNCTORS:
            if key in s and not (key == "type" and int_or_string_branch):
                errs.append(
                    FieldError(
                        FIELD_FORBIDDEN, f"{path}.{key}", "must not be set inside allOf/anyOf/oneOf/not"
                    )
                )


def _check_list_type(s: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    list_type = s.get("x-kubernetes-list-type")
    keys = s.get("x-kubernetes-list-map-keys")
    if list_type is None:
        if keys:
            errs.append(
                FieldError(
                    FIELD_INVALID,
                    f"{path}.x-kubernetes-list-type",
                    "must be map if x-kubernetes-list-map-keys is non-empty",
                    list_type,
                )
            )
        return
    field = f"{path}.x-kubernetes-list-type"
    if list_type not in ("atomic", "set", "map"):
        errs.append(FieldError(FIELD_NOT_SUPPORTED, field, _supported(("atomic", "set", "map")), list_type))
        return
    if s.get("type") != "array":
        errs.append(FieldError(FIELD_INVALID, field, "must only be used on arrays", list_type))
        return
    raw_items = s.get("items")
    items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
    if list_type == "set":
        if not (items.get("type") in _SCALARS or items.get("x-kubernetes-int-or-string")):
            errs.append(
                FieldError(
                    FIELD_INVALID,
                    f"{path}.items.type",
                    "must be a scalar type for set lists",
                    items.get("type"),
                )
            )
    elif list_type == "map":
        _check_map_keys(s, items, path, errs)
    if list_type != "map" and keys:
        errs.append(
            FieldError(
                FIELD_INVALID, field, "must be map if x-kubernetes-list-map-keys is non-empty", list_type
            )
        )


def _check_map_keys(s: dict[str, Any], items: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    keys = s.get("x-kubernetes-list-map-keys")
    field = f"{path}.x-kubernetes-list-map-keys"
    if not isinstance(keys, list) or not keys:
        errs.append(FieldError(FIELD_REQUIRED, field, "must not be empty if x-kubernetes-list-type is map"))
        return
    if items.get("type") != "object":
        errs.append(
            FieldError(FIELD_INVALID, f"{path}.items.type", "must be object for map lists", items.get("type"))
        )
        return
    props = _dict_at(items, "properties")
    raw_required = items.get("required")
    required = set(raw_required) if isinstance(raw_required, list) else set()
    for key in keys:
        prop = props.get(key) if isinstance(key, str) else None
        if not isinstance(prop, dict):
            errs.append(FieldError(FIELD_INVALID, field, "entries must all be names of item properties", key))
        elif not (prop.get("type") in _SCALARS or prop.get("x-kubernetes-int-or-string")):
            errs.append(FieldError(FIELD_INVALID, field, "must only contain scalar typed fields", key))
        elif key not in required and "default" not in prop:
            errs.append(
                FieldError(FIELD_INVALID, field, "entries must all be required or have a default", key)
            )


def _check_children(s: dict[str, Any], path: str, errs: list[FieldError], root: bool, junctor: bool) -> None:
    props = s.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            sub_path = f"{path}.properties[{name}]"
            if root and name == "metadata":
                _check_root_metadata(sub, sub_path, errs)
            else:
                _check_node(sub, sub_path, errs, junctor=junctor)
    elif props is not None:
        errs.append(
            FieldError(FIELD_TYPE_INVALID, f"{path}.properties", "must be of type object", json_type(props))
        )
    add = s.get("additionalProperties")
    if isinstance(add, dict):
        _check_node(add, f"{path}.additionalProperties", errs, junctor=junctor)
    if "items" in s:
        _check_node(s["items"], f"{path}.items", errs, junctor=junctor)
    for key in _JUNCTORS:
        subs = s.get(key)
        if subs is None:
            continue
        if not isinstance(subs, list):
            errs.append(
                FieldError(FIELD_TYPE_INVALID, f"{path}.{key}", "must be of type array", json_type(subs))
            )
            continue
        for i, sub in enumerate(subs):
            branch = key == "anyOf" and s.get("x-kubernetes-int-or-string") is True
            _check_node(sub, f"{path}.{key}[{i}]", errs, junctor=True, int_or_string_branch=branch)
            _check_junctor_fields(s, sub, f"{path}.{key}[{i}]", errs)
    if "not" in s:
        _check_node(s["not"], f"{path}.not", errs, junctor=True)
        _check_junctor_fields(s, s["not"], f"{path}.not", errs)


def _dict_at(s: dict[str, Any], key: str) -> dict[str, Any]:
    value = s.get(key)
    return value if isinstance(value, dict) else {}


def _check_junctor_fields(outer: dict[str, Any], inner: Any, path: str, errs: list[FieldError]) -> None:
    """A field or items schema inside a junctor must also be declared outside of it."""
    if not isinstance(inner, dict):
        return
    outer_props = _dict_at(outer, "properties")
    for name, sub in _dict_at(inner, "properties").items():
        if name not in outer_props:
            errs.append(
                FieldError(
                    FIELD_REQUIRED,
                    f"{path}.properties[{name}]",
                    "must be declared outside allOf/anyOf/oneOf/not as well",
                )
            )
        elif isinstance(outer_props[name], dict):
            _check_junctor_fields(outer_props[name], sub, f"{path}.properties[{name}]", errs)
    if "items" in inner:
        if not isinstance(outer.get("items"), dict):
            errs.append(
                FieldError(
                    FIELD_REQUIRED, f"{path}.items", "must be declared outside allOf/anyOf/oneOf/not as well"
                )
            )
        else:
            _check_junctor_fields(outer["items"], inner["items"], f"{path}.items", errs)


def _check_root_metadata(s: Any, path: str, errs: list[FieldError]) -> None:
    detail = (
        "must not specify anything other than name and generateName, but metadata is implicitly specified"
    )
    if not isinstance(s, dict):
        errs.append(FieldError(FIELD_TYPE_INVALID, path, "must be of type object", json_type(s)))
        return
    extra = set(s) - {"type", "properties", "description"}
    props = s.get("properties") or {}
    if not isinstance(props, dict):
        extra.add("properties")
        props = {}
    if s.get("type", "object") != "object":
        errs.append(FieldError(FIELD_INVALID, f"{path}.type", "must be object", s.get("type")))
    bad_props = set(props) - {"name", "generateName"}
    if extra or bad_props:
        errs.append(FieldError(FIELD_FORBIDDEN, path, detail))
    for name in ("name", "generateName"):
        sub = props.get(name)
        if sub is None:
            continue
        sub_path = f"{path}.properties[{name}]"
        if (
            not isinstance(sub, dict)
            or not set(sub) <= _METADATA_NAME_KEYS
            or sub.get("type", "string") != "string"
        ):
            errs.append(
                FieldError(FIELD_FORBIDDEN, sub_path, "must only restrict a string (type, pattern, lengths)")
            )
        else:
            _check_keywords(sub, sub_path, errs, junctor=False)


def _check_default(s: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    compiled = CompiledSchema(s)
    value = copy.deepcopy(s["default"])
    if isinstance(value, dict | list):
        _default_value(compiled.root, value)
        removed: list[str] = []
        _prune_value(compiled.root, value, "", removed)
        if removed:
            errs.append(
                FieldError(
                    FIELD_INVALID,
                    f"{path}.default",
                    "must not have unknown fields: " + ", ".join(removed),
                    s["default"],
                )
            )
    sub_errs: list[FieldError] = []
    _validate(compiled.root, value, "", sub_errs)
    for err in sub_errs:
        detail = err.message().removeprefix(ROOT_PATH + ": ")
        errs.append(FieldError(FIELD_INVALID, f"{path}.default", detail, s["default"]))


__all__ = [
    "CompiledSchema",
    "apply_defaults",
    "check_structural",
    "compile_schema",
    "json_type",
    "prune",
    "validate",
]
