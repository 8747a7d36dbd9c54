"""The RayCluster runner: each RayCluster becomes a :class:`LocalRayCluster` of host processes.

Decisions are pure functions of the observed object: :func:`next_step` (deleting, needs our
finalizer, suspended, or to run) and the status functions (:func:`running_status` and friends,
KubeRay's fields through :func:`shapes.cluster_status`). :class:`RayClusterRunner` carries them
out: it adopts or starts the processes (head first, workers once ``ray start`` reports the
runtime started, head start retried as a kubelet would), scales worker groups, mirrors the nodes
as Pods (:mod:`pods`) and records the processes' state on the object and in the journal, so a
restarted agent re-adopts what still runs and cleans up the rest. Only processes it started, by
pid and group, are ever stopped; a node counts as failed only when its death is proven. With
``enableInTreeAutoscaling`` Ray's autoscaler runs beside the head (:mod:`autoscaler`) and moves
``replicas``; an elastic queued cluster runs only the workers its slices admit (:mod:`elastic`).
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from codeflare.k8s.constants import LOCAL_FINALIZER, LOCAL_PROCESSES_ANNOTATION
from codeflare.k8s.timestamps import now_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors
from codeflare.kube.client import AsyncKube
from codeflare.local.agent import autoscaler, elastic, processes, shapes
from codeflare.local.agent.cluster_runner import (
    ClusterNotReadyError,
    LocalRayCluster,
    NodeExit,
    RayNodeFailedError,
    StartAborted,
)
from codeflare.local.agent.cluster_writes import RayClusterWrites
from codeflare.local.agent.credentials import ClusterCredentials, CredentialsPending
from codeflare.local.agent.journal import ClusterJournal
from codeflare.local.agent.pods import NodeView, PodSync
from codeflare.local.agent.ports import PortAllocator
from codeflare.local.agent.ray_node import RAY_STARTED

log = logging.getLogger(__name__)

HEAD_START_ATTEMPTS = 3
#: How soon a cluster that is not ready yet is looked at again (each look is one HTTP call to
#: its dashboard plus API reads; status is only written when it changed).
NOT_READY_POLL_S = 0.25


class Step(enum.Enum):
    """What a RayCluster needs from the agent now."""

    DELETE = "delete"  # being deleted: stop its processes, then release it
    ADD_FINALIZER = "add-finalizer"  # first sight: hold it until its processes are stopped
    SUSPEND = "suspend"  # spec.suspend: no process runs
    RUN = "run"  # start, adopt or scale its processes


def next_step(rc: Obj) -> Step:
    meta = rc["metadata"]
    if meta.get("deletionTimestamp"):
        return Step.DELETE
    if LOCAL_FINALIZER not in (meta.get("finalizers") or []):
        return Step.ADD_FINALIZER
    if (rc.get("spec") or {}).get("suspend"):
        return Step.SUSPEND
    return Step.RUN


def desired_total(rc: Obj) -> int:
    return sum(count for count, _ in shapes.desired_workers(rc.get("spec") or {}).values())


def running_status(
    rc: Obj,
    *,
    ready_workers: int,
    head_ready: bool,
    endpoints: Mapping[str, str],
    now: str,
    held_back: int = 0,
) -> Obj:
    """Status of a running cluster: ``state: ready`` once the head and every wanted worker are
    (``held_back``: wanted workers an elastic cluster may not run yet, not waited for)."""
    total = desired_total(rc) - held_back
    state = "ready" if head_ready and ready_workers >= total else ""
    status = shapes.cluster_status(
        rc,
        state=state,
        ready_workers=ready_workers,
        desired_workers=total,
        head_ready=head_ready,
        endpoints=endpoints,
        now=now,
    )
    if not state:
        status.pop("state")
    return status


def suspended_status(rc: Obj, now: str) -> Obj:
    return shapes.cluster_status(
        rc, state="suspended", ready_workers=0, desired_workers=0, head_ready=False, endpoints=None, now=now
    )


def stopped_status(rc: Obj, now: str) -> Obj:
    """Status of a cluster none of whose processes runs (no state, no endpoints, no head)."""
    status = shapes.cluster_status(
        rc,
        state="",
        ready_workers=0,
        desired_workers=desired_total(rc),
        head_ready=False,
        endpoints=None,
        now=now,
    )
    status.pop("state")
    return {**status, "endpoints": None, "head": None}


def failed_status(rc: Obj, message: str, now: str) -> Obj:
    return shapes.cluster_status(
        rc,
        state="failed",
        ready_workers=0,
        desired_workers=0,
        head_ready=False,
        endpoints=None,
        now=now,
        reason=message,
    )


def _stopping(rc: Obj | None) -> bool:
    """Whether this copy of a RayCluster says its processes must not run (gone, deleted, suspended)."""
    if rc is None:
        return True
    return bool(rc["metadata"].get("deletionTimestamp")) or bool((rc.get("spec") or {}).get("suspend"))


def workers_to_delete(cluster: str, pods: list[str]) -> list[str]:
    """Ray node names of the pods in workersToDelete (``<c>-<group>-worker-<i>`` -> ``<group>-<i>``)."""
    out = []
    prefix = f"{cluster}-"
    for pod in pods:
        if pod.startswith(prefix) and "-worker-" in pod:
            group, _, index = pod[len(prefix) :].rpartition("-worker-")
            out.append(f"{group}-{index}")
    return out


class RayClusterRunner:
    """Runs the processes of every RayCluster the agent is given; one reconcile per cluster at a time."""

    def __init__(
        self,
        kube: AsyncKube,
        home: Path,
        node_name: str,
        ports: PortAllocator,
        base_env: Mapping[str, str],
        latest: Callable[[Obj], Obj | None] | None = None,
    ) -> None:
        """``latest`` gives the newest copy of a RayCluster (None once it is gone): a head start
        in progress is given up as soon as its cluster is being deleted or suspended."""
        self.latest = latest or (lambda rc: rc)
        self.home = home
        self.ports = ports
        self.base_env = dict(base_env)
        self.journal = ClusterJournal(home / "clusters")
        self.writes = RayClusterWrites(kube)
        self.credentials = ClusterCredentials(kube)
        self.kube = kube
        self.pods = PodSync(kube, node_name)
        self.autoscalers = autoscaler.AutoscalerSidecar(kube, home, base_env, sys.executable)
        self.clusters: dict[str, LocalRayCluster] = {}
        self._head_failures: dict[str, int] = {}

    async def reconcile(self, rc: Obj) -> float | None:
        """One pass over ``rc``; seconds after which to look at it again when that should be soon
        (not ready yet, a head start to retry), else None."""
        step = next_step(rc)
        uid = str(rc["metadata"].get("uid"))
        if step is Step.DELETE:
            await self.stop_cluster(uid, rc)
            await self.writes.drop_finalizer(rc)
        elif step is Step.ADD_FINALIZER:
            await self.writes.add_finalizer(rc)
        elif step is Step.SUSPEND:
            await self.stop_cluster(uid, rc, forget_state=True)
            await self.pods.clear(rc, now_rfc3339())
            await self.writes.status(rc, suspended_status(rc, now_rfc3339()))
        else:
            return await self._run(rc)
        return None

    def dashboard_headers(self, url: str) -> dict[str, str]:
        """What a request to the dashboard at ``url`` must carry (its cluster's token)."""
        for runtime in self.clusters.values():
            if runtime.head is not None and runtime.dashboard_url == url.rstrip("/"):
                return runtime.http_headers
        return {}

    async def _run(self, rc: Obj) -> float | None:
        runtime, again = await self._runtime(rc)
        if runtime is None:
            return again
        uid = str(rc["metadata"].get("uid"))
        failed = await asyncio.to_thread(runtime.forget_dead)
        if any(f.node == "head" for f in failed):
            await self._fail(rc, runtime, f"Ray head process exited with code {failed[0].exit_code}")
            return None
        held_back = await self._scale_workers(rc, runtime)
        await self.autoscalers.ensure(rc, runtime)
        self.journal.write(uid, runtime.to_state())
        ready = set(await asyncio.to_thread(runtime.ready_nodes))
        gated = [(node, g) for g, count in held_back.items() for node in runtime.next_names(g, count)]
        await self._sync_pods(rc, runtime, failed, ready, gated)
        status = running_status(
            rc,
            ready_workers=len([n for n in runtime.workers() if n.name in ready]),
            head_ready="head" in ready,
            endpoints=runtime.endpoints.as_status(),
            now=now_rfc3339(),
            held_back=sum(held_back.values()),
        )
        await self.writes.annotations(rc, runtime)
        await self.writes.status(rc, status)
        return None if "state" in status else NOT_READY_POLL_S

    async def _sync_pods(
        self,
        rc: Obj,
        runtime: LocalRayCluster,
        failed: list[NodeExit],
        ready: set[str],
        gated: list[tuple[str, str]],
    ) -> None:
        views = [NodeView(node, node.name in ready) for node in runtime.nodes.values()]
        await self.pods.sync(rc, views, failed, now_rfc3339(), gated=gated)

    async def _runtime(self, rc: Obj) -> tuple[LocalRayCluster | None, float | None]:
        """The cluster's processes: adopted from its annotation, or new; the head started (and
        waited for) when it does not run. None when the head could not start this time, with
        when the next attempt is due (None: no further attempt)."""
        meta = rc["metadata"]
        uid = str(meta.get("uid"))
        runtime = self.clusters.get(uid)
        head_template = autoscaler.head_template(
            rc, shapes.node_template((rc.get("spec") or {}).get("headGroupSpec") or {}, head=True)
        )
        if runtime is None:
            try:
                token = await self.credentials.token(rc)
                tls_ca = await self.credentials.tls_ca(rc)
            except (CredentialsPending, ValueError) as exc:
                log.info("%s; waiting", exc)
                return None, 1.0
            state = (meta.get("annotations") or {}).get(LOCAL_PROCESSES_ANNOTATION)
            if state:
                runtime = await asyncio.to_thread(
                    LocalRayCluster.adopt,
                    json.loads(state),
                    head_template,
                    ports=self.ports,
                    base_env=self.base_env,
                    auth_token=token,
                    tls_ca=tls_ca,
                )
            else:
                runtime = LocalRayCluster(
                    meta["name"],
                    head_template,
                    uid=uid,
                    ports=self.ports,
                    log_dir=self.home / "logs" / "clusters" / f"{meta['name']}-{uid[:8]}",
                    base_env=self.base_env,
                    auth_token=token,
                    tls_ca=tls_ca,
                )
            self.clusters[uid] = runtime
        if runtime.head is not None:
            return runtime, None
        previous = rc.get("status") or {}
        if previous.get("state") == "ready" or previous.get("endpoints"):
            # The head is gone (agent or host restarted): stop claiming it runs while a new one
            # starts, which takes seconds.
            await self.mark_not_running(rc)
        try:
            await self._start_head(rc, runtime)
        except StartAborted:
            # deleted or suspended while starting: stop what started; the next pass (at once)
            # sees why and finishes the delete or the suspend
            self.clusters.pop(uid, None)
            await self._stop_runtime(uid, runtime, 1.0)
            return None, 0.0
        except (RayNodeFailedError, ClusterNotReadyError, OSError, ValueError) as exc:
            return None, await self._head_failed(rc, runtime, exc)
        self._head_failures.pop(uid, None)
        self.journal.write(uid, runtime.to_state())
        await self.writes.annotations(rc, runtime)
        return runtime, None

    async def _head_failed(self, rc: Obj, runtime: LocalRayCluster, exc: Exception) -> float | None:
        """Retry a failed head start (returns when) or, after the last attempt, fail the cluster."""
        meta = rc["metadata"]
        uid = str(meta.get("uid"))
        attempts = self._head_failures.get(uid, 0) + 1
        self._head_failures[uid] = attempts
        if attempts >= HEAD_START_ATTEMPTS:
            await self._fail(rc, runtime, f"Ray head did not start: {exc}")
            return None
        # a loaded host can make Ray's own startup wait time out: retry, as a kubelet would
        log.warning(
            "RayCluster %s/%s: head start attempt %d failed: %s; retrying",
            meta.get("namespace"),
            meta["name"],
            attempts,
            str(exc).splitlines()[0],
        )
        self.clusters.pop(uid, None)
        await self._stop_runtime(uid, runtime, 1.0)  # workers may have started early
        return 2.0 * attempts

    async def _scale_workers(self, rc: Obj, runtime: LocalRayCluster) -> dict[str, int]:
        """Start or stop workers to match the worker groups (an elastic queued cluster's only up
        to what its Workload slices admit); returns, per group, the wanted workers held back."""
        name = rc["metadata"]["name"]
        desired = shapes.desired_workers(rc.get("spec") or {})
        wanted = {group: count for group, (count, _) in desired.items()}
        run = elastic.runnable_workers(wanted, await elastic.admitted_workers(self.kube, rc))
        for group, (_, group_spec) in desired.items():
            template = shapes.node_template(group_spec, head=False)
            names = workers_to_delete(
                name, (group_spec.get("scaleStrategy") or {}).get("workersToDelete") or []
            )
            await asyncio.to_thread(runtime.scale_group, group, run[group], template, names)
        for group in {n.group for n in runtime.workers()} - set(desired):
            await asyncio.to_thread(runtime.scale_group, group, 0, shapes.NodeTemplate())
        return {group: wanted[group] - run[group] for group in wanted if wanted[group] > run[group]}

    async def _start_head(self, rc: Obj, runtime: LocalRayCluster) -> None:
        """Start the head and wait until it is ready; the workers start once ``ray start --head``
        reports the runtime started (as a person starts them once that command returns), while
        the dashboard and Jobs API come up. Starting them earlier is slower: on a small host they
        compete with the head's own start-up. Raises what :meth:`LocalRayCluster.start_head` raises."""
        uid = str(rc["metadata"].get("uid"))
        head = asyncio.ensure_future(asyncio.to_thread(runtime.start_head))
        journaled = workers_started = False
        while not head.done():
            if _stopping(self.latest(rc)):
                runtime.abort_start()
            head_node = runtime.head
            if head_node is not None and not journaled:
                journaled = True
                self.journal.write(uid, runtime.to_state())
            if head_node is not None and not workers_started:
                try:
                    if await asyncio.to_thread(processes.output_contains, head_node.handle, RAY_STARTED):
                        workers_started = True
                        await self._scale_workers(rc, runtime)
                        self.journal.write(uid, runtime.to_state())
                except Exception as exc:  # the reconcile after the head retries and reports
                    workers_started = True
                    log.warning("RayCluster %s: early worker start failed: %s", rc["metadata"]["name"], exc)
            await asyncio.wait({head}, timeout=0.1)
        head.result()

    async def _fail(self, rc: Obj, runtime: LocalRayCluster, message: str) -> None:
        meta = rc["metadata"]
        log.error("RayCluster %s/%s failed: %s", meta.get("namespace"), meta["name"], message)
        uid = str(meta.get("uid"))
        await self._stop_runtime(uid, runtime, 1.0)
        self.clusters.pop(uid, None)
        await self.writes.status(rc, failed_status(rc, message, now_rfc3339()))

    async def mark_not_running(self, rc: Obj) -> None:
        """Status, Pods and annotations of a cluster none of whose processes runs."""
        await self.pods.clear(rc, now_rfc3339())
        await self.writes.clear_annotations(rc)
        await self.writes.status(rc, stopped_status(rc, now_rfc3339()))

    async def stop_cluster(self, uid: str, rc: Obj | None = None, *, forget_state: bool = False) -> None:
        """Stop the cluster's processes, also when this agent did not start them (it was
        restarted while the cluster was being deleted or suspended): then the journal or the
        state annotation says which they are. ``forget_state`` clears that annotation."""
        runtime = self.clusters.pop(uid, None) or await self._recorded_runtime(uid, rc)
        if runtime is not None:
            await self._stop_runtime(uid, runtime, 2.0)
        else:
            self.journal.remove(uid)
        self.ports.release_prefix(f"{uid}/")
        self.autoscalers.forget(uid)
        shutil.rmtree(self.home / "autoscalers" / uid, ignore_errors=True)
        if forget_state and rc is not None:
            await self.writes.clear_annotations(rc)

    async def _stop_runtime(self, uid: str, runtime: LocalRayCluster, grace: float) -> None:
        """Stop the processes; the journal keeps whatever survived (``local down`` reports it)."""
        left = await asyncio.to_thread(runtime.stop, grace)
        if left:
            self.journal.write(uid, runtime.to_state())
        else:
            self.journal.remove(uid)

    async def _recorded_runtime(self, uid: str, rc: Obj | None) -> LocalRayCluster | None:
        raw = self.journal.read(uid)
        if raw is None and rc is not None:
            raw = (rc["metadata"].get("annotations") or {}).get(LOCAL_PROCESSES_ANNOTATION)
        if not raw:
            return None
        try:
            return await asyncio.to_thread(
                LocalRayCluster.adopt, json.loads(raw), shapes.NodeTemplate(), ports=self.ports
            )
        except (OSError, ValueError, KeyError) as exc:
            log.warning("could not read the recorded processes of cluster %s: %s", uid, exc)
            return None

    async def clean_orphans(self, live_uids: set[str]) -> None:
        """Stop clusters in the journal whose RayCluster no longer exists (deleted while we were down)."""
        for uid in self.journal.uids():
            if uid in live_uids:
                continue
            try:
                state = json.loads(self.journal.read(uid) or "{}")
                runtime = LocalRayCluster.adopt(state, shapes.NodeTemplate(), ports=self.ports)
                await self._stop_runtime(uid, runtime, 2.0)
                log.warning("stopped orphaned Ray cluster %s (its RayCluster was deleted)", state.get("name"))
            except (OSError, ValueError, KeyError) as exc:
                log.warning("could not clean orphan %s: %s", uid, exc)
                self.journal.remove(uid)
            self.ports.release_prefix(f"{uid}/")

    async def shutdown(self, objects: Mapping[str, Obj], grace: float = 3.0) -> None:
        """Stop every Ray process this runner runs (objects stay; ``local up`` restarts them).

        Their RayClusters (``objects``, by uid) stop claiming ``ready`` and their Pods go, so
        nobody reads a stopped cluster as running (or re-adopts it) until an agent starts it again."""
        for uid, cluster in list(self.clusters.items()):
            await self._stop_runtime(uid, cluster, grace)
            self.ports.release_prefix(f"{uid}/")
            rc = objects.get(uid)
            if rc is not None:
                try:
                    await self.mark_not_running(rc)
                except errors.KubeError as exc:
                    log.warning(
                        "RayCluster %s: could not record that it stopped: %s", rc["metadata"]["name"], exc
                    )
        self.clusters.clear()
