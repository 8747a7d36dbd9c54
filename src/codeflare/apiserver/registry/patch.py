"""PATCH bodies applied to stored objects: JSON patch, merge patch and strategic merge patch.

The HTTP layer picks the patch kind from the request's Content-Type (``PATCH_CONTENT_TYPES``)
and calls one of the ``apply_*`` functions with the stored object; each returns a new dict and
never mutates its inputs. Failures are :class:`ApiError` values shaped like Kubernetes' answers
(400 for a malformed patch, 422 when a well-formed patch cannot be applied).
Server-side apply (``application/apply-patch+yaml``) lives in :mod:`apply`, and which lists merge
by which key is :mod:`list_semantics`'. This module does no validation of the result, no
defaulting and no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from codeflare.apiserver.errors import ApiError, bad_request
from codeflare.apiserver.registry import list_semantics

JSON_PATCH = "json"
MERGE_PATCH = "merge"
STRATEGIC_MERGE_PATCH = "strategic"
APPLY_PATCH = "apply"
APPLY_PATCH_CBOR = "apply-cbor"  # recognised but not supported: the server answers 415

PATCH_CONTENT_TYPES: dict[str, str] = {
    "application/json-patch+json": JSON_PATCH,
    "application/merge-patch+json": MERGE_PATCH,
    "application/strategic-merge-patch+json": STRATEGIC_MERGE_PATCH,
    "application/apply-patch+yaml": APPLY_PATCH,
    "application/apply-patch+cbor": APPLY_PATCH_CBOR,
}
SUPPORTED_PATCH_CONTENT_TYPES = tuple(t for t, k in PATCH_CONTENT_TYPES.items() if k != APPLY_PATCH_CBOR)

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_ORDER_PREFIX = "$setElementOrder/"
_DELETE_PRIMITIVE_PREFIX = "$deleteFromPrimitiveList/"


def unprocessable(message: str) -> ApiError:
    """422 for a well-formed patch that cannot be applied to the object (Kubernetes' answer)."""
    return ApiError(422, "Invalid", message)


def _require_object(doc: Any, what: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise unprocessable(f"{what} did not produce a JSON object")
    return doc


# ---- RFC 6902 JSON patch ---------------------------------------------------------------------


def apply_json_patch(doc: dict[str, Any], ops: Any) -> dict[str, Any]:
    """Apply an RFC 6902 operation list; a malformed list is 400, a failing operation 422."""
    import jsonpatch
    import jsonpointer

    if not isinstance(ops, list):
        raise bad_request("json patch must be a list of operations")
    for i, op in enumerate(ops):
        if (
            not isinstance(op, dict)
            or not isinstance(op.get("op"), str)
            or not isinstance(op.get("path"), str)
        ):
            raise bad_request(f"json patch operation {i} must be an object with string 'op' and 'path'")
    try:
        patch = jsonpatch.JsonPatch(ops)
        result = patch.apply(doc, in_place=False)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise unprocessable(f"the server rejected our request due to an error in our request: {exc}") from exc
    except jsonpatch.InvalidJsonPatch as exc:
        raise bad_request(f"invalid json patch: {exc}") from exc
    except (jsonpatch.JsonPatchConflict, jsonpointer.JsonPointerException) as exc:
        raise unprocessable(f"the server rejected our request due to an error in our request: {exc}") from exc
    except (TypeError, KeyError, IndexError, ValueError) as exc:
        raise unprocessable(f"the server rejected our request due to an error in our request: {exc}") from exc
    return _require_object(result, "json patch")


# ---- RFC 7386 JSON merge patch ---------------------------------------------------------------


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def apply_merge_patch(doc: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply an RFC 7386 merge patch: objects merge recursively, ``null`` deletes, the rest replaces."""
    if not isinstance(patch, dict):
        raise bad_request("merge patch must be a JSON object")
    result: dict[str, Any] = _merge(copy.deepcopy(doc), patch)
    return result


def create_merge_patch(source: Any, target: Any) -> Any:
    """The merge patch that turns ``source`` into ``target`` (used by tests and clients alike)."""
    if not isinstance(source, dict) or not isinstance(target, dict):
        return copy.deepcopy(target)
    out: dict[str, Any] = {}
    for key in source:
        if key not in target:
            out[key] = None
    for key, value in target.items():
        if key not in source:
            out[key] = copy.deepcopy(value)
        elif source[key] != value:
            if isinstance(value, dict) and isinstance(source[key], dict):
                out[key] = create_merge_patch(source[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out


# ---- Kubernetes strategic merge patch --------------------------------------------------------


def _merge_key(field: str, items: list[Any], merge_keys: Mapping[str, str] | None) -> str | None:
    """The key merging list ``field`` by item, or None when the list is replaced whole."""
    if merge_keys and field in merge_keys:
        return merge_keys[field]
    return list_semantics.strategic_merge_key(field, items)


def _strategic_map(
    original: Mapping[str, Any], patch: Mapping[str, Any], merge_keys: Mapping[str, str] | None
) -> dict[str, Any] | None:
    """Merge ``patch`` into ``original``; None means the patch deletes this map."""
    directive = patch.get(_PATCH)
    if directive is not None and directive not in ("replace", "merge", "delete"):
        raise bad_request(f"Unknown patch type: {directive}")
    if directive == "delete":
        return None
    clean = {k: v for k, v in patch.items() if k != _PATCH}
    if directive == "replace":
        return _strip_directives(clean)

    retain = clean.pop(_RETAIN_KEYS, None)
    if retain is not None and not isinstance(retain, list):
        raise bad_request("$retainKeys must be a list of field names")
    orders: dict[str, Any] = {}
    deletions: dict[str, Any] = {}
    for key in [k for k in clean if k.startswith(_ORDER_PREFIX) or k.startswith(_DELETE_PRIMITIVE_PREFIX)]:
        value = clean.pop(key)
        if not isinstance(value, list):
            raise bad_request(f"{key} must be a list")
        if key.startswith(_ORDER_PREFIX):
            orders[key[len(_ORDER_PREFIX) :]] = value
        else:
            deletions[key[len(_DELETE_PRIMITIVE_PREFIX) :]] = value

    out = dict(original)
    for key, value in clean.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            current = out.get(key)
            merged = _strategic_map(current if isinstance(current, dict) else {}, value, merge_keys)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        elif isinstance(value, list):
            current = out.get(key)
            out[key] = _strategic_list(key, current if isinstance(current, list) else [], value, merge_keys)
        else:
            out[key] = copy.deepcopy(value)

    for key, values in deletions.items():
        current = out.get(key)
        if isinstance(current, list):
            out[key] = [v for v in current if v not in values]
    for key, order in orders.items():
        current = out.get(key)
        if isinstance(current, list):
            out[key] = _reorder(key, current, order, merge_keys)
    if retain is not None:
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not (k in (_PATCH, _RETAIN_KEYS) or k.startswith(("$setElementOrder/", "$deleteFrom")))
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value if not (isinstance(v, dict) and v.get(_PATCH))]
    return copy.deepcopy(value)


def _strategic_list(
    field: str, original: list[Any], patch: list[Any], merge_keys: Mapping[str, str] | None
) -> list[Any]:
    if any(isinstance(i, dict) and i.get(_PATCH) == "replace" for i in patch):
        return [_strip_directives(i) for i in patch if not (isinstance(i, dict) and _PATCH in i)]
    if list_semantics.strategic_merges_scalars(field) and all(not isinstance(i, dict | list) for i in patch):
        out = list(original)
        out.extend(v for v in patch if v not in out)
        return out
    key = _merge_key(field, patch, merge_keys)
    if key is None or not all(isinstance(i, dict) for i in patch):
        return list(_strip_directives(patch))

    out = [copy.deepcopy(i) for i in original]
    for item in patch:
        if key not in item:
            raise unprocessable(f"map: {item} does not contain declared merge key: {key}")
        index = next(
            (n for n, cur in enumerate(out) if isinstance(cur, dict) and cur.get(key) == item[key]), None
        )
        if item.get(_PATCH) == "delete":
            if index is not None:
                out.pop(index)
            continue
        if index is None:
            out.append(_strip_directives({k: v for k, v in item.items() if k != _PATCH}))
            continue
        merged = _strategic_map(out[index], item, merge_keys)
        if merged is None:
            out.pop(index)
        else:
            out[index] = merged
    return out


def _reorder(
    field: str, items: list[Any], order: list[Any], merge_keys: Mapping[str, str] | None
) -> list[Any]:
    """Put ``items`` in the order ``$setElementOrder`` gives; items it does not name keep theirs, after."""
    key = _merge_key(field, order, merge_keys) if any(isinstance(o, dict) for o in order) else None

    def identity(value: Any) -> Any:
        if key is not None and isinstance(value, dict):
            return value.get(key)
        return value

    wanted = [identity(o) for o in order]
    rank = {repr(w): n for n, w in enumerate(wanted)}
    placed = sorted((i for i in items if repr(identity(i)) in rank), key=lambda i: rank[repr(identity(i))])
    rest = [i for i in items if repr(identity(i)) not in rank]
    return placed + rest


def apply_strategic_merge_patch(
    doc: dict[str, Any], patch: Any, merge_keys: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Apply a Kubernetes strategic merge patch as kubectl sends it for built-in kinds.

    ``merge_keys`` maps a list field name to its merge key and overrides the defaults, which come
    from :mod:`list_semantics` (Kubernetes' ``x-kubernetes-patch-merge-key`` and
    ``x-kubernetes-patch-strategy``): lists of objects with a merge key merge by it, ``finalizers``
    unions, every other list (``tolerations`` among them) replaces.
    Directives: ``$patch: replace|merge|delete`` (maps and list items), ``$retainKeys``,
    ``$setElementOrder/<field>``, ``$deleteFromPrimitiveList/<field>``; ``null`` deletes a key.
    """
    if not isinstance(patch, dict):
        raise bad_request("strategic merge patch must be a JSON object")
    result = _strategic_map(copy.deepcopy(doc), patch, merge_keys)
    if result is None:
        raise unprocessable("a strategic merge patch cannot delete the whole object")
    return result
