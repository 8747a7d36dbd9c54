"""Server-side apply: merge a partial configuration into the live object, owning what it sets.

An apply request (:func:`server_side_apply`) makes the manager's Apply entry exactly the fields of
its configuration, merges them into the live object (keyed lists item by item, sets member by
member, maps key by key), removes the fields the same manager applied before and no longer
applies unless another manager owns them, and refuses to change fields other managers own unless
forced: 409 with one cause per conflicting field, worded as Kubernetes words it. Preconditions
(resourceVersion), validation and storage are the caller's. Pure functions.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from codeflare.apiserver.errors import ApiError, bad_request
from codeflare.apiserver.registry.fieldsets import (
    IGNORED_META,
    ITEM,
    KEY_DEFAULTS,
    ListKeys,
    Path,
    flatten,
    item_elements,
    list_keys_for,
    list_shape,
    render_path,
    same,
)
from codeflare.apiserver.registry.managed_fields import (
    APPLY,
    ManagedFieldsEntry,
    entry_for,
    read_managed_fields,
    write_managed_fields,
)
from codeflare.k8s.schema.field import ErrorType, FieldError


def _strip_applied(applied: Mapping[str, Any], subresource: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in applied.items():
        if value is None:
            continue
        if subresource == "status" and key not in ("status", "apiVersion", "kind", "metadata"):
            continue
        if subresource != "status" and key == "status":
            continue
        if key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in IGNORED_META or k in ("name", "namespace")}
            if subresource == "status":
                value = {k: v for k, v in value.items() if k in ("name", "namespace")}
        out[key] = _drop_nulls(value)
    return out


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _merge_applied(live: Any, applied: Any, name: str, schema_path: str, list_keys: ListKeys | None) -> Any:
    if isinstance(applied, dict) and isinstance(live, dict):
        out = dict(live)
        for k, v in applied.items():
            sub = f"{schema_path}.{k}" if schema_path else k
            out[k] = _merge_applied(live.get(k), v, k, sub, list_keys)
        return out
    if isinstance(applied, list) and isinstance(live, list):
        shape, applied_elements = list_shape(name, schema_path, applied, list_keys)
        if shape == "set":
            return list(live) + [v for v in applied if v not in live]
        if shape == "map" and applied_elements is not None:
            keys = list_keys_for(schema_path, name, applied, list_keys) or ()
            live_elements = item_elements(live, keys)
            if live_elements is not None:
                return _merge_keyed(
                    live, live_elements, applied, applied_elements, name, schema_path, list_keys
                )
    return copy.deepcopy(applied)


def _merge_keyed(
    live: list[Any],
    live_elements: list[str],
    applied: list[Any],
    applied_elements: list[str],
    name: str,
    schema_path: str,
    list_keys: ListKeys | None,
) -> list[Any]:
    """Merge keyed lists: items others set keep their places, applied items follow the applied order."""
    by_key = dict(zip(applied_elements, applied, strict=True))
    live_set = set(live_elements)
    existing = [e for e in applied_elements if e in live_set]
    slots = iter(existing)
    order = [next(slots) if e in by_key else e for e in live_elements]
    for n, element in enumerate(applied_elements):
        if element in order:
            continue
        before = [e for e in applied_elements[:n] if e in order]
        after = [e for e in applied_elements[n + 1 :] if e in order]
        if before:
            order.insert(order.index(before[-1]) + 1, element)
        elif after:
            order.insert(order.index(after[0]), element)
        else:
            order.append(element)
    live_by_key = dict(zip(live_elements, live, strict=True))
    out = []
    for element in order:
        if element in by_key and element in live_by_key:
            out.append(_merge_applied(live_by_key[element], by_key[element], name, schema_path, list_keys))
        elif element in by_key:
            out.append(copy.deepcopy(by_key[element]))
        else:
            out.append(live_by_key[element])
    return out


def _remove_path(obj: dict[str, Any], path: Path) -> None:
    """Delete the node at ``path`` and then the parents it leaves empty (never ``metadata``)."""
    trail: list[tuple[Any, Any]] = []  # (container, key or index)
    node: Any = obj
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f" and isinstance(node, dict) and rest in node:
            trail.append((node, rest))
            node = node[rest]
            continue
        if isinstance(node, list):
            idx = _find_item(node, kind, rest)
            if idx is not None:
                trail.append((node, idx))
                node = node[idx]
                continue
        return
    while trail:
        container, key = trail.pop()
        del container[key]
        if container or container is obj or container is obj.get("metadata"):
            return


def _find_item(items: list[Any], kind: str, rest: str) -> int | None:
    if kind == "i":
        n = int(rest)
        return n if 0 <= n < len(items) else None
    wanted = json.loads(rest)
    for n, item in enumerate(items):
        if kind == "v" and same(item, wanted):
            return n
        if (
            kind == "k"
            and isinstance(item, dict)
            and all(item.get(k, KEY_DEFAULTS.get(k)) == v for k, v in wanted.items())
        ):
            return n
    return None


def _is_key_of_kept_item(path: Path, kept: set[Path]) -> bool:
    """A key field of a list item that stays must stay too, or the item loses its identity."""
    if len(path) < 2 or not path[-2].startswith("k:") or path[:-1] not in kept:
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


def _prefixes(paths: Iterable[Path]) -> set[Path]:
    out: set[Path] = set()
    for path in paths:
        for n in range(1, len(path) + 1):
            out.add(path[:n])
    return out


def _conflict_error(conflicts: list[tuple[Path, ManagedFieldsEntry]]) -> ApiError:
    causes = [
        FieldError(ErrorType.CONFLICT, render_path(p), f"conflict with {e.describe()}") for p, e in conflicts
    ]
    if len(conflicts) == 1:
        path, entry = conflicts[0]
        detail = f"conflict with {entry.describe()}: {render_path(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for path, entry in conflicts:
            by_manager.setdefault(entry.describe(), []).append(render_path(path))
        parts = [f"{m}:" + "".join(f"\n- {p}" for p in ps) for m, ps in sorted(by_manager.items())]
        detail = "conflicts with " + "\n".join(parts)
    plural = "" if len(conflicts) == 1 else "s"
    return ApiError(
        409, "Conflict", f"Apply failed with {len(conflicts)} conflict{plural}: {detail}", {}, causes
    )


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    now: str,
    list_keys: ListKeys | None = None,
    subresource: str = "",
) -> dict[str, Any]:
    """Merge the apply configuration ``applied`` into ``live`` (None creates) and return the result.

    The manager's Apply entry becomes exactly the fields of ``applied``; fields it applied before
    and no longer does are removed unless another manager owns them. Changing a field another
    manager owns raises a 409 naming every conflict, unless ``force`` moves the ownership.
    ``subresource="status"`` applies only ``status``; otherwise ``status`` is ignored.
    ``list_keys`` maps a dotted field path without indices (``spec.x.items``) or a field name to
    the keys of that list of maps.
    """
    if not isinstance(applied, dict):
        raise bad_request("apply configuration must be an object")
    if not manager:
        raise bad_request("PATCH, fieldManager is required for apply requests")
    if (applied.get("metadata") or {}).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    config = _strip_applied(applied, subresource)
    scope = "status" if subresource == "status" else "main"
    applied_flat = flatten(config, list_keys=list_keys, scope=scope)
    base = copy.deepcopy(live) if live is not None else {}
    live_flat = flatten(base, list_keys=list_keys, scope=scope) if live is not None else {}
    entries = read_managed_fields(live)
    others = [e for e in entries if e.manager != manager]

    conflicts: list[tuple[Path, ManagedFieldsEntry]] = []
    for path, value in applied_flat.items():
        if value is ITEM or path not in live_flat or same(live_flat[path], value):
            continue
        conflicts.extend((path, e) for e in others if path in e.fields)
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for path, entry in conflicts:
        entry.fields.discard(path)

    api_version = str(applied.get("apiVersion") or base.get("apiVersion", ""))
    mine = entry_for(entries, manager, APPLY, api_version, subresource, now)
    previous, mine.fields = mine.fields, set(applied_flat)

    result = _merge_applied(base, config, "", "", list_keys)
    kept = _prefixes(p for e in entries if e is not mine for p in e.fields) | _prefixes(mine.fields)
    doomed = {p for p in previous - mine.fields if p not in kept and not _is_key_of_kept_item(p, kept)}
    for path in sorted(doomed, key=len, reverse=True):
        if not any(path[:n] in doomed for n in range(1, len(path))):
            _remove_path(result, path)
    write_managed_fields(result, entries)
    return dict(result)
