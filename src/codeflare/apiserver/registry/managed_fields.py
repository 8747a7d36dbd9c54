"""Field ownership: ``metadata.managedFields`` entries, and who owns what after an update.

Every write records which manager set which fields (:func:`record_update`): the fields whose
values changed go to the writing manager and leave every other entry; fields that no longer exist
are disowned everywhere. Entries are parsed to and from their FieldsV1 form
(:class:`ManagedFieldsEntry`). Server-side apply, which also reads and writes these entries, is
:mod:`apply`; the field paths themselves are :mod:`fieldsets`'. Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeflare.apiserver.errors import bad_request
from codeflare.apiserver.registry.fieldsets import (
    ListKeys,
    Path,
    changed_fields,
    fields_from_v1,
    fields_to_v1,
)

APPLY = "Apply"
UPDATE = "Update"


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


def entry_for(
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
        mine = entry_for(entries, manager, operation, str(new.get("apiVersion", "")), subresource, now)
        mine.fields |= changed
    write_managed_fields(new, entries)
