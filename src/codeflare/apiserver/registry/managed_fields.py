"""Field ownership (``metadata.managedFields``) and server-side apply, as Kubernetes documents them.

Every write records which manager set which fields (``record_update``); an apply request
(``server_side_apply``) merges a partial configuration into the live object, removes the fields
the same manager applied before and no longer applies, and refuses to change fields that other
managers own unless forced (409 with one cause per conflicting field).
Field sets are Python sets of paths whose elements use the FieldsV1 spelling (``f:spec``,
``k:{"name":"x"}``, ``v:"x"``, ``i:0``). There is no OpenAPI schema here: lists of maps merge by
keys chosen from the field name (or the caller's ``list_keys``), other lists are atomic, and all
maps are granular. Preconditions (resourceVersion), validation and storage are the caller's.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.apiserver.errors import FIELD_CONFLICT, ApiError, FieldError, bad_request

Path = tuple[str, ...]
ListKeys = Mapping[str, tuple[str, ...]]

APPLY = "Apply"
UPDATE = "Update"

# Keys of lists of maps by field name (the strategic-merge keys, extended for our CRDs).
DEFAULT_LIST_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "imagePullSecrets": ("name",),
    "conditions": ("type",),
    "ownerReferences": ("uid",),
    "hostAliases": ("ip",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
    "workerGroupSpecs": ("groupName",),
    "flavors": ("name",),
    "resources": ("name",),
    "podSets": ("name",),
    "podSetAssignments": ("name",),
    "resourceClaims": ("name",),
}
_CONTAINER_PORT_KEYS = ("containerPort", "protocol")
_SERVICE_PORT_KEYS = ("port", "protocol")
_KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}
# Lists of scalars owned value by value (``+listType=set``).
SET_LISTS = frozenset({"finalizers"})

# Fields no manager owns: identity and server-maintained metadata.
_IGNORED_TOP = frozenset({"apiVersion", "kind"})
_IGNORED_META = frozenset(
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
_ITEM = object()  # flattened value of a list-item node (k:/v:) or a set list's own node


# ---- paths and FieldsV1 -------------------------------------------------------------------------


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


def _list_keys_for(
    schema_path: str, name: str, items: list[Any], list_keys: ListKeys | None
) -> tuple[str, ...] | None:
    if list_keys:
        if schema_path in list_keys:
            return list_keys[schema_path]
        if name in list_keys:
            return list_keys[name]
    if name == "ports":
        return _CONTAINER_PORT_KEYS if items and "containerPort" in items[0] else _SERVICE_PORT_KEYS
    return DEFAULT_LIST_KEYS.get(name)


def _item_elements(items: list[Any], keys: tuple[str, ...]) -> list[str] | None:
    """The ``k:{...}`` element of every item, or None when the list cannot be keyed."""
    out: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        key: dict[str, Any] = {}
        for k in keys:
            if k in item:
                key[k] = item[k]
            elif k in _KEY_DEFAULTS:
                key[k] = _KEY_DEFAULTS[k]
            elif k == keys[0]:
                return None
        out.append("k:" + json.dumps(key, sort_keys=True, separators=(",", ":")))
    return out if len(set(out)) == len(out) else None


def _list_shape(
    name: str, schema_path: str, items: list[Any], list_keys: ListKeys | None
) -> tuple[str, list[str] | None]:
    """("set", elements), ("map", elements) or ("atomic", None) for a list value."""
    if name in SET_LISTS and all(not isinstance(i, dict | list) for i in items):
        return "set", ["v:" + json.dumps(i, separators=(",", ":")) for i in items]
    keys = _list_keys_for(schema_path, name, items, list_keys)
    if keys and items:
        elements = _item_elements(items, keys)
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
        shape, elements = _list_shape(name, schema_path, value, keys)
        if shape == "atomic" or elements is None:
            out[path] = value
            return
        if shape == "set":
            out[path] = _ITEM
        for element, item in zip(elements, value, strict=True):
            out[(*path, element)] = _ITEM
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
            value = {k: v for k, v in value.items() if k not in _IGNORED_META}
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
        old_shape, old_elements = _list_shape(name, sp, old, keys)
        new_shape, new_elements = _list_shape(name, sp, new, keys)
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
                sub: dict[Path, Any] = {(*path, element): _ITEM}
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
    changed.update(p for p, v in after.items() if p not in before or not _same(before[p], v))
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


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


# ---- managedFields entries ----------------------------------------------------------------------


@dataclass
class ManagedFieldsEntry:
    """One element of ``metadata.managedFields`` with its field set parsed."""

    manager: str
    operation: str
    api_version: str
    time: str
    fields: set[Path] = field(default_factory=set)
    subresource: str = ""

    def identity(self) -> tuple[str, str, str, str]:
        version = self.api_version if self.operation == UPDATE else ""
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        text = f'"{self.manager}" using {self.api_version}'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_to_v1(sorted(self.fields)),
        }
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> ManagedFieldsEntry:
        fields_v1 = entry.get("fieldsV1") or {}
        if not isinstance(fields_v1, Mapping):
            raise bad_request("invalid managedFields: fieldsV1 must be an object")
        return cls(
            manager=str(entry.get("manager", "")),
            operation=str(entry.get("operation", UPDATE)),
            api_version=str(entry.get("apiVersion", "")),
            time=str(entry.get("time", "")),
            fields=fields_from_v1(fields_v1),
            subresource=str(entry.get("subresource", "")),
        )


def read_managed_fields(obj: Mapping[str, Any] | None) -> list[ManagedFieldsEntry]:
    """The parsed entries of ``obj``; a list holding only empty entries (``[{}]``) means none."""
    if not obj:
        return []
    raw = (obj.get("metadata") or {}).get("managedFields") or []
    if not isinstance(raw, list):
        raise bad_request("invalid managedFields: must be a list")
    return [ManagedFieldsEntry.from_json(e) for e in raw if isinstance(e, Mapping) and e.get("manager")]


def write_managed_fields(obj: dict[str, Any], entries: Iterable[ManagedFieldsEntry]) -> None:
    """Store ``entries`` into ``obj``, dropping those that own nothing."""
    rendered = [e.to_json() for e in entries if e.fields]
    meta = obj.setdefault("metadata", {})
    if rendered:
        meta["managedFields"] = rendered
    else:
        meta.pop("managedFields", None)


def _entry_for(
    entries: list[ManagedFieldsEntry],
    manager: str,
    operation: str,
    api_version: str,
    subresource: str,
    now: str,
) -> ManagedFieldsEntry:
    wanted = ManagedFieldsEntry(manager, operation, api_version, now, set(), subresource)
    for entry in entries:
        if entry.identity() == wanted.identity():
            entry.api_version, entry.time = api_version, now
            return entry
    entries.append(wanted)
    return wanted


def manager_from_user_agent(user_agent: str) -> str:
    """Default field manager for a request without ``fieldManager``: the user agent up to the first "/"."""
    return user_agent.split("/", 1)[0].strip()[:128]


# ---- Update: ownership follows changed values ---------------------------------------------------


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    now: str,
    operation: str = UPDATE,
    subresource: str = "",
    list_keys: ListKeys | None = None,
) -> None:
    """Give ``manager`` the fields whose values differ between ``old`` and ``new`` (all on create).

    Runs in place on ``new``. Managed fields sent in ``new`` are kept (``[{}]`` resets them);
    otherwise those of ``old`` carry over. Fields that no longer exist are disowned everywhere.
    """
    meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else None
    if meta is not None and isinstance(meta.get("managedFields"), list):
        entries = read_managed_fields(new)
    else:
        entries = read_managed_fields(old)
    scope = "status" if subresource == "status" else "all"
    changed, gone = changed_fields(old, new, list_keys=list_keys, scope=scope)
    if changed or gone:
        for entry in entries:
            entry.fields -= changed
            entry.fields -= gone
        mine = _entry_for(entries, manager, operation, str(new.get("apiVersion", "")), subresource, now)
        mine.fields |= changed
    write_managed_fields(new, entries)


# ---- server-side apply --------------------------------------------------------------------------


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
            value = {k: v for k, v in value.items() if k not in _IGNORED_META or k in ("name", "namespace")}
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
        shape, applied_elements = _list_shape(name, schema_path, applied, list_keys)
        if shape == "set":
            return list(live) + [v for v in applied if v not in live]
        if shape == "map" and applied_elements is not None:
            keys = _list_keys_for(schema_path, name, applied, list_keys) or ()
            live_elements = _item_elements(live, keys)
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
        if kind == "v" and _same(item, wanted):
            return n
        if (
            kind == "k"
            and isinstance(item, dict)
            and all(item.get(k, _KEY_DEFAULTS.get(k)) == v for k, v in wanted.items())
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
        FieldError(FIELD_CONFLICT, render_path(p), f"conflict with {e.describe()}") for p, e in conflicts
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
        if value is _ITEM or path not in live_flat or _same(live_flat[path], value):
            continue
        conflicts.extend((path, e) for e in others if path in e.fields)
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for path, entry in conflicts:
        entry.fields.discard(path)

    api_version = str(applied.get("apiVersion") or base.get("apiVersion", ""))
    mine = _entry_for(entries, manager, APPLY, api_version, subresource, now)
    previous, mine.fields = mine.fields, set(applied_flat)

    result = _merge_applied(base, config, "", "", list_keys)
    kept = _prefixes(p for e in entries if e is not mine for p in e.fields) | _prefixes(mine.fields)
    doomed = {p for p in previous - mine.fields if p not in kept and not _is_key_of_kept_item(p, kept)}
    for path in sorted(doomed, key=len, reverse=True):
        if not any(path[:n] in doomed for n in range(1, len(path))):
            _remove_path(result, path)
    write_managed_fields(result, entries)
    return dict(result)
