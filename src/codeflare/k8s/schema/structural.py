"""The structural-schema checks a CRD's ``openAPIV3Schema`` must pass before the CRD is accepted.

Kubernetes serves only structural schemas: every node outside allOf/anyOf/oneOf/not has a type
(unless int-or-string or preserve-unknown-fields), the root is an object, junctors add no type,
default or field that is not declared outside them as well, ``properties`` and
``additionalProperties`` exclude each other, arrays declare ``items``, list types are well formed,
patterns compile, root metadata only restricts name and generateName, and every ``default``
validates against its node with nothing to prune; then the ``x-kubernetes-validations`` rules must
be well formed and compile (:mod:`~codeflare.k8s.schema.rulecheck`). :func:`check_structural`
reports each violation with the CRD field path; it does not validate objects. Deliberately not
supported anywhere in the engine: ``$ref`` (forbidden in CRDs) and range checks for numeric
formats (Kubernetes does not apply them either).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from codeflare.k8s.schema.checks import ROOT_PATH, compile_pattern
from codeflare.k8s.schema.compiled import CompiledSchema
from codeflare.k8s.schema.defaulting import default_value, prune_value
from codeflare.k8s.schema.field import ErrorType, FieldError, type_invalid
from codeflare.k8s.schema.rulecheck import check_rules, has_rules
from codeflare.k8s.schema.validation import validate_value

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
    Rules (``x-kubernetes-validations``) are checked for shape, and compiled only when the
    schema itself has no errors (as Kubernetes does, so that type errors come first).
    """
    errs: list[FieldError] = []
    if not isinstance(schema, dict):
        return [type_invalid(path, "object", schema)]
    _check_node(schema, path, errs, root=True)
    if has_rules(schema):
        errs += check_rules(schema, path, compile_rules=not errs)
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
        errs.append(type_invalid(path, "object", s))
        return
    _check_keywords(s, path, errs, junctor, int_or_string_branch)
    typ = s.get("type")
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields")
    if not junctor:
        if typ is None or typ == "":
            if not int_or_string and preserve is not True:
                detail = "must be object at the root" if root else "must not be empty for specified fields"
                errs.append(FieldError(ErrorType.REQUIRED, f"{path}.type", detail))
        elif typ not in _TYPES:
            errs.append(FieldError(ErrorType.NOT_SUPPORTED, f"{path}.type", _supported(_TYPES), typ))
        elif root and typ != "object":
            errs.append(FieldError(ErrorType.INVALID, f"{path}.type", "must be object at the root", typ))
        if int_or_string and typ:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.type",
                    "must be empty if x-kubernetes-int-or-string is true",
                    typ,
                )
            )
    if preserve is not None and preserve is not True:
        errs.append(
            FieldError(
                ErrorType.INVALID,
                f"{path}.x-kubernetes-preserve-unknown-fields",
                "must be true or undefined",
                preserve,
            )
        )
    if s.get("x-kubernetes-embedded-resource") is True:
        if typ != "object":
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.type",
                    "must be object if x-kubernetes-embedded-resource is true",
                    typ,
                )
            )
        if not s.get("properties") and preserve is not True:
            errs.append(
                FieldError(
                    ErrorType.REQUIRED,
                    f"{path}.properties",
                    "must not be empty if x-kubernetes-embedded-resource is true without "
                    "x-kubernetes-preserve-unknown-fields",
                )
            )
    if root:
        for key in ("nullable", "default"):
            if s.get(key) not in (None, False) or (key == "default" and "default" in s):
                errs.append(FieldError(ErrorType.FORBIDDEN, f"{path}.{key}", "must not be set at the root"))
    props = s.get("properties")
    if isinstance(props, dict) and "additionalProperties" in s:
        errs.append(
            FieldError(
                ErrorType.FORBIDDEN,
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if typ == "array" and not junctor and "items" not in s:
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.items", "must be specified"))
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
            errs.append(FieldError(ErrorType.FORBIDDEN, f"{path}.{key}", f"{key} is not supported"))
    if s.get("uniqueItems") is True:
        errs.append(
            FieldError(
                ErrorType.FORBIDDEN,
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
                    ErrorType.INVALID,
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
                        ErrorType.FORBIDDEN, f"{path}.{key}", "must not be set inside allOf/anyOf/oneOf/not"
                    )
                )


def _check_list_type(s: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    list_type = s.get("x-kubernetes-list-type")
    keys = s.get("x-kubernetes-list-map-keys")
    if list_type is None:
        if keys:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.x-kubernetes-list-type",
                    "must be map if x-kubernetes-list-map-keys is non-empty",
                    list_type,
                )
            )
        return
    field = f"{path}.x-kubernetes-list-type"
    if list_type not in ("atomic", "set", "map"):
        errs.append(
            FieldError(ErrorType.NOT_SUPPORTED, field, _supported(("atomic", "set", "map")), list_type)
        )
        return
    if s.get("type") != "array":
        errs.append(FieldError(ErrorType.INVALID, field, "must only be used on arrays", list_type))
        return
    raw_items = s.get("items")
    items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
    if list_type == "set":
        if not (items.get("type") in _SCALARS or items.get("x-kubernetes-int-or-string")):
            errs.append(
                FieldError(
                    ErrorType.INVALID,
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
                ErrorType.INVALID, field, "must be map if x-kubernetes-list-map-keys is non-empty", list_type
            )
        )


def _check_map_keys(s: dict[str, Any], items: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    keys = s.get("x-kubernetes-list-map-keys")
    field = f"{path}.x-kubernetes-list-map-keys"
    if not isinstance(keys, list) or not keys:
        errs.append(
            FieldError(ErrorType.REQUIRED, field, "must not be empty if x-kubernetes-list-type is map")
        )
        return
    if items.get("type") != "object":
        errs.append(
            FieldError(
                ErrorType.INVALID, f"{path}.items.type", "must be object for map lists", items.get("type")
            )
        )
        return
    props = _dict_at(items, "properties")
    raw_required = items.get("required")
    required = set(raw_required) if isinstance(raw_required, list) else set()
    for key in keys:
        prop = props.get(key) if isinstance(key, str) else None
        if not isinstance(prop, dict):
            errs.append(
                FieldError(ErrorType.INVALID, field, "entries must all be names of item properties", key)
            )
        elif not (prop.get("type") in _SCALARS or prop.get("x-kubernetes-int-or-string")):
            errs.append(FieldError(ErrorType.INVALID, field, "must only contain scalar typed fields", key))
        elif key not in required and "default" not in prop:
            errs.append(
                FieldError(ErrorType.INVALID, field, "entries must all be required or have a default", key)
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
        errs.append(type_invalid(f"{path}.properties", "object", props))
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
            errs.append(type_invalid(f"{path}.{key}", "array", subs))
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
                    ErrorType.REQUIRED,
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
                    ErrorType.REQUIRED,
                    f"{path}.items",
                    "must be declared outside allOf/anyOf/oneOf/not as well",
                )
            )
        else:
            _check_junctor_fields(outer["items"], inner["items"], f"{path}.items", errs)


def _check_root_metadata(s: Any, path: str, errs: list[FieldError]) -> None:
    detail = (
        "must not specify anything other than name and generateName, but metadata is implicitly specified"
    )
    if not isinstance(s, dict):
        errs.append(type_invalid(path, "object", s))
        return
    extra = set(s) - {"type", "properties", "description"}
    props = s.get("properties") or {}
    if not isinstance(props, dict):
        extra.add("properties")
        props = {}
    if s.get("type", "object") != "object":
        errs.append(FieldError(ErrorType.INVALID, f"{path}.type", "must be object", s.get("type")))
    bad_props = set(props) - {"name", "generateName"}
    if extra or bad_props:
        errs.append(FieldError(ErrorType.FORBIDDEN, path, detail))
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
                FieldError(
                    ErrorType.FORBIDDEN, sub_path, "must only restrict a string (type, pattern, lengths)"
                )
            )
        else:
            _check_keywords(sub, sub_path, errs, junctor=False)


def _check_default(s: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    compiled = CompiledSchema(s)
    value = copy.deepcopy(s["default"])
    if isinstance(value, dict | list):
        default_value(compiled.root, value)
        removed: list[str] = []
        prune_value(compiled.root, value, "", removed)
        if removed:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    f"{path}.default",
                    "must not have unknown fields: " + ", ".join(removed),
                    s["default"],
                )
            )
    sub_errs: list[FieldError] = []
    validate_value(compiled.root, value, "", sub_errs)
    for err in sub_errs:
        detail = err.message().removeprefix(ROOT_PATH + ": ")
        errs.append(FieldError(ErrorType.INVALID, f"{path}.default", detail, s["default"]))
