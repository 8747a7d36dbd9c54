"""Storage-version migration: rewrites custom objects stored at a version their CRD no longer stores.

kube-apiserver never migrates by itself: when a CRD's storage version changes, old objects stay
at the old version (readable, converted on every read) and ``status.storedVersions`` lists both
until a storage-version migrator rewrites them. The embedded server is its own migrator: when it
starts, every CRD whose objects are not all at its storage version has them converted (one
ConversionReview per CRD for a webhook, an apiVersion rewrite for strategy None), written back
at the storage version (a new resourceVersion, a MODIFIED event, as the migrator's no-op update
gives), and ``storedVersions`` trimmed to the storage version. A conversion that fails (the
webhook not up yet) leaves the objects as they are, still readable, and is retried with backoff
while the server runs. While it runs it also looks, every :data:`IDLE_CHECK` seconds, for a CRD
whose ``storedVersions`` grew (an update moved its storage version, as an upgrade that re-applies
the bundled CRDs does) and migrates that one too; a look reads the CRDs only, not their objects.
kube-apiserver leaves this to a separate storage-version migrator; here the server is it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.registry.objects import ObjectAPI
from codeflare.apiserver.registry.resources import CRD_KEY, crd_storage_key

log = logging.getLogger(__name__)

FIRST_RETRY, MAX_RETRY = 1.0, 30.0
IDLE_CHECK = 2.0  # seconds between looks for a CRD whose storage version moved


class StorageMigration:
    """Migrates every CRD's objects to its storage version; :meth:`run` retries until done."""

    def __init__(self, api: ObjectAPI) -> None:
        self.api = api

    def migrate_once(self, only_moved: bool = False) -> list[str]:
        """One pass over every CRD (``only_moved``: those whose storedVersions are not just the
        storage version); the names of those that could not be migrated yet."""
        failed = []
        for crd in list(self.api.store.iter(CRD_KEY)):
            if only_moved and not self._moved(crd):
                continue
            name = str(crd["metadata"].get("name", ""))
            try:
                self._migrate(crd)
            except errors.ApiError as exc:
                log.warning("storage migration of %s deferred: %s", name, exc.message)
                failed.append(name)
        return failed

    def _migrate(self, crd: dict[str, Any]) -> None:
        key = crd_storage_key(crd)
        rt = self.api.registry.storage_type(key)
        if rt is None:
            return
        target = rt.storage_api_version
        store = self.api.store
        old = [obj for obj in store.iter(key) if obj.get("apiVersion") != target]
        if old:
            converted = self.api.converter.convert(rt.conversion, rt.kind, old, target)
            for before, after in zip(old, converted, strict=True):
                meta = before["metadata"]
                current = store.get(key, meta.get("namespace", ""), meta["name"])
                if current is None or current["metadata"].get("resourceVersion") != meta.get(
                    "resourceVersion"
                ):
                    continue  # rewritten by a client meanwhile, through the object API: already stored right
                store.put(key, after, before)
            log.info("migrated %d %s to %s", len(old), rt.qualified, target)
        status = crd.get("status") or {}
        if list(status.get("storedVersions") or []) != [rt.storage_version]:
            current_crd = store.get(CRD_KEY, "", crd["metadata"]["name"])
            if current_crd is not None and not any(o.get("apiVersion") != target for o in store.iter(key)):
                trimmed = dict(
                    current_crd,
                    status=dict(current_crd.get("status") or {}, storedVersions=[rt.storage_version]),
                )
                store.put(CRD_KEY, trimmed, current_crd)

    def _moved(self, crd: dict[str, Any]) -> bool:
        rt = self.api.registry.storage_type(crd_storage_key(crd))
        stored = list((crd.get("status") or {}).get("storedVersions") or [])
        return rt is not None and stored != [rt.storage_version]

    async def run(self) -> None:
        """Migrate now; retry what failed with backoff; then keep migrating CRDs whose storage moves."""
        delay = FIRST_RETRY
        failed = self.migrate_once()
        while True:
            if failed:
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RETRY)
            else:
                await asyncio.sleep(IDLE_CHECK)
                delay = FIRST_RETRY
            failed = self.migrate_once(only_moved=True)
