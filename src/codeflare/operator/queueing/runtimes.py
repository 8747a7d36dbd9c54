"""Observed run times of finished Workloads, per LocalQueue and shape, kept in a ConfigMap.

The start-time forecast needs an expected run time for admitted workloads that declare none
(no ``maximumExecutionTimeSeconds``, no RayJob ``activeDeadlineSeconds``): the median of the
last runs of workloads from the same LocalQueue with the same shape (pod sets, requests,
placement) is the best guess. :class:`RunTimeHistory` holds them (bounded: a few runs per entry,
a bounded number of entries, oldest dropped) and reads and writes its ConfigMap document, so a
restarted operator keeps what it learned. It observes and remembers; it writes nothing itself
(the forecasting loop persists it) and decides no admission.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
from collections import OrderedDict
from collections.abc import Hashable

from codeflare.k8s.conditions import conditions_of, find_condition
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.k8s.types import Obj

log = logging.getLogger(__name__)

HISTORY_CONFIGMAP = "codeflare-run-times"  # in the operator's namespace
HISTORY_KEY = "runtimes.json"
RUNS_KEPT = 10  # per LocalQueue and shape
ENTRIES_KEPT = 2000  # LocalQueue-and-shape entries (the least recently observed dropped)


def shape_digest(shape: Hashable) -> str:
    """A short stable name for a workload shape (the engine's ``workload_shape``)."""
    return hashlib.sha256(repr(shape).encode()).hexdigest()[:16]


def entry_key(namespace: str, queue: str, digest: str) -> str:
    return f"{namespace}/{queue}/{digest}"


def finished_run(workload: Obj) -> tuple[float, float] | None:
    """(finished at, seconds admitted) of a Workload finished after an admission; else None."""
    conds = conditions_of(workload)
    finished = find_condition(conds, "Finished") or {}
    reserved = find_condition(conds, "QuotaReserved") or {}
    if finished.get("status") != "True" or reserved.get("status") != "True":
        return None
    end = epoch_seconds(finished.get("lastTransitionTime"))
    start = epoch_seconds(reserved.get("lastTransitionTime"))
    if end is None or start is None or end < start:
        return None
    return end, end - start


class RunTimeHistory:
    """Recent run times by ``namespace/queue/shape``; ``since``: the newest finish recorded."""

    def __init__(self) -> None:
        self.runs: OrderedDict[str, list[float]] = OrderedDict()
        self.since = 0.0
        self.dirty = False
        self._queues: dict[tuple[str, str], int] = {}  # entries per (namespace, queue)
        self._loaded_since = 0.0  # finishes before this were recorded by an earlier process
        self._seen: OrderedDict[str, None] = OrderedDict()  # uids recorded by this process

    def observe(
        self, uid: str, namespace: str, queue: str, digest: str, finished_at: float, seconds: float
    ) -> bool:
        """Record one run, once per uid (and not one an earlier process recorded); True if recorded."""
        if uid in self._seen or finished_at < self._loaded_since:
            return False
        self._seen[uid] = None
        while len(self._seen) > ENTRIES_KEPT * RUNS_KEPT:
            self._seen.popitem(last=False)
        self.since = max(self.since, finished_at)
        key = entry_key(namespace, queue, digest)
        runs = self.runs.pop(key, None)
        if runs is None:
            self._queues[(namespace, queue)] = self._queues.get((namespace, queue), 0) + 1
            runs = []
        runs = [*runs, seconds][-RUNS_KEPT:]
        self.runs[key] = runs
        while len(self.runs) > ENTRIES_KEPT:
            self._drop(self.runs.popitem(last=False)[0])
        self.dirty = True
        return True

    def _drop(self, key: str) -> None:
        namespace, queue, _ = key.split("/", 2)
        left = self._queues.get((namespace, queue), 1) - 1
        if left:
            self._queues[(namespace, queue)] = left
        else:
            self._queues.pop((namespace, queue), None)

    def knows_queue(self, namespace: str, queue: str) -> bool:
        """Whether any run of this LocalQueue is recorded (so a shape is worth looking up)."""
        return (namespace, queue) in self._queues

    def expected(self, namespace: str, queue: str, digest: str) -> float | None:
        """The median recorded run time, or None when none is recorded."""
        runs = self.runs.get(entry_key(namespace, queue, digest))
        return statistics.median(runs) if runs else None

    # -- the ConfigMap document ------------------------------------------------------------------
    def document(self) -> dict[str, str]:
        """The ConfigMap ``data``."""
        body = {"since": self.since, "runs": dict(self.runs)}
        return {HISTORY_KEY: json.dumps(body, separators=(",", ":"), sort_keys=True)}

    def load(self, data: dict[str, str] | None) -> None:
        """Read a ConfigMap ``data`` back; a malformed document is logged and ignored."""
        text = (data or {}).get(HISTORY_KEY)
        if not text:
            return
        try:
            body = json.loads(text)
            runs = {str(k): [float(x) for x in v][-RUNS_KEPT:] for k, v in dict(body["runs"]).items()}
            since = float(body["since"])
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("ignoring malformed run-time history in ConfigMap %s: %s", HISTORY_CONFIGMAP, exc)
            return
        self.runs = OrderedDict((k, v) for k, v in runs.items() if k.count("/") >= 2 and v)
        self._queues = {}
        for key in self.runs:
            namespace, queue, _ = key.split("/", 2)
            self._queues[(namespace, queue)] = self._queues.get((namespace, queue), 0) + 1
        self.since = self._loaded_since = since
        self.dirty = False
