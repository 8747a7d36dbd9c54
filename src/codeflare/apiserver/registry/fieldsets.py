"""Field sets: the owned fields of an object as paths, their FieldsV1 form, and what changed.

A field is a path of FieldsV1 elements (``f:spec``, ``k:{"name":"x"}`` for a keyed list item,
``v:"x"`` for a set member, ``i:0``); :func:`flatten` lists every owned field of an object with its
value and :func:`changed_fields` the fields set, changed or removed between two versions, cheaply
(equal subtrees are skipped whole). Lists of maps are keyed by the CRD schema's list-map keys the
caller passes (``list_keys``, by dotted path or field name), else by :mod:`list_semantics`; sets
are owned member by member; other lists are atomic; maps are always granular. Identity and
server-maintained metadata are owned by no one. Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from codeflare.apiserver.errors import bad_request
from codeflare.apiserver.registry import list_semantics

Path = tuple[str, ...]
ListKeys = Mapping[str, tuple[str, ...]]
KEY_DEFAULTS = list_semantics.KEY_DEFAULTS

# Fields no manager owns: identity and server-maintained metadata.
_IGNORED_TOP = frozenset({"apiVersion", "kind"})
IGNORED_META = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    }
)
ITEM = object()  # flattened value of a list-item node (k:/v:) or a set list's own node


def fields_to_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Render a field set as a FieldsV1 object: ``{"f:spec": {"f:replicas": {}}}``."""
    root: dict[str, Any] = {}
    members: list[dict[str, Any]] = []
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        members.append(node)
    for node in members:
        if node:
            node["."] = {}
    return root


def fields_from_v1(fields_v1: Mapping[str, Any]) -> set[Path]:
    """Parse a FieldsV1 object into a set of paths (the inverse of :func:`fields_to_v1`)."""
    out: set[Path] = set()

    def walk(node: Mapping[str, Any], prefix: Path) -> None:
        for element, child in node.items():
            if element == ".":
                out.add(prefix)
                continue
            if not isinstance(child, Mapping):
                raise bad_request(f"invalid managedFields: {element} must map to an object")
            path = (*prefix, element)
            if not child:
                out.add(path)
            else:
                walk(child, path)

    walk(fields_v1, ())
    return out


def render_path(path: Path) -> str:
    """Human form used in conflict messages: ``.spec.containers[name="main"].image``."""
    text = ""
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            text += "." + rest
        elif kind == "k":
            keys = json.loads(rest)
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif kind == "v":
            text += f"[={rest}]"
        else:
            text += f"[{rest}]"
    return text


def list_keys_for(
    schema_path: str, name: str, items: list[Any], list_keys: ListKeys | None
) -> tuple[str, ...] | None:
    """The keys of list ``name`` at ``schema_path``: the caller's (schema) first, else the table's."""
    if list_keys:
        if schema_path in list_keys:
            return list_keys[schema_path]
        if name in list_keys:
            return list_keys[name]
    return list_semantics.apply_list_keys(name, items)


def item_elements(items: list[Any], keys: tuple[str, ...]) -> list[str] | None:
    """The ``k:{...}`` element of every item, or None when the list cannot be keyed."""
    out: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        key: dict[str, Any] = {}
        for k in keys:
            if k in item:
                key[k] = item[k]
            elif k in KEY_DEFAULTS:
                key[k] = KEY_DEFAULTS[k]
            elif k == keys[0]:
                return None
        out.append("k:" + json.dumps(key, sort_keys=True, separators=(",", ":")))
    return out if len(set(out)) == len(out) else None


def list_shape(
    name: str, schema_path: str, items: list[Any], list_keys: ListKeys | None
) -> tuple[str, list[str] | None]:
    """("set", elements), ("map", elements) or ("atomic", None) for a list value."""
    if list_semantics.apply_is_set(name) and all(not isinstance(i, dict | list) for i in items):
        return "set", ["v:" + json.dumps(i, separators=(",", ":")) for i in items]
    keys = list_keys_for(schema_path, name, items, list_keys)
    if keys and items:
        elements = item_elements(items, keys)
        if elements is not None:
            return "map", elements
    return "atomic", None


def _walk(
    value: Any, path: Path, name: str, schema_path: str, keys: ListKeys | None, out: dict[Path, Any]
) -> None:
    if isinstance(value, dict):
        if not value:
            out[path] = value
        for k, v in value.items():
            _walk(v, (*path, "f:" + k), k, f"{schema_path}.{k}" if schema_path else k, keys, out)
        return
    if isinstance(value, list):
        shape, elements = list_shape(name, schema_path, value, keys)
        if shape == "atomic" or elements is None:
            out[path] = value
            return
        if shape == "set":
            out[path] = ITEM
        for element, item in zip(elements, value, strict=True):
            out[(*path, element)] = ITEM
            if shape == "map":
                for k, v in item.items():
                    _walk(v, (*path, element, "f:" + k), k, f"{schema_path}.{k}", keys, out)
        return
    out[path] = value


def _owned_view(obj: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """``obj`` without the fields nobody owns (identity, server metadata, out-of-scope parts)."""
    view: dict[str, Any] = {}
    for key, value in obj.items():
        if (
            key in _IGNORED_TOP
            or (scope == "main" and key == "status")
            or (scope == "status" and key != "status")
        ):
            continue
        if key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in IGNORED_META}
            if not value:
                continue
        view[key] = value
    return view


def flatten(
    obj: Mapping[str, Any], *, list_keys: ListKeys | None = None, scope: str = "all"
) -> dict[Path, Any]:
    """Every owned field of ``obj`` with its value; ``scope`` is "all", "main" (no status) or "status"."""
    out: dict[Path, Any] = {}
    for key, value in _owned_view(obj, scope).items():
        _walk(value, ("f:" + key,), key, key, list_keys, out)
    return out


def _diff(
    old: Any,
    new: Any,
    path: Path,
    name: str,
    sp: str,
    keys: ListKeys | None,
    changed: set[Path],
    gone: set[Path],
) -> None:
    """Collect owned paths whose value changed (or appeared) and those that disappeared.

    Equal subtrees are skipped with one C-level comparison, which keeps updates cheap."""
    if type(old) is type(new) and old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and old and new:
        _diff_maps(old, new, path, sp, keys, changed, gone)
        return
    if isinstance(old, list) and isinstance(new, list):
        old_shape, old_elements = list_shape(name, sp, old, keys)
        new_shape, new_elements = list_shape(name, sp, new, keys)
        if old_shape == new_shape != "atomic" and old_elements is not None and new_elements is not None:
            if not old:
                changed.add(path)
            old_items = dict(zip(old_elements, old, strict=True))
            for element, item in zip(new_elements, new, strict=True):
                if element in old_items:
                    if new_shape == "map":
                        _diff_maps(old_items.pop(element), item, (*path, element), sp, keys, changed, gone)
                    else:
                        old_items.pop(element)
                    continue
                sub: dict[Path, Any] = {(*path, element): ITEM}
                if new_shape == "map":
                    for k, v in item.items():
                        _walk(v, (*path, element, "f:" + k), k, f"{sp}.{k}", keys, sub)
                changed.update(sub)
            for element, item in old_items.items():
                gone.add((*path, element))
                if new_shape == "map":
                    lost: dict[Path, Any] = {}
                    for k, v in item.items():
                        _walk(v, (*path, element, "f:" + k), k, f"{sp}.{k}", keys, lost)
                    gone.update(lost)
            return
    before: dict[Path, Any] = {}
    after: dict[Path, Any] = {}
    _walk(old, path, name, sp, keys, before)
    _walk(new, path, name, sp, keys, after)
    changed.update(p for p, v in after.items() if p not in before or not same(before[p], v))
    gone.update(before.keys() - after.keys())


def _diff_maps(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    path: Path,
    sp: str,
    keys: ListKeys | None,
    changed: set[Path],
    gone: set[Path],
) -> None:
    for k, v in new.items():
        sub_sp = f"{sp}.{k}" if sp else k
        if k in old:
            _diff(old[k], v, (*path, "f:" + k), k, sub_sp, keys, changed, gone)
        else:
            added: dict[Path, Any] = {}
            _walk(v, (*path, "f:" + k), k, sub_sp, keys, added)
            changed.update(added)
    for k in old.keys() - new.keys():
        lost: dict[Path, Any] = {}
        _walk(old[k], (*path, "f:" + k), k, f"{sp}.{k}" if sp else k, keys, lost)
        gone.update(lost)


def changed_fields(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    *,
    list_keys: ListKeys | None = None,
    scope: str = "all",
) -> tuple[set[Path], set[Path]]:
    """(paths set or changed in ``new``, paths that ``old`` had and ``new`` lacks)."""
    changed: set[Path] = set()
    gone: set[Path] = set()
    _diff_maps(_owned_view(old or {}, scope), _owned_view(new, scope), (), "", list_keys, changed, gone)
    return changed, gone


def same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)
