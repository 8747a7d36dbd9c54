"""The scenario a Kueue scheduler-performance configuration describes, scaled, and its ideal makespan.

Reads ``<name>.yaml`` beside this module (Kueue's generator.yaml keys: cohorts, queuesSets,
workloadsSets, workloads) into the ClusterQueues and workload sets Kueue's generator would create,
with its names (ClusterQueue, namespace and LocalQueue ``<class>-<set>-<index>-<cohort>``) and
labels. No I/O but reading the file; the objects are created by the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from codeflare.k8s.quantity import milli_value

Obj = dict[str, Any]
CONFIGS = Path(__file__).parent
# Kueue's generator labels (test/performance/scheduler/runner/generator/generator.go)
RUNNING_MS_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
FLAVOR = "rf"  # the generator's default ResourceFlavor name


@dataclass(frozen=True)
class Template:
    class_name: str
    runtime_s: float
    priority: int
    cpu: str


@dataclass(frozen=True)
class WorkloadSet:
    count: int
    interval_s: float
    templates: tuple[Template, ...]


@dataclass(frozen=True)
class Queue:
    """One ClusterQueue of the generator, its namespace and LocalQueue (all named alike)."""

    name: str
    cohort: str
    class_name: str
    nominal: str
    borrowing_limit: str
    reclaim_within_cohort: str
    within_cluster_queue: str
    sets: tuple[WorkloadSet, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    scale: float
    queues: tuple[Queue, ...]
    document: Obj  # the data file: rangespec, published figures, source

    @property
    def workloads(self) -> int:
        return sum(s.count * len(s.templates) for q in self.queues for s in q.sets)

    def ideal_makespan(self) -> float:
        """Work over nominal quota, unless the last creation plus its run time comes later."""
        work = sum(
            s.count * milli_value(t.cpu) / 1000 * t.runtime_s
            for q in self.queues
            for s in q.sets
            for t in s.templates
        )
        capacity = sum(milli_value(q.nominal) / 1000 for q in self.queues)
        arrivals = max(
            (
                s.count * len(s.templates) * s.interval_s + t.runtime_s
                for q in self.queues
                for s in q.sets
                for t in s.templates
            ),
            default=0.0,
        )
        return max(work / capacity, arrivals)


def load(name: str, scale: float) -> Scenario:
    """The named configuration, workload counts multiplied by ``scale`` (at least one each)."""
    document = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    queues = []
    for cohort_set in document["cohorts"]:
        for c in range(cohort_set["count"]):
            cohort = f"{cohort_set['className']}-{c}"
            for qs_index, qs in enumerate(cohort_set["queuesSets"]):
                sets = tuple(
                    WorkloadSet(
                        max(1, round(ws["count"] * scale)),
                        ws["creationIntervalMs"] / 1000,
                        tuple(
                            Template(t["className"], t["runtimeMs"] / 1000, t["priority"], str(t["request"]))
                            for t in ws["workloads"]
                        ),
                    )
                    for ws in qs["workloadsSets"]
                )
                for q in range(qs["count"]):
                    queues.append(
                        Queue(
                            f"{qs['className']}-{qs_index}-{q}-{cohort}",
                            cohort,
                            qs["className"],
                            str(qs["nominalQuota"]),
                            str(qs["borrowingLimit"]),
                            qs["reclaimWithinCohort"],
                            qs["withinClusterQueue"],
                            sets,
                        )
                    )
    return Scenario(name, scale, tuple(queues), document)


def cluster_queue(queue: Queue) -> Obj:
    resource = {"name": "cpu", "nominalQuota": queue.nominal, "borrowingLimit": queue.borrowing_limit}
    return {
        "metadata": {"name": queue.name, "labels": {CLASS_LABEL: queue.class_name}},
        "spec": {
            "cohortName": queue.cohort,  # v1beta2 (v1beta1: cohort)
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": ["cpu"], "flavors": [{"name": FLAVOR, "resources": [resource]}]}
            ],
            "preemption": {
                "reclaimWithinCohort": queue.reclaim_within_cohort,
                "withinClusterQueue": queue.within_cluster_queue,
            },
        },
    }
