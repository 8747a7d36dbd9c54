"""Garbage collection and finalization: owner references, namespaces and CRD instances.

One background loop that keeps an index of owner uid -> dependents and finishes what deletions
start: dependents of a deleted owner are deleted (Background) or waited for (Foreground, via the
``foregroundDeletion`` finalizer) or released (``orphan``); a terminating namespace is emptied,
then its ``kubernetes`` finalizer removed; a deleted CRD's objects are removed before the CRD
goes. It acts only through :class:`~codeflare.apiserver.registry.objects.ObjectAPI`, as the system user.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.registry.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from codeflare.apiserver.registry.objects import ObjectAPI
from codeflare.apiserver.registry.resources import ResourceType, crd_storage_key
from codeflare.apiserver.registry.strategies import CRD_CLEANUP_FINALIZER, CRD_KEY, NAMESPACE_FINALIZER
from codeflare.apiserver.storage.store import DELETED, Change
from codeflare.k8s.ownerrefs import owner_references

log = logging.getLogger(__name__)

ObjKey = tuple[str, str, str]  # storage key, namespace, name


def _owner_uids(obj: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in owner_references(obj) if isinstance(r, dict) and isinstance(r.get("uid"), str)]


class GarbageCollector:
    """Finishes deletions in the background; call :meth:`run` as a task."""

    def __init__(self, api: ObjectAPI, resync_seconds: float = 1.0) -> None:
        self._api = api
        self._resync = resync_seconds
        self._uids: dict[str, ObjKey] = {}
        self._dependents: dict[str, set[ObjKey]] = {}
        self._deleted_owners: set[str] = set()
        self._check_dependents: set[ObjKey] = set()
        self._finalizing: set[ObjKey] = set()
        self._wake = asyncio.Event()
        self._ctx = RequestContext(field_manager="codeflare-garbage-collector")
        store = api.store
        for key in store.resource_keys():
            for obj in store.iter(key):
                self._index(key, obj)
        store.subscribe(self._on_change)

    # -- index ----------------------------------------------------------------------------------
    def _index(self, key: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ref: ObjKey = (key, meta.get("namespace", ""), meta["name"])
        uid = meta.get("uid")
        if isinstance(uid, str):
            self._uids[uid] = ref
        for owner in _owner_uids(obj):
            self._dependents.setdefault(owner, set()).add(ref)
            if owner not in self._uids:
                self._check_dependents.add(ref)
        if meta.get("deletionTimestamp"):
            self._finalizing.add(ref)

    def _unindex(self, key: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ref: ObjKey = (key, meta.get("namespace", ""), meta["name"])
        uid = meta.get("uid")
        if isinstance(uid, str) and self._uids.get(uid) == ref:
            del self._uids[uid]
        for owner in _owner_uids(obj):
            deps = self._dependents.get(owner)
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[owner]

    def _on_change(self, change: Change) -> None:
        if change.old is not None:
            self._unindex(change.key, change.old)
        if change.type == DELETED:
            uid = change.obj["metadata"].get("uid")
            if isinstance(uid, str):
                self._deleted_owners.add(uid)
            self._finalizing.discard((change.key, change.namespace, change.name))
            if change.key == CRD_KEY:
                self._wake.set()
        else:
            self._index(change.key, change.obj)
        self._wake.set()

    # -- loop -----------------------------------------------------------------------------------
    async def run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._resync)
            self._wake.clear()
            try:
                self.sweep()
            except Exception:  # the loop must survive anything a single object does
                log.exception("garbage collection sweep failed")

    def sweep(self) -> None:
        """One pass over everything pending; safe to call repeatedly."""
        owners, self._deleted_owners = self._deleted_owners, set()
        for uid in owners:
            for dep in sorted(self._dependents.get(uid, ())):
                self._check_dependents.add(dep)
        checks, self._check_dependents = self._check_dependents, set()
        for dep in sorted(checks):
            self._collect_dependent(dep)
        for ref in sorted(self._finalizing):
            self._finalize(ref)

    def _type(self, key: str) -> ResourceType | None:
        return self._api.registry.storage_type(key)

    def _delete(self, key: str, namespace: str, name: str, propagation: str = "Background") -> None:
        rt = self._type(key)
        if rt is None:
            return
        obj = self._api.store.get(key, namespace, name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        try:
            self._api.delete(rt, namespace, name, self._ctx, propagation)
        except errors.ApiError as exc:
            if exc.code != 404:
                log.warning("could not delete %s %s/%s: %s", key, namespace, name, exc.message)

    def _rewrite(self, key: str, namespace: str, name: str, change: Any) -> None:
        """Apply ``change(obj_copy)`` to the current object and write it back."""
        rt = self._type(key)
        obj = self._api.store.get(key, namespace, name)
        if rt is None or obj is None:
            return
        new = copy.deepcopy(obj)
        change(new)
        try:
            self._api.update(rt, namespace, name, new, self._ctx, require_version=True)
        except errors.ApiError as exc:
            if exc.code not in (404, 409):
                log.warning("could not update %s %s/%s: %s", key, namespace, name, exc.message)
            self._wake.set()

    def _collect_dependent(self, dep: ObjKey) -> None:
        key, namespace, name = dep
        obj = self._api.store.get(key, namespace, name)
        if obj is None:
            return
        owners = _owner_uids(obj)
        alive = [u for u in owners if u in self._uids]
        if not owners or len(alive) == len(owners):
            return
        if not alive:
            log.info("deleting %s %s/%s: all owners are gone", key, namespace, name)
            self._delete(key, namespace, name)
            return
        alive_set = set(alive)

        def drop_dead(new: dict[str, Any]) -> None:
            refs = owner_references(new)
            new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") in alive_set]

        self._rewrite(key, namespace, name, drop_dead)

    def _remove_finalizer(self, ref: ObjKey, finalizer: str, spec: bool = False) -> None:
        def drop(new: dict[str, Any]) -> None:
            holder = new.setdefault("spec", {}) if spec else new["metadata"]
            holder["finalizers"] = [f for f in holder.get("finalizers") or [] if f != finalizer]

        self._rewrite(*ref, drop)

    def _finalize(self, ref: ObjKey) -> None:
        key, namespace, name = ref
        obj = self._api.store.get(key, namespace, name)
        if obj is None:
            self._finalizing.discard(ref)
            return
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp"):
            self._finalizing.discard(ref)
            return
        finalizers = list(meta.get("finalizers") or [])
        uid = meta.get("uid", "")
        ns_finalizers = (obj.get("spec") or {}).get("finalizers") or []
        if key == "core/namespaces" and NAMESPACE_FINALIZER in ns_finalizers and self._empty_namespace(name):
            self._remove_finalizer(ref, NAMESPACE_FINALIZER, spec=True)
        if key == CRD_KEY and CRD_CLEANUP_FINALIZER in finalizers:
            target = crd_storage_key(obj)
            remaining = list(self._api.store.iter(target))
            for item in remaining:
                imeta = item["metadata"]
                self._delete(target, imeta.get("namespace", ""), imeta["name"])
            if not list(self._api.store.iter(target)):
                self._remove_finalizer(ref, CRD_CLEANUP_FINALIZER)
        if FOREGROUND_FINALIZER in finalizers:
            deps = sorted(self._dependents.get(uid, ()))
            for dep in deps:
                self._delete(*dep, propagation="Foreground")
            if not self._dependents.get(uid):
                self._remove_finalizer(ref, FOREGROUND_FINALIZER)
        if ORPHAN_FINALIZER in finalizers:
            for dep in sorted(self._dependents.get(uid, ())):
                self._rewrite(
                    *dep,
                    lambda new, u=uid: new["metadata"].__setitem__(
                        "ownerReferences",
                        [r for r in owner_references(new) if r.get("uid") != u],
                    ),
                )
            if not self._dependents.get(uid):
                self._remove_finalizer(ref, ORPHAN_FINALIZER)

    def _empty_namespace(self, namespace: str) -> bool:
        """Delete everything in ``namespace``; True once nothing is left."""
        left = False
        for key in self._api.store.resource_keys():
            rt = self._type(key)
            if rt is None or not rt.namespaced:
                continue
            for obj in list(self._api.store.iter(key, namespace)):
                left = True
                self._delete(key, namespace, obj["metadata"]["name"])
        return not left
