"""Discovery documents: ``/version``, ``/api``, ``/api/v1``, ``/apis`` and per-group lists.

Built from the resource registry on each call, so a CRD is discoverable the moment it is
established. Pure functions over the registry; the HTTP layer serves them.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.registry.resources import ResourceRegistry

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0+codeflare",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "2026-11-30T00:00:00Z",
    "goVersion": "python",
    "compiler": "cpython",
    "platform": "linux/amd64",
}


def core_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def resource_list(registry: ResourceRegistry, group: str, version: str) -> dict[str, Any] | None:
    resources = [r for r in registry.all() if r.group == group and r.version == version]
    if not resources:
        return None
    entries: list[dict[str, Any]] = []
    for res in resources:
        entries.extend(res.discovery())
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": entries,
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def _versions(registry: ResourceRegistry, aggregated: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """Served group versions, with those of aggregated APIServices (after the local ones)."""
    out = registry.group_versions()
    for name, versions in (aggregated or {}).items():
        out[name] = [*out.get(name, []), *(v for v in versions if v not in out.get(name, []))]
    return out


def group_list(registry: ResourceRegistry, aggregated: dict[str, list[str]] | None = None) -> dict[str, Any]:
    served = _versions(registry, aggregated)
    groups = [_group(name, versions) for name, versions in sorted(served.items()) if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group(
    registry: ResourceRegistry, name: str, aggregated: dict[str, list[str]] | None = None
) -> dict[str, Any] | None:
    versions = _versions(registry, aggregated).get(name)
    if not versions or not name:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}
