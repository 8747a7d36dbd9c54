"""Server-side printing: ``meta.k8s.io/v1`` Table responses for ``kubectl get``.

Columns come from the resource's printer columns (a CRD's additionalPrinterColumns, or the
built-in ones) evaluated with the small JSONPath subset those columns use: ``.a.b``,
``.a[0]``, ``.a[*].b`` and ``.a[?(@.type=="Ready")].status``. Pure functions, no I/O.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from codeflare.apiserver.registry.resources import PrinterColumn, ResourceType
from codeflare.k8s import timestamps

TABLE_MEDIA = "as=Table"
_FILTER = re.compile(r'^\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["\']([^"\']*)["\']\)$')
_TOKEN = re.compile(r"\.([A-Za-z0-9_$-]+)|\[([^\]]+)\]")


def wants_table(accept: str) -> bool:
    """True when the Accept header asks for a Table (``application/json;as=Table;...``)."""
    return any(TABLE_MEDIA in part.replace(" ", "") for part in accept.split(","))


def jsonpath(obj: Any, path: str) -> list[Any]:
    """Every value that ``path`` selects in ``obj`` (an empty list when nothing matches)."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    values = [obj]
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            return []
        pos = match.end()
        field, index = match.group(1), match.group(2)
        nxt: list[Any] = []
        for value in values:
            if field is not None:
                if isinstance(value, dict) and field in value:
                    nxt.append(value[field])
            elif index == "*":
                if isinstance(value, list):
                    nxt.extend(value)
                elif isinstance(value, dict):
                    nxt.extend(value.values())
            elif index is not None and index.lstrip("-").isdigit():
                if isinstance(value, list) and -len(value) <= int(index) < len(value):
                    nxt.append(value[int(index)])
            elif index is not None:
                flt = _FILTER.match(index)
                if flt and isinstance(value, list):
                    key, want = flt.group(1), flt.group(2)
                    for item in value:
                        found = jsonpath(item, "." + key)
                        if found and str(found[0]) == want:
                            nxt.append(item)
        values = nxt
    return values


def human_age(timestamp: str, now: datetime.datetime | None = None) -> str:
    """A Kubernetes-style age ("45s", "3m20s", "5h", "12d") for an RFC 3339 timestamp."""
    try:
        then = timestamps.parse_rfc3339(timestamp)
    except ValueError:
        return "<unknown>"
    seconds = int(((now or timestamps.now()) - then).total_seconds())
    if seconds < -1:
        return "<invalid>"
    seconds = max(seconds, 0)
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    return f"{years}y{days % 365}d" if years < 8 and days % 365 else f"{years}y"


def _cell(obj: dict[str, Any], column: PrinterColumn) -> Any:
    values = jsonpath(obj, column.json_path)
    if not values:
        return None if column.type != "date" else "<unknown>"
    if column.type == "date" and len(values) == 1 and isinstance(values[0], str):
        return human_age(values[0])
    if len(values) > 1:
        return ",".join(str(v) for v in values)
    value = values[0]
    if column.type == "integer" and isinstance(value, bool):
        return int(value)
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, separators=(",", ":"))
    return value


def column_definitions(rt: ResourceType) -> list[dict[str, Any]]:
    defs = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "priority": 0,
            "description": "Name must be unique within a namespace.",
        }
    ]
    for column in rt.columns:
        defs.append(
            {
                "name": column.name,
                "type": column.type,
                "format": column.format,
                "priority": column.priority,
                "description": column.description or column.name,
            }
        )
    return defs


def row(rt: ResourceType, obj: dict[str, Any], include_object: str) -> dict[str, Any]:
    cells = [obj.get("metadata", {}).get("name", "")] + [_cell(obj, c) for c in rt.columns]
    out: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata", {}),
        }
    return out


def table(
    rt: ResourceType,
    objs: list[dict[str, Any]],
    resource_version: str,
    include_object: str = "Metadata",
    continue_token: str = "",
    with_columns: bool = True,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    out: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    if with_columns:
        out["columnDefinitions"] = column_definitions(rt)
    out["rows"] = [row(rt, o, include_object) for o in objs]
    return out
