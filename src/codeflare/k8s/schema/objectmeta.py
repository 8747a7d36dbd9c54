"""ObjectMeta validation: the rules every stored object's ``metadata`` follows.

Kubernetes validates ``metadata`` the same way for built-in and custom resources, and the same
rules apply to the metadata of embedded resources inside a custom object: name syntax (DNS-1123
subdomain, label or path segment), namespace presence, label and annotation syntax, finalizer
names and owner references. This module holds those rules as pure functions returning
:class:`FieldError` lists with Kubernetes' field paths and messages. It does not fill in system
fields (uid, timestamps, resourceVersion), does not judge updates (which fields may change is the
API server's registry's business) and does not know about any particular kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeflare.k8s.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_path_segment_name,
    is_qualified_name,
)
from codeflare.k8s.schema.field import ErrorType, FieldError, type_invalid

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

_NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "subdomain": is_dns1123_subdomain,
    "label": is_dns1123_label,
    "path": is_path_segment_name,
}


def validate_name(name: str, rule: str, *, prefix: bool = False) -> list[str]:
    """Messages explaining why ``name`` breaks ``rule`` ("subdomain", "label" or "path").

    With ``prefix`` the value is a generateName: a trailing '-' is allowed, as Kubernetes
    masks it before checking (the server appends random characters to it).
    """
    try:
        check = _NAME_RULES[rule]
    except KeyError:
        raise ValueError(f"unknown name rule {rule!r}; expected one of {sorted(_NAME_RULES)}") from None
    if prefix and rule != "path" and name.endswith("-"):
        name = name[:-1] + "a"
    return check(name)


# Declared type of each ObjectMeta field (None: any JSON value is fine, e.g. managedFields entries).
_META_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "generateName": (str,),
    "namespace": (str,),
    "uid": (str,),
    "resourceVersion": (str,),
    "selfLink": (str,),
    "generation": (int,),
    "creationTimestamp": (str, type(None)),
    "deletionTimestamp": (str, type(None)),
    "deletionGracePeriodSeconds": (int, type(None)),
    "labels": (dict, type(None)),
    "annotations": (dict, type(None)),
    "finalizers": (list, type(None)),
    "ownerReferences": (list, type(None)),
    "managedFields": (list, type(None)),
}
_TYPE_NAMES = {str: "string", int: "integer", dict: "object", list: "array"}


def _type_invalid(path: str, wanted: str, value: Any) -> FieldError:
    """:func:`type_invalid` as ObjectMeta validation reports it (every float is "number")."""
    return type_invalid(path, wanted, value, whole_floats_are_integers=False)


def _type_ok(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, types)


def validate_object_meta(
    meta: Any,
    *,
    namespaced: bool,
    name_rule: str = "subdomain",
    require_name: bool = True,
) -> list[FieldError]:
    """Validate ``metadata`` of an object about to be stored (create or update).

    ``namespaced`` objects must carry a namespace (a DNS-1123 label); cluster-scoped objects
    must not (the server clears a client's namespace on create before calling this, as
    Kubernetes does, so a namespace reaching here is reported as forbidden). ``require_name``
    false accepts an object with neither name nor generateName (embedded objects, or a create
    that the server names itself).
    """
    if not isinstance(meta, dict):
        return [_type_invalid("metadata", "object", meta)]
    errs: list[FieldError] = []
    for key, types in _META_FIELD_TYPES.items():
        if key in meta and not _type_ok(meta[key], types):
            want = _TYPE_NAMES[types[0]]
            errs.append(_type_invalid(f"metadata.{key}", want, meta[key]))
    bad = {e.field for e in errs}
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if "metadata.name" not in bad and "metadata.generateName" not in bad:
        errs.extend(_validate_names(name, generate, name_rule, require_name))
    if "metadata.namespace" not in bad:
        errs.extend(_validate_namespace(meta.get("namespace") or "", namespaced))
    if "metadata.labels" not in bad:
        errs.extend(validate_labels(meta.get("labels") or {}, "metadata.labels"))
    if "metadata.annotations" not in bad:
        errs.extend(validate_annotations(meta.get("annotations") or {}, "metadata.annotations"))
    if "metadata.finalizers" not in bad:
        errs.extend(validate_finalizers(meta.get("finalizers") or [], "metadata.finalizers"))
    if "metadata.ownerReferences" not in bad:
        errs.extend(validate_owner_references(meta.get("ownerReferences") or [], "metadata.ownerReferences"))
    for key in ("generation", "deletionGracePeriodSeconds"):
        value = meta.get(key)
        if key not in {f.removeprefix("metadata.") for f in bad} and isinstance(value, int) and value < 0:
            errs.append(
                FieldError(ErrorType.INVALID, f"metadata.{key}", "must be greater than or equal to 0", value)
            )
    return errs


def _validate_names(name: str, generate: str, rule: str, require_name: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if generate:
        errs.extend(
            FieldError(ErrorType.INVALID, "metadata.generateName", msg, generate)
            for msg in validate_name(generate, rule, prefix=True)
        )
    if name:
        errs.extend(
            FieldError(ErrorType.INVALID, "metadata.name", msg, name) for msg in validate_name(name, rule)
        )
    elif require_name and not generate:
        errs.append(FieldError(ErrorType.REQUIRED, "metadata.name", "name or generateName is required"))
    return errs


def _validate_namespace(namespace: str, namespaced: bool) -> list[FieldError]:
    if not namespaced:
        if namespace:
            return [FieldError(ErrorType.FORBIDDEN, "metadata.namespace", "not allowed on this type")]
        return []
    if not namespace:
        return [FieldError(ErrorType.REQUIRED, "metadata.namespace", "")]
    return [
        FieldError(ErrorType.INVALID, "metadata.namespace", msg, namespace)
        for msg in is_dns1123_label(namespace)
    ]


def validate_labels(labels: dict[str, Any], path: str) -> list[FieldError]:
    """Label keys are qualified names; values are strings of at most 63 label characters."""
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs.extend(FieldError(ErrorType.INVALID, path, msg, key) for msg in is_qualified_name(key))
        if not isinstance(value, str):
            errs.append(_type_invalid(f"{path}.{key}", "string", value))
            continue
        errs.extend(FieldError(ErrorType.INVALID, path, msg, value) for msg in is_label_value(value))
    return errs


def validate_annotations(annotations: dict[str, Any], path: str) -> list[FieldError]:
    """Annotation keys are qualified names (checked lower-cased); all of them fit in 256 KiB."""
    errs: list[FieldError] = []
    total = 0
    for key, value in annotations.items():
        errs.extend(FieldError(ErrorType.INVALID, path, msg, key) for msg in is_qualified_name(key.lower()))
        if not isinstance(value, str):
            errs.append(_type_invalid(f"{path}.{key}", "string", value))
            continue
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(
            FieldError(ErrorType.TOO_LONG, path, f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")
        )
    return errs


_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")


def validate_finalizers(finalizers: list[Any], path: str) -> list[FieldError]:
    """Finalizers are qualified names; 'orphan' and 'foregroundDeletion' exclude each other."""
    errs: list[FieldError] = []
    for i, finalizer in enumerate(finalizers):
        if not isinstance(finalizer, str):
            errs.append(_type_invalid(f"{path}[{i}]", "string", finalizer))
            continue
        errs.extend(
            FieldError(ErrorType.INVALID, path, msg, finalizer) for msg in is_qualified_name(finalizer)
        )
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            FieldError(
                ErrorType.INVALID,
                path,
                "finalizer orphan and foregroundDeletion cannot be both set",
                [f for f in finalizers if isinstance(f, str)],
            )
        )
    return errs


_OWNER_REQUIRED = (("apiVersion", "version"), ("kind", "kind"), ("name", "name"), ("uid", "uid"))


def validate_owner_references(refs: list[Any], path: str) -> list[FieldError]:
    """Each reference names apiVersion, kind, name and uid; at most one is the controller."""
    errs: list[FieldError] = []
    controllers: list[str] = []
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            errs.append(_type_invalid(f"{path}[{i}]", "object", ref))
            continue
        for key, word in _OWNER_REQUIRED:
            value = ref.get(key)
            if value is not None and not isinstance(value, str):
                errs.append(_type_invalid(f"{path}[{i}].{key}", "string", value))
            elif not value:
                errs.append(
                    FieldError(ErrorType.INVALID, f"{path}.{key}", f"{word} must not be empty", value or "")
                )
        for key in ("controller", "blockOwnerDeletion"):
            value = ref.get(key)
            if value is not None and not isinstance(value, bool):
                errs.append(_type_invalid(f"{path}[{i}].{key}", "boolean", value))
        if ref.get("controller") is True:
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        errs.append(
            FieldError(
                ErrorType.INVALID,
                path,
                'Only one reference can have Controller set to true. Found "true" in references for '
                + " and ".join(controllers),
                refs,
            )
        )
    return errs
