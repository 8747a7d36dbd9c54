"""The local node agent: plays kubelet + KubeRay on one host with real Ray processes.

It registers the host as a Node (capacity, GPU labels) and heartbeats its Lease; for every
unsuspended RayCluster it runs a :class:`LocalRayCluster`, represents each Ray node as a Pod
with real status, and writes the RayCluster status as KubeRay does. The processes' state (pids,
start times, ports) is written into the RayCluster's annotation, so a restarted agent re-adopts
what still runs and cleans up the rest; a journal in the agent's home covers clusters deleted
while it was down. It only ever stops processes it started, by pid. RayJobs: :mod:`rayjobs`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.informer import Informer
from codeflare.local import node_info, processes, shapes
from codeflare.local.cluster_runner import ClusterNotReadyError, LocalRayCluster, RayNodeFailedError
from codeflare.local.ports import PortAllocator
from codeflare.local.ray_node import RAY_STARTED

log = logging.getLogger(__name__)

Obj = dict[str, Any]
FINALIZER = "local.codeflare.dev/ray-processes"
STATE_ANNOTATION = "local.codeflare.dev/processes"
DASHBOARD_ANNOTATION = "local.codeflare.dev/dashboard-url"
FIELD_MANAGER = "codeflare-local-agent"
HEAD_START_ATTEMPTS = 3
#: How soon a cluster that is not ready yet is looked at again (each look is one HTTP call to
#: its dashboard plus API reads; status is only written when it changed).
_NOT_READY_POLL_S = 0.25


def ray_env() -> dict[str, str]:
    """The environment of Ray nodes: ours, with this interpreter's bin directory first on PATH, so a
    job's ``python ...`` entrypoint runs with the Python that has Ray installed."""
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(
        [bin_dir, *[p for p in env.get("PATH", "").split(os.pathsep) if p != bin_dir]]
    )
    return env


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class NodeAgent:
    """One agent per host; :meth:`run` until cancelled, then :meth:`shutdown`."""

    def __init__(
        self,
        kube: AsyncKube,
        home: Path,
        *,
        node_name: str | None = None,
        resync: float = 2.0,
        heartbeat: float = 10.0,
        ports: PortAllocator | None = None,
    ) -> None:
        self.kube = kube
        self.home = Path(home)
        self.node_name = node_name or socket.gethostname().lower() or "local-node"
        self.resync = resync
        self.heartbeat = heartbeat
        # The host-wide registry, not one per home: agents of different homes (two `local up`s,
        # parallel test runs) must never hand out the same port.
        self.ports = ports or PortAllocator()
        self.journal = self.home / "clusters"
        self.journal.mkdir(parents=True, exist_ok=True)
        self.clusters: dict[str, LocalRayCluster] = {}
        self._written: dict[tuple[str, str, str], Any] = {}
        self._head_failures: dict[str, int] = {}
        self._dirty: set[tuple[str, str]] = set()
        self._running: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self.rayclusters = Informer(kube, kinds.RAYCLUSTER, self._on_cluster)
        from codeflare.local.rayjobs import RayJobRunner

        self.rayjobs = RayJobRunner(self)

    # -- node ------------------------------------------------------------------------------------
    def node_object(self) -> Obj:
        capacity = node_info.detect_node_capacity()
        allocatable = dict(capacity.allocatable)
        allocatable["cpu"] = str(capacity.cpus * node_info.cpu_overcommit())
        labels = {
            "kubernetes.io/hostname": self.node_name,
            "kubernetes.io/os": "linux",
            "node-role.kubernetes.io/local": "",
            "codeflare.dev/local-agent": "true",
            **capacity.labels,
        }
        now = now_rfc3339()
        conditions = [
            {
                "type": "Ready",
                "status": "True",
                "reason": "AgentReady",
                "message": "codeflare local agent is running",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            },
            {
                "type": "MemoryPressure",
                "status": "False",
                "reason": "AgentHasSufficientMemory",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            },
            {
                "type": "DiskPressure",
                "status": "False",
                "reason": "AgentHasNoDiskPressure",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            },
        ]
        return {
            "metadata": {"name": self.node_name, "labels": labels},
            "spec": {},
            "status": {
                "capacity": allocatable,
                "allocatable": allocatable,
                "conditions": conditions,
                "addresses": [
                    {"type": "InternalIP", "address": shapes.LOOPBACK},
                    {"type": "Hostname", "address": self.node_name},
                ],
                "nodeInfo": {
                    "kubeletVersion": "codeflare-local",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                    "containerRuntimeVersion": "ray-processes",
                },
            },
        }

    async def register_node(self) -> None:
        node = self.node_object()
        existing = await self.kube.find(kinds.NODE, self.node_name)
        if existing is None:
            with contextlib.suppress(errors.AlreadyExists):
                await self.kube.create(kinds.NODE, {"metadata": node["metadata"], "spec": {}})
        await self.kube.patch(
            kinds.NODE, self.node_name, {"metadata": {"labels": node["metadata"]["labels"]}}
        )
        await self.kube.patch(kinds.NODE, self.node_name, {"status": node["status"]}, status=True)
        log.info("registered node %s", self.node_name)

    async def _heartbeat_loop(self) -> None:
        while True:
            try:
                await self._renew_lease()
                node = self.node_object()
                await self.kube.patch(
                    kinds.NODE,
                    self.node_name,
                    {"status": {"conditions": node["status"]["conditions"]}},
                    status=True,
                )
            except errors.KubeError as exc:
                log.warning("heartbeat failed: %s", exc)
            await asyncio.sleep(self.heartbeat)

    async def _renew_lease(self) -> None:
        spec = {"holderIdentity": self.node_name, "leaseDurationSeconds": 40, "renewTime": _micro_now()}
        lease = await self.kube.find(kinds.LEASE, self.node_name, "kube-node-lease")
        if lease is None:
            with contextlib.suppress(errors.AlreadyExists):
                await self.kube.create(
                    kinds.LEASE,
                    {"metadata": {"name": self.node_name, "namespace": "kube-node-lease"}, "spec": spec},
                )
            return
        await self.kube.patch(kinds.LEASE, self.node_name, {"spec": spec}, "kube-node-lease")

    # -- event plumbing --------------------------------------------------------------------------
    def _on_cluster(self, event: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        self.mark(meta.get("namespace", ""), meta["name"])

    def mark(self, namespace: str, name: str) -> None:
        self._dirty.add((namespace, name))
        self._wake.set()

    async def run(self) -> None:
        """Register, adopt, then reconcile until cancelled."""
        await self.register_node()
        tasks = [
            asyncio.create_task(self._heartbeat_loop()),
            asyncio.create_task(self.rayclusters.run()),
            *self.rayjobs.tasks(),
        ]
        try:
            await self.rayclusters.synced.wait()
            await self._clean_orphans()
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.resync)
                self._wake.clear()
                if not self._dirty:
                    self._dirty.update(self.rayclusters.cache)
                for ref in sorted(self._dirty):
                    task = self._running.get(ref)
                    if task is None or task.done():
                        self._dirty.discard(ref)
                        self._running[ref] = asyncio.create_task(self._reconcile_safely(*ref))
        finally:
            for task in tasks:
                task.cancel()
            for task in self._running.values():
                task.cancel()
            for task in [*tasks, *self._running.values()]:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def shutdown(self, grace: float = 3.0) -> None:
        """Stop every Ray process this agent runs (objects stay; ``local up`` restarts them).

        Their RayClusters stop claiming ``ready`` and their Pods go, so nobody reads a stopped
        cluster as running (or re-adopts it) until an agent starts it again."""
        by_uid = {str(o["metadata"].get("uid")): o for o in self.rayclusters.cache.values()}
        for uid, cluster in list(self.clusters.items()):
            await asyncio.to_thread(cluster.stop, grace)
            self.ports.release_prefix(f"{uid}/")
            self._journal_remove(uid)
            rc = by_uid.get(uid)
            if rc is not None:
                try:
                    await self._mark_not_running(rc)
                except errors.KubeError as exc:
                    log.warning(
                        "RayCluster %s: could not record that it stopped: %s", rc["metadata"]["name"], exc
                    )
        self.clusters.clear()

    async def _mark_not_running(self, rc: Obj) -> None:
        """Status, Pods and annotations of a cluster none of whose processes runs."""
        await self._sync_pods(rc, None, [], {})
        await self._clear_annotations(rc)
        desired = sum(c for c, _ in shapes.desired_workers(rc.get("spec") or {}).values())
        status = shapes.cluster_status(
            rc,
            state="",
            ready_workers=0,
            desired_workers=desired,
            head_ready=False,
            endpoints=None,
            now=now_rfc3339(),
        )
        status.pop("state")
        await self._write_status(rc, {**status, "endpoints": None, "head": None})

    async def _clean_orphans(self) -> None:
        """Stop clusters in the journal whose RayCluster no longer exists (deleted while we were down)."""
        live = {str(o["metadata"].get("uid")) for o in self.rayclusters.cache.values()}
        for path in sorted(self.journal.glob("*.json")):
            uid = path.stem
            if uid in live:
                continue
            try:
                state = json.loads(path.read_text())
                runtime = LocalRayCluster.adopt(state, shapes.NodeTemplate(), ports=self.ports)
                await asyncio.to_thread(runtime.stop, 2.0)
                log.warning("stopped orphaned Ray cluster %s (its RayCluster was deleted)", state.get("name"))
            except (OSError, ValueError, KeyError) as exc:
                log.warning("could not clean orphan %s: %s", uid, exc)
            self.ports.release_prefix(f"{uid}/")
            path.unlink(missing_ok=True)

    def _journal_write(self, uid: str, runtime: LocalRayCluster) -> None:
        path = self.journal / f"{uid}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(runtime.to_state()))
        tmp.replace(path)

    def _journal_remove(self, uid: str) -> None:
        (self.journal / f"{uid}.json").unlink(missing_ok=True)

    # -- reconcile -------------------------------------------------------------------------------
    async def _reconcile_safely(self, namespace: str, name: str) -> None:
        try:
            await self.reconcile(namespace, name)
        except errors.KubeError as exc:
            log.warning("RayCluster %s/%s: %s; will retry", namespace, name, exc)
            self.mark(namespace, name)
        except Exception:
            log.exception("RayCluster %s/%s: reconcile failed", namespace, name)
            self.mark(namespace, name)

    async def reconcile(self, namespace: str, name: str) -> None:
        rc = self.rayclusters.cache.get((namespace, name))
        if rc is None:
            return
        meta = rc["metadata"]
        uid = str(meta.get("uid"))
        if meta.get("deletionTimestamp"):
            await self._stop_cluster(uid, rc)
            await self._drop_finalizer(rc)
            return
        if FINALIZER not in (meta.get("finalizers") or []):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                name,
                {
                    "metadata": {
                        "finalizers": [*(meta.get("finalizers") or []), FINALIZER],
                        "resourceVersion": meta.get("resourceVersion"),
                    }
                },
                namespace,
            )
            return
        spec = rc.get("spec") or {}
        if spec.get("suspend"):
            await self._stop_cluster(uid, rc, forget_state=True)
            await self._sync_pods(rc, None, [], {})
            await self._write_status(
                rc,
                shapes.cluster_status(
                    rc,
                    state="suspended",
                    ready_workers=0,
                    desired_workers=0,
                    head_ready=False,
                    endpoints=None,
                    now=now_rfc3339(),
                ),
            )
            return
        runtime = await self._runtime(rc)
        if runtime is None:
            return
        failed = await asyncio.to_thread(runtime.forget_dead)
        if any(f.node == "head" for f in failed):
            await self._fail(rc, runtime, f"Ray head process exited with code {failed[0].exit_code}")
            return
        desired = await self._scale_workers(rc, runtime)
        self._journal_write(uid, runtime)
        ready = set(await asyncio.to_thread(runtime.ready_nodes))
        await self._sync_pods(rc, runtime, failed, {"ready": ready})
        total = sum(c for c, _ in desired.values())
        ready_workers = len([n for n in runtime.workers() if n.name in ready])
        head_ready = "head" in ready
        state = "ready" if head_ready and ready_workers >= total else ""
        status = shapes.cluster_status(
            rc,
            state=state,
            ready_workers=ready_workers,
            desired_workers=total,
            head_ready=head_ready,
            endpoints=runtime.endpoints.as_status(),
            now=now_rfc3339(),
        )
        if not state:
            status.pop("state")
        await self._write_annotations(rc, runtime)
        await self._write_status(rc, status)
        if not state:
            await asyncio.sleep(_NOT_READY_POLL_S)
            self.mark(namespace, name)

    async def _runtime(self, rc: Obj) -> LocalRayCluster | None:
        meta = rc["metadata"]
        uid = str(meta.get("uid"))
        runtime = self.clusters.get(uid)
        head_template = shapes.node_template((rc.get("spec") or {}).get("headGroupSpec") or {}, head=True)
        if runtime is None:
            state = (meta.get("annotations") or {}).get(STATE_ANNOTATION)
            if state:
                runtime = await asyncio.to_thread(
                    LocalRayCluster.adopt,
                    json.loads(state),
                    head_template,
                    ports=self.ports,
                    base_env=ray_env(),
                )
            else:
                runtime = LocalRayCluster(
                    meta["name"],
                    head_template,
                    uid=uid,
                    ports=self.ports,
                    log_dir=self.home / "logs" / "clusters" / f"{meta['name']}-{uid[:8]}",
                    base_env=ray_env(),
                )
            self.clusters[uid] = runtime
        if runtime.head is None:
            previous = rc.get("status") or {}
            if previous.get("state") == "ready" or previous.get("endpoints"):
                # The head is gone (agent or host restarted): stop claiming it runs while a
                # new one starts, which takes seconds.
                await self._mark_not_running(rc)
            try:
                await self._start_head(rc, runtime)
            except (RayNodeFailedError, ClusterNotReadyError, OSError, ValueError) as exc:
                attempts = self._head_failures.get(uid, 0) + 1
                self._head_failures[uid] = attempts
                if attempts < HEAD_START_ATTEMPTS:
                    # a loaded host can make Ray's own startup wait time out: retry, as a kubelet would
                    log.warning(
                        "RayCluster %s/%s: head start attempt %d failed: %s; retrying",
                        meta.get("namespace"),
                        meta["name"],
                        attempts,
                        str(exc).splitlines()[0],
                    )
                    self.clusters.pop(uid, None)
                    await asyncio.to_thread(runtime.stop, 1.0)  # workers may have started early
                    await asyncio.sleep(2.0 * attempts)
                    self.mark(meta.get("namespace", ""), meta["name"])
                    return None
                await self._fail(rc, runtime, f"Ray head did not start: {exc}")
                return None
            self._head_failures.pop(uid, None)
            self._journal_write(uid, runtime)
            await self._write_annotations(rc, runtime)
        return runtime

    async def _scale_workers(self, rc: Obj, runtime: LocalRayCluster) -> dict[str, tuple[int, Obj]]:
        """Start or stop workers to match the worker groups; returns the desired counts."""
        name = rc["metadata"]["name"]
        desired = shapes.desired_workers(rc.get("spec") or {})
        for group, (count, group_spec) in desired.items():
            template = shapes.node_template(group_spec, head=False)
            to_delete = (group_spec.get("scaleStrategy") or {}).get("workersToDelete") or []
            await asyncio.to_thread(runtime.scale_group, group, count, template, _node_names(name, to_delete))
        for group in {n.group for n in runtime.workers()} - set(desired):
            await asyncio.to_thread(runtime.scale_group, group, 0, shapes.NodeTemplate())
        return desired

    async def _start_head(self, rc: Obj, runtime: LocalRayCluster) -> None:
        """Start the head and wait until it is ready; the workers start once ``ray start --head``
        reports the runtime started (as a person starts them once that command returns), while
        the dashboard and Jobs API come up. Starting them earlier is slower: on a small host they
        compete with the head's own start-up. Raises what :meth:`LocalRayCluster.start_head` raises."""
        uid = str(rc["metadata"].get("uid"))
        head = asyncio.ensure_future(asyncio.to_thread(runtime.start_head))
        journaled = workers_started = False
        while not head.done():
            head_node = runtime.head
            if head_node is not None and not journaled:
                journaled = True
                self._journal_write(uid, runtime)
            if head_node is not None and not workers_started:
                try:
                    if await asyncio.to_thread(processes.output_contains, head_node.handle, RAY_STARTED):
                        workers_started = True
                        await self._scale_workers(rc, runtime)
                        self._journal_write(uid, runtime)
                except Exception as exc:  # the reconcile after the head retries and reports
                    workers_started = True
                    log.warning("RayCluster %s: early worker start failed: %s", rc["metadata"]["name"], exc)
            await asyncio.wait({head}, timeout=0.1)
        head.result()

    async def _fail(self, rc: Obj, runtime: LocalRayCluster, message: str) -> None:
        log.error(
            "RayCluster %s/%s failed: %s", rc["metadata"].get("namespace"), rc["metadata"]["name"], message
        )
        await asyncio.to_thread(runtime.stop, 1.0)
        uid = str(rc["metadata"].get("uid"))
        self.clusters.pop(uid, None)
        self._journal_remove(uid)
        await self._write_status(
            rc,
            shapes.cluster_status(
                rc,
                state="failed",
                ready_workers=0,
                desired_workers=0,
                head_ready=False,
                endpoints=None,
                now=now_rfc3339(),
                reason=message,
            ),
        )

    async def _stop_cluster(self, uid: str, rc: Obj | None = None, *, forget_state: bool = False) -> None:
        """Stop the cluster's processes, also when this agent did not start them (it was
        restarted while the cluster was being deleted or suspended): then the journal or the
        state annotation says which they are. ``forget_state`` clears that annotation."""
        runtime = self.clusters.pop(uid, None) or await self._recorded_runtime(uid, rc)
        if runtime is not None:
            await asyncio.to_thread(runtime.stop, 2.0)
        self.ports.release_prefix(f"{uid}/")
        self._journal_remove(uid)
        if forget_state and rc is not None:
            await self._clear_annotations(rc)

    async def _recorded_runtime(self, uid: str, rc: Obj | None) -> LocalRayCluster | None:
        path = self.journal / f"{uid}.json"
        raw = path.read_text() if path.exists() else None
        if raw is None and rc is not None:
            raw = (rc["metadata"].get("annotations") or {}).get(STATE_ANNOTATION)
        if not raw:
            return None
        try:
            state = json.loads(raw)
            return await asyncio.to_thread(
                LocalRayCluster.adopt, state, shapes.NodeTemplate(), ports=self.ports
            )
        except (OSError, ValueError, KeyError) as exc:
            log.warning("could not read the recorded processes of cluster %s: %s", uid, exc)
            return None

    async def _clear_annotations(self, rc: Obj) -> None:
        meta = rc["metadata"]
        present = set(meta.get("annotations") or {}) & {STATE_ANNOTATION, DASHBOARD_ANNOTATION}
        self._written.pop(("annotations", meta.get("namespace", ""), meta["name"]), None)
        if not present:
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"annotations": dict.fromkeys(present)}},
                meta.get("namespace"),
            )

    async def _drop_finalizer(self, rc: Obj) -> None:
        meta = rc["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        if finalizers == list(meta.get("finalizers") or []):
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}},
                meta.get("namespace"),
            )

    async def _write_status(self, rc: Obj, status: Obj) -> None:
        meta = rc["metadata"]
        key = ("status", meta.get("namespace", ""), meta["name"])
        comparable = {k: v for k, v in status.items() if k != "lastUpdateTime"}
        comparable["conditions"] = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions", [])
        ]
        if self._written.get(key) == comparable:
            return
        body = {"status": {**status, **({"state": None} if "state" not in status else {})}}
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(kinds.RAYCLUSTER, meta["name"], body, meta.get("namespace"), status=True)
            self._written[key] = comparable

    async def _write_annotations(self, rc: Obj, runtime: LocalRayCluster) -> None:
        meta = rc["metadata"]
        annotations = {
            STATE_ANNOTATION: json.dumps(runtime.to_state(), sort_keys=True),
            DASHBOARD_ANNOTATION: runtime.dashboard_url,
        }
        key = ("annotations", meta.get("namespace", ""), meta["name"])
        if self._written.get(key) == annotations:
            return
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(
                kinds.RAYCLUSTER,
                meta["name"],
                {"metadata": {"annotations": annotations}},
                meta.get("namespace"),
            )
            self._written[key] = annotations

    async def _sync_pods(
        self, rc: Obj, runtime: LocalRayCluster | None, failed: list[Any], info: Obj
    ) -> None:
        """Make the Pod objects of ``rc`` mirror its Ray nodes (failed nodes become Failed pods)."""
        meta = rc["metadata"]
        namespace, cluster = meta.get("namespace", ""), meta["name"]
        spec = rc.get("spec") or {}
        wanted: dict[str, Obj] = {}
        now = now_rfc3339()
        if runtime is not None:
            groups = {str(g.get("groupName")): g for g in spec.get("workerGroupSpecs") or []}
            for node in runtime.nodes.values():
                head = node.role == "head"
                group_spec = spec.get("headGroupSpec") or {} if head else groups.get(node.group, {})
                started = datetime.datetime.fromtimestamp(node.handle.start_time, datetime.UTC).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"
                )
                pod = shapes.pod_for(
                    rc,
                    node.name,
                    node.group,
                    head,
                    group_spec.get("template") or {},
                    self.node_name,
                    phase="Running",
                    ready=node.name in info.get("ready", set()),
                    pid=node.handle.pid,
                    started=started,
                )
                wanted[pod["metadata"]["name"]] = pod
        for exit_info in failed:
            head = exit_info.node == "head"
            group = exit_info.node.rpartition("-")[0]
            pod = shapes.pod_for(
                rc,
                exit_info.node,
                group,
                head,
                {},
                self.node_name,
                phase="Failed",
                ready=False,
                exit_code=exit_info.exit_code,
                finished=now,
            )
            wanted[pod["metadata"]["name"]] = pod
            log.warning(
                "RayCluster %s/%s: node %s exited with code %s",
                namespace,
                cluster,
                exit_info.node,
                exit_info.exit_code,
            )
        existing = await self.kube.list(kinds.POD, namespace, labels={"ray.io/cluster": cluster})
        for pod in existing:
            pod_name = pod["metadata"]["name"]
            if pod_name not in wanted and (pod.get("status") or {}).get("phase") != "Failed":
                with contextlib.suppress(errors.NotFound):
                    await self.kube.delete(kinds.POD, pod_name, namespace)
                self._written.pop(("pod", namespace, pod_name), None)
        for pod_name, pod in wanted.items():
            key = ("pod", namespace, pod_name)
            comparable = json.dumps(pod, sort_keys=True)
            if self._written.get(key) == comparable:
                continue
            status = pod.pop("status")
            try:
                await self.kube.apply(kinds.POD, pod, field_manager=FIELD_MANAGER)
                await self.kube.patch(kinds.POD, pod_name, {"status": status}, namespace, status=True)
            except errors.NotFound:
                continue
            self._written[key] = comparable


def _node_names(cluster: str, pods: list[str]) -> list[str]:
    """Ray node names of the pods in workersToDelete (``<c>-<group>-worker-<i>`` -> ``<group>-<i>``)."""
    out = []
    prefix = f"{cluster}-"
    for pod in pods:
        if pod.startswith(prefix) and "-worker-" in pod:
            group, _, index = pod[len(prefix) :].rpartition("-worker-")
            out.append(f"{group}-{index}")
    return out
