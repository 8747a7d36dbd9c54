"""Leader election over a ``coordination.k8s.io/v1`` Lease, so that only one operator acts.

The candidate takes the Lease when it is free or expired (``leaseDurationSeconds`` past its
``renewTime``), then renews it every ``retryPeriod``. If it cannot renew within
``renewDeadline`` it has lost leadership and the operator stops, to be restarted as a candidate;
acting on without the Lease could let two leaders write at once.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from typing import Any

from codeflare.k8s import timestamps
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.operator.config import LeaderElectionConfig

log = logging.getLogger(__name__)


def _parse(ts: str | None) -> datetime.datetime | None:
    if not ts:
        return None
    try:
        return timestamps.parse_rfc3339(ts)
    except ValueError:
        return None


def lease_is_free(lease: dict[str, Any], identity: str, now: datetime.datetime) -> bool:
    """Whether ``identity`` may take ``lease`` now (it holds it, nobody does, or it expired)."""
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity")
    if not holder or holder == identity:
        return True
    renewed = _parse(spec.get("renewTime")) or _parse(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    return renewed is None or renewed + datetime.timedelta(seconds=duration) < now


class LeaderElector:
    """Acquires and keeps one Lease for ``identity``."""

    def __init__(self, kube: AsyncKube, namespace: str, identity: str, config: LeaderElectionConfig) -> None:
        self.kube = kube
        self.namespace = namespace
        self.identity = identity
        self.config = config
        self.lost = asyncio.Event()

    def _spec(self, now: datetime.datetime, previous: dict[str, Any] | None) -> dict[str, Any]:
        prev = (previous or {}).get("spec") or {}
        transitions = int(prev.get("leaseTransitions") or 0)
        same = prev.get("holderIdentity") == self.identity
        stamp = timestamps.format_micro(now)
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.config.lease_duration.total_seconds()),
            "acquireTime": prev["acquireTime"] if same and prev.get("acquireTime") else stamp,
            "renewTime": stamp,
            "leaseTransitions": transitions if same or not prev.get("holderIdentity") else transitions + 1,
        }

    async def try_acquire(self) -> bool:
        """One attempt to take or renew the Lease."""
        now = timestamps.now()
        name = self.config.resource_name
        lease = await self.kube.find(kinds.LEASE, name, self.namespace)
        try:
            if lease is None:
                await self.kube.create(
                    kinds.LEASE,
                    {"metadata": {"name": name, "namespace": self.namespace}, "spec": self._spec(now, None)},
                )
                return True
            if not lease_is_free(lease, self.identity, now):
                return False
            lease["spec"] = self._spec(now, lease)
            await self.kube.replace(kinds.LEASE, lease)
            return True
        except (errors.Conflict, errors.AlreadyExists):
            return False

    async def acquire(self) -> None:
        """Block until this candidate leads."""
        log.info(
            "waiting to lead (lease %s/%s as %s)", self.namespace, self.config.resource_name, self.identity
        )
        while not await self._attempt():
            await asyncio.sleep(self.config.retry_period.total_seconds())
        log.info("became leader as %s", self.identity)

    async def _attempt(self) -> bool:
        try:
            return await self.try_acquire()
        except errors.KubeError as exc:
            log.warning("lease attempt failed: %s", exc)
            return False

    async def keep(self) -> None:
        """Renew until renewal fails for longer than renewDeadline; then set ``lost`` and return."""
        loop = asyncio.get_running_loop()
        last_ok = loop.time()
        deadline = self.config.renew_deadline.total_seconds()
        while True:
            await asyncio.sleep(self.config.retry_period.total_seconds())
            if await self._attempt():
                last_ok = loop.time()
            elif loop.time() - last_ok > deadline:
                log.error("lost the leader lease %s", self.config.resource_name)
                self.lost.set()
                return
