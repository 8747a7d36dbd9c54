"""The dashboard's live picture of the API: list-then-watch per kind with the user's credentials.

One :class:`Store` per dashboard process. Each kind is watched across namespaces when the user may
list it there; when the server refuses (403) it is watched in each namespace the dashboard was
given (the kubeconfig's and ``--namespace``'s), and a namespace still refused is recorded, never
retried in a loop faster than ``refused_retry``. Kinds the server does not serve stay empty. A
broken stream or an unreachable server marks the store disconnected (the page's banner) and is
retried with backoff; the next successful list clears it, so the page recovers by itself. An
optional operator health URL is probed on a timer for the operator banner. Every change bumps
``version``; :meth:`Store.changed` lets each browser stream wait for the next one. The store
never writes to the API (actions go through :mod:`.actions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from codeflare.dashboard.history import History
from codeflare.dashboard.queues import queues_view
from codeflare.dashboard.snapshot import WATCHED, Snapshot
from codeflare.dashboard.work import KINDS as ACTION_KINDS
from codeflare.dashboard.work import VERBS
from codeflare.k8s.types import Obj
from codeflare.kube import errors
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Key, key_of
from codeflare.kube.kinds import Kind

log = logging.getLogger(__name__)

SELF_SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False
)


@dataclass
class Health:
    """What the banner says: per watch scope, the last failure (absent once it listed again)."""

    api: dict[str, str] = field(default_factory=dict)
    operator: str = ""
    operator_checked: bool = False

    @property
    def problems(self) -> list[str]:
        out = []
        if self.api:
            first = sorted(self.api.items())[0]
            out.append(f"Kubernetes API unreachable ({first[0]}: {first[1]}); showing the last known state")
        if self.operator:
            out.append(f"operator not ready: {self.operator}")
        return out


class Store:
    """Objects the user may read, by kind, kept current by watches."""

    def __init__(
        self,
        kube: AsyncKube,
        namespaces: Sequence[str] = (),
        watched: Sequence[Kind] = WATCHED,
        *,
        operator_health: str = "",
        retry: float = 1.0,
        refused_retry: float = 60.0,
        history: History | None = None,
    ) -> None:
        self.kube = kube
        self.namespaces = tuple(dict.fromkeys(namespaces))
        self.watched = tuple(watched)
        self.operator_health = operator_health
        self.retry = retry
        self.refused_retry = refused_retry
        self.objects: dict[str, dict[Key, Obj]] = {k.kind: {} for k in self.watched}
        self.forbidden: dict[str, set[str]] = {}
        self.health = Health()
        self.history = history or History()
        self.version = 0
        self.synced = asyncio.Event()
        self._listed: set[str] = set()
        self._cond = asyncio.Condition()
        self._snapshot: tuple[int, Snapshot] | None = None
        #: (namespace, kind, verb) -> allowed, from SelfSubjectAccessReviews (absent: not asked yet)
        self.permissions: dict[tuple[str, str, str], bool] = {}

    # -- reading ----------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The objects now (one Snapshot per version: every stream renders from the same one)."""
        if self._snapshot is None or self._snapshot[0] != self.version:
            objects = {kind: list(objs.values()) for kind, objs in self.objects.items()}
            forbidden = {kind: frozenset(nss) for kind, nss in self.forbidden.items()}
            self._snapshot = (self.version, Snapshot(objects, forbidden, time.time()))
        return self._snapshot[1]

    async def changed(self, after: int, timeout: float | None = None) -> int:
        """Wait until ``version`` is past ``after`` (or ``timeout`` passed); the version then."""
        async with self._cond:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._cond.wait_for(lambda: self.version > after), timeout)
            return self.version

    async def _bump(self) -> None:
        self.version += 1
        async with self._cond:
            self._cond.notify_all()

    # -- running ----------------------------------------------------------------------------------
    async def run(self) -> None:
        """Watch every kind (and probe the operator) until cancelled."""
        tasks = [
            asyncio.create_task(self._watch(kind, None), name=f"dashboard-{kind.plural}")
            for kind in self.watched
        ]
        tasks.append(asyncio.create_task(self._sample(), name="dashboard-history"))
        tasks.append(asyncio.create_task(self._review_permissions(), name="dashboard-permissions"))
        if self.operator_health:
            tasks.append(asyncio.create_task(self._probe_operator(), name="dashboard-operator"))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _watch(self, kind: Kind, namespace: str | None) -> None:
        scope = f"{kind.plural}" + (f" in {namespace}" if namespace else "")
        delay = self.retry
        while True:
            try:
                await self._list_and_watch(kind, namespace, scope)
                delay = self.retry
                continue  # the server ended the stream: list again (a watch may have missed events)
            except asyncio.CancelledError:
                raise
            except errors.Forbidden:
                if namespace is None and kind.namespaced and self.namespaces:
                    await asyncio.gather(*(self._watch(kind, ns) for ns in self.namespaces))
                    return
                await self._refused(kind, namespace or "", scope)
                await asyncio.sleep(self.refused_retry)
                continue
            except errors.NotFound:
                await asyncio.sleep(self.refused_retry)  # not served here (yet): a CRD may come later
                continue
            except errors.Gone:
                continue
            except Exception as exc:  # a broken stream, an unreachable server: the banner, then retry
                log.info("dashboard watch of %s failed: %s", scope, exc)
                if self.health.api.get(scope) != str(exc):
                    self.health.api[scope] = str(exc) or type(exc).__name__
                    await self._bump()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)

    async def _list_and_watch(self, kind: Kind, namespace: str | None, scope: str) -> None:
        items, rv = await self.kube.list_with_version(kind, namespace)
        self._replace(kind, namespace, items)
        self.forbidden.get(kind.kind, set()).discard(namespace or "")
        self.health.api.pop(scope, None)
        self._listed.add(scope)
        if len(self._listed) >= len(self.watched):
            self.synced.set()
        await self._bump()
        async for event, obj in self.kube.watch(kind, namespace, resource_version=rv):
            if event == "BOOKMARK":
                continue
            if event == "ERROR":
                raise errors.Gone("watch expired")
            bucket = self.objects[kind.kind]
            if event == "DELETED":
                bucket.pop(key_of(obj), None)
            else:
                bucket[key_of(obj)] = obj
            await self._bump()

    def _replace(self, kind: Kind, namespace: str | None, items: list[Obj]) -> None:
        bucket = self.objects[kind.kind]
        for key in [k for k in bucket if namespace is None or k[0] == namespace]:
            del bucket[key]
        for obj in items:
            bucket[key_of(obj)] = obj

    async def _refused(self, kind: Kind, namespace: str, scope: str) -> None:
        self._listed.add(scope)
        if len(self._listed) >= len(self.watched):
            self.synced.set()
        if namespace not in self.forbidden.setdefault(kind.kind, set()):
            self.forbidden[kind.kind].add(namespace)
            await self._bump()

    async def _sample(self) -> None:
        await self.synced.wait()  # the first sample is of the whole picture, not of an empty store
        while True:
            self.history.record(queues_view(self.snapshot()).cluster_queues, time.time())
            await asyncio.sleep(self.history.interval)

    async def _review_permissions(self, ttl: float = 60.0) -> None:
        """Ask the API server, as the user, which actions it would allow in each namespace that has
        work (one review per namespace, kind and verb, asked again after ``ttl``); the buttons say so,
        and the server still decides when one is pressed."""
        asked: dict[tuple[str, str, str], float] = {}
        version = -1
        while True:
            version = await self.changed(version, ttl)
            now = time.monotonic()
            for kind in ACTION_KINDS.values():
                for namespace in sorted({ns for ns, _ in self.objects.get(kind.kind, {})}):
                    for verb in sorted(set(VERBS.values())):
                        key = (namespace, kind.kind, verb)
                        if now - asked.get(key, -ttl) < ttl:
                            continue
                        asked[key] = now
                        allowed = await self._access_review(kind, namespace, verb)
                        if allowed is not None and self.permissions.get(key) != allowed:
                            self.permissions[key] = allowed
                            await self._bump()

    async def _access_review(self, kind: Kind, namespace: str, verb: str) -> bool | None:
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "namespace": namespace,
                    "verb": verb,
                    "group": kind.group,
                    "resource": kind.plural,
                }
            },
        }
        try:
            answer = await self.kube.create(SELF_SUBJECT_ACCESS_REVIEW, body)
        except errors.KubeError as exc:  # reviews not served (or refused): the buttons stay unmarked
            log.info("SelfSubjectAccessReview for %s %s in %s: %s", verb, kind.plural, namespace, exc)
            return None
        return bool((answer.get("status") or {}).get("allowed"))

    async def _probe_operator(self, every: float = 5.0) -> None:
        import aiohttp

        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3)) as session:
            while True:
                try:
                    async with session.get(self.operator_health) as resp:
                        problem = "" if resp.status == 200 else f"readyz answered {resp.status}"
                except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                    problem = f"no answer from {self.operator_health} ({type(exc).__name__})"
                if problem != self.health.operator or not self.health.operator_checked:
                    self.health.operator, self.health.operator_checked = problem, True
                    await self._bump()
                await asyncio.sleep(every)
