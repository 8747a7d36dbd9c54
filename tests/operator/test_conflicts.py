"""A concurrent writer causing 409 conflicts does not break any controller.

While 60 RayClusters flow through two ClusterQueues sharing a cohort, a second client keeps
changing labels and annotations of every Workload, RayCluster, ClusterQueue and LocalQueue, so
the operator's writes keep meeting stale resourceVersions. Everything must still converge (each
cluster runs exactly when its Workload is admitted, the cohort stays full), quota is never
exceeded, nothing is admitted twice, and the other writer's labels survive the operator's writes.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from codeflare.kube import config, errors, kinds
from codeflare.kube.client import Kube
from codeflare.kube.kinds import Kind
from tests.support.apiserver import ServerProcess
from tests.support.queue_flow import queueing_run
from tests.support.queue_objects import cluster_admissions, delete_admitted, raycluster, wait_settled

QUEUES = {"team-a": ("cq-a", 6), "team-b": ("cq-b", 4)}  # namespace: (ClusterQueue, CPUs)
COHORT_SLOTS = 10
CLUSTERS = 60
TOUCHED: tuple[Kind, ...] = (kinds.WORKLOAD, kinds.RAYCLUSTER, kinds.CLUSTER_QUEUE, kinds.LOCAL_QUEUE)
TICK = "test.codeflare.dev/tick"


class MetadataWriter(threading.Thread):
    """Keeps changing a label and an annotation on every object of ``touched``, as fast as it can."""

    def __init__(self, server: ServerProcess, touched: tuple[Kind, ...], key: str = TICK) -> None:
        super().__init__(daemon=True, name="metadata-writer")
        self.touched = touched
        self.key = key
        self.kube = Kube(config.from_kubeconfig(server.kubeconfig), field_manager="someone-else")
        self.stop_flag = threading.Event()
        self.writes = 0
        self.last: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) -> last tick written

    def run(self) -> None:
        for tick in itertools.count():
            for kind in self.touched:
                for obj in self.kube.list(kind, all_namespaces=True):
                    if self.stop_flag.is_set():
                        return
                    self._touch(kind, obj, str(tick))

    def _touch(self, kind: Kind, obj: dict[str, Any], tick: str) -> None:
        meta = obj["metadata"]
        body = {"metadata": {"labels": {self.key: tick}, "annotations": {self.key: f"tick {tick}"}}}
        try:
            self.kube.patch(kind, meta["name"], body, meta.get("namespace"))
        except errors.NotFound:
            return
        self.writes += 1
        self.last[(kind.kind, meta.get("namespace") or "", meta["name"])] = tick

    def finish(self) -> None:
        self.stop_flag.set()
        self.join(30)
        self.kube.close()


class ReactiveWriter(MetadataWriter):
    """Touches a Workload and its RayCluster right after the operator changed the Workload's status.

    That is the moment the operator goes on to write the RayCluster (unsuspend) from its cache, so
    this writer makes those writes meet a newer resourceVersion, as a competing controller would.
    """

    def __init__(self, server: ServerProcess) -> None:
        super().__init__(server, (kinds.WORKLOAD, kinds.RAYCLUSTER), key=TICK + "-react")
        self._api = k8s.CustomObjectsApi(k8s_config.new_client_from_config(str(server.kubeconfig)))
        self._seen: dict[str, Any] = {}

    def run(self) -> None:
        rv = "0"
        tick = itertools.count()
        while not self.stop_flag.is_set():
            stream = k8s_watch.Watch()
            for event in stream.stream(
                self._api.list_cluster_custom_object,
                "kueue.x-k8s.io",
                kinds.WORKLOAD.version,  # the storage version: no conversion webhook in this test
                "workloads",
                resource_version=rv,
                timeout_seconds=1,
            ):
                obj = event["object"]
                if event["type"] not in ("ADDED", "MODIFIED") or not isinstance(obj, dict):
                    continue
                rv = obj["metadata"]["resourceVersion"]
                uid = obj["metadata"]["uid"]
                if self._seen.get(uid) == obj.get("status"):
                    continue  # our own metadata change
                self._seen[uid] = obj.get("status")
                now = str(next(tick))
                self._touch(kinds.WORKLOAD, obj, now)
                for ref in obj["metadata"].get("ownerReferences") or []:
                    job = {"metadata": {"name": ref["name"], "namespace": obj["metadata"]["namespace"]}}
                    self._touch(kinds.RAYCLUSTER, job, now)
                if self.stop_flag.is_set():
                    stream.stop()


def converged(kube: Kube) -> str:
    """'' once every cluster has one Workload, runs iff admitted, and the cohort is as full as it can be."""
    clusters = cluster_admissions(kube)
    if isinstance(clusters, str):
        return clusters
    admitted = sum(in_quota for _, in_quota in clusters)
    if admitted != min(COHORT_SLOTS, len(clusters)):
        return f"{admitted} admitted of {len(clusters)}"
    return ""


def test_concurrent_metadata_writer_does_not_break_queueing(
    fresh_apiserver: ServerProcess, kube: Kube, tmp_path: Path
) -> None:
    with queueing_run(
        fresh_apiserver, kube, QUEUES, tmp_path / "operator.log", cohort="pool", verbosity=2
    ) as run:
        # one writer per kind, so each object is touched every few milliseconds
        writers = [MetadataWriter(fresh_apiserver, (kind,)) for kind in TOUCHED] + [
            ReactiveWriter(fresh_apiserver)
        ]
        for writer in writers:
            writer.start()
        namespaces = list(QUEUES)
        try:
            for i in range(CLUSTERS):
                kube.create(kinds.RAYCLUSTER, raycluster(f"rc-{i:02d}", namespaces[i % 2]))
            for _ in range(2):  # two waves of finished work while the writer keeps going
                wait_settled(lambda: converged(kube), what="convergence under conflicts")
                delete_admitted(kube)
            wait_settled(lambda: converged(kube), what="final convergence")
        finally:
            for writer in writers:
                writer.finish()

    operator = run.operator
    assert sum(w.writes for w in writers) > 500
    conflicts = operator.log().count("409, b'Conflict'")
    assert conflicts >= 2, f"only {conflicts} conflicts: the test did not exercise them"
    run.assert_quota_kept()
    assert len(run.watcher.admissions) == 3 * COHORT_SLOTS
    # the operator's own writes kept the other writer's metadata (no blind overwrite)
    for kind in TOUCHED:
        for obj in kube.list(kind, all_namespaces=True):
            meta = obj["metadata"]
            expected = writers[TOUCHED.index(kind)].last.get(
                (kind.kind, meta.get("namespace") or "", meta["name"])
            )
            if expected is not None:
                assert meta["labels"][TICK] == expected, (kind.kind, meta["name"])
                assert meta["annotations"][TICK] == f"tick {expected}"
    assert "operator component failed" not in operator.log() and operator.log().count("synced") == 1
