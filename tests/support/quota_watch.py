"""A test-side watcher that checks admitted quota at every Workload resourceVersion.

:class:`QuotaWatcher` follows every Workload event from a real API server (its own thread and
client, independent of the operator), keeps what each admitted Workload charges, and records a
violation whenever a ClusterQueue standing alone, or a whole cohort, is charged beyond its nominal
quota. It also counts admissions per Workload uid (transitions from "no admission" to "admitted"),
so a test can tell a Workload admitted twice. It checks; it never writes.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from codeflare.k8s.quantity import milli_value as parse_quantity
from tests.support.apiserver import ServerProcess
from tests.support.queue_objects import admission as admission_of

Obj = dict[str, Any]


def charged(admission: Obj, resource: str) -> int:
    """Milli-units of ``resource`` an admission charges, over all its pod sets."""
    return sum(
        parse_quantity((p.get("resourceUsage") or {}).get(resource, "0"))
        for p in admission.get("podSetAssignments") or []
    )


class QuotaWatcher:
    """Watches Workloads and records every moment where admitted usage exceeds quota.

    ``nominal`` maps ClusterQueue name to its nominal quota of ``resource`` in milli-units;
    ``cohorts`` maps ClusterQueue name to its cohort. A queue in a cohort may borrow, so the check
    for it is on the cohort's total; a queue in no cohort is checked on its own.
    """

    def __init__(
        self,
        server: ServerProcess,
        nominal: dict[str, int],
        cohorts: dict[str, str] | None = None,
        resource: str = "cpu",
    ) -> None:
        self.nominal = nominal
        self.cohorts = cohorts or {}
        self.resource = resource
        self.violations: list[str] = []
        self.events = 0
        self.admissions: Counter[str] = Counter()  # workload uid -> times it became admitted
        self.peak: dict[str, int] = {}  # ClusterQueue or cohort -> highest charge seen
        self._usage: dict[str, tuple[str, int]] = {}  # workload uid -> (ClusterQueue, milli)
        self._stop = threading.Event()
        self._api = k8s.CustomObjectsApi(k8s_config.new_client_from_config(str(server.kubeconfig)))
        self._thread = threading.Thread(target=self._run, daemon=True, name="quota-watcher")

    def start(self) -> QuotaWatcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        rv = "0"
        while not self._stop.is_set():
            stream = k8s_watch.Watch()
            try:
                for event in stream.stream(
                    self._api.list_cluster_custom_object,
                    "kueue.x-k8s.io",
                    "v1beta2",
                    "workloads",
                    resource_version=rv,
                    timeout_seconds=2,
                ):
                    obj = event["object"]
                    if event["type"] == "ERROR" or not isinstance(obj, dict) or "metadata" not in obj:
                        rv = self._restart()
                        break
                    rv = obj["metadata"]["resourceVersion"]
                    self._observe(event["type"], obj)
                    if self._stop.is_set():
                        stream.stop()
            except ApiException as exc:
                if exc.status != 410:
                    raise
                rv = self._restart()

    def _restart(self) -> str:
        """The watch expired: start over from a fresh list (every object comes again as ADDED)."""
        self._usage.clear()
        return "0"

    def _observe(self, event_type: str, obj: Obj) -> None:
        self.events += 1
        uid = str(obj["metadata"].get("uid") or obj["metadata"]["name"])
        admission = None if event_type == "DELETED" else admission_of(obj)
        before = self._usage.pop(uid, None)
        if admission is not None:
            self._usage[uid] = (str(admission["clusterQueue"]), charged(admission, self.resource))
            if before is None:
                self.admissions[uid] += 1
        self._check(obj["metadata"]["resourceVersion"])

    def _check(self, rv: str) -> None:
        by_group: dict[str, int] = {}
        for cq, milli in self._usage.values():
            group = self._group(cq)
            by_group[group] = by_group.get(group, 0) + milli
        for group, used in by_group.items():
            self.peak[group] = max(self.peak.get(group, 0), used)
            limit = self._limit(group)
            if used > limit:
                self.violations.append(f"{group} charged {used}m > {limit}m at resourceVersion {rv}")

    def _group(self, cluster_queue: str) -> str:
        cohort = self.cohorts.get(cluster_queue)
        return f"cohort {cohort}" if cohort else f"ClusterQueue {cluster_queue}"

    def _limit(self, group: str) -> int:
        return sum(quota for cq, quota in self.nominal.items() if self._group(cq) == group)

    @property
    def admitted_twice(self) -> dict[str, int]:
        """Workload uids that became admitted more than once."""
        return {uid: n for uid, n in self.admissions.items() if n > 1}
