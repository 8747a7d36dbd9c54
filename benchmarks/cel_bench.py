"""Micro-benchmark of schema + CEL validation of Kueue writes: microseconds per write.

Run: ``.venv/bin/python -m benchmarks.cel_bench`` (a few seconds). Takes our Kueue CRDs
(``src/codeflare/api/crds``), compiles each storage version's schema as the server does
(:class:`~codeflare.k8s.schema.CompiledSchema`), and times the steps the server applies to an
update (``registry/rest.py``: default, prune, validate with the old object) on two writes of the
Kueue scheduler baseline: a Workload status update (the QuotaReserved and Admitted conditions
added to an admitted workload of three pod sets with realistic pod templates) and a
ClusterQueue update (a nominal quota changed). It reports the whole step and the CEL rule
evaluation alone (:func:`~codeflare.k8s.schema.rules.evaluate`), and the rules evaluated with
the whole values bound (``whole=True``: the binding before rules were cut to what they read),
best of several rounds, in CPU time of the process (steadier than wall time on a shared
machine). No server, no I/O: the figure is the server's CPU cost per write, not a request latency.
Writes the "cel" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks.results import write_section
from codeflare.k8s.schema import CompiledSchema

CRDS = Path(__file__).resolve().parent.parent / "src" / "codeflare" / "api" / "crds"


def storage_schema(filename: str) -> CompiledSchema:
    """The compiled schema of the CRD's storage version, as the server builds it."""
    crd = yaml.safe_load((CRDS / filename).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return CompiledSchema(version["schema"]["openAPIV3Schema"])


def _pod_template(name: str, cpu: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": name, "kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": name,
                    "image": "registry.k8s.io/e2e-test-images/agnhost:2.52",
                    "args": ["pause"],
                    "env": [{"name": f"VAR_{i}", "value": f"value-{i}"} for i in range(4)],
                    "resources": {"requests": {"cpu": cpu, "memory": "200Mi"}, "limits": {"cpu": cpu}},
                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                }
            ],
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "tolerations": [{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


def _condition(kind: str, reason: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": f"{kind} by ClusterQueue cq-0",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": 1,
    }


def workload_update() -> tuple[dict[str, Any], dict[str, Any]]:
    """(new, old) of a Workload status update: quota reserved and admitted on an admitted one."""
    sets = [("head", "1", 1), ("workers", "2", 4), ("driver", "500m", 1)]
    old: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "job-small-0-1a2b3", "namespace": "default", "uid": "u-1",
                     "resourceVersion": "41", "generation": 1,
                     "labels": {"kueue.x-k8s.io/job-uid": "u-0"}},
        "spec": {
            "queueName": "lq-0",
            "priority": 50,
            "priorityClassName": "small",
            "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
            "active": True,
            "podSets": [{"name": n, "count": c, "template": _pod_template(n, cpu)} for n, cpu, c in sets],
        },
        "status": {
            "conditions": [_condition("QuotaReserved", "QuotaReserved")],
            "admission": {
                "clusterQueue": "cq-0",
                "podSetAssignments": [
                    {"name": n, "flavors": {"cpu": "default", "memory": "default"},
                     "resourceUsage": {"cpu": cpu, "memory": "200Mi"}, "count": c}
                    for n, cpu, c in sets
                ],
            },
        },
    }  # fmt: skip
    new = copy.deepcopy(old)
    new["status"]["conditions"].append(_condition("Admitted", "Admitted"))
    return new, old


def cluster_queue_update() -> tuple[dict[str, Any], dict[str, Any]]:
    """(new, old) of a ClusterQueue update of the baseline's shape: a nominal quota changed."""
    old: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq-0", "uid": "u-2", "resourceVersion": "7", "generation": 1},
        "spec": {
            "cohort": "cohort-0",
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {"name": f"flavor-{f}", "resources": [
                            {"name": "cpu", "nominalQuota": "20", "borrowingLimit": "100"},
                            {"name": "memory", "nominalQuota": "64Gi"},
                        ]}
                        for f in range(2)
                    ],
                }
            ],
        },
    }  # fmt: skip
    new = copy.deepcopy(old)
    new["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "24"
    return new, old


def _best_us(step: Callable[[], object], rounds: int, per_round: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(per_round):
            step()
        best = min(best, (time.process_time() - started) / per_round)
    return best * 1e6


def measure(
    schema: CompiledSchema, new: dict[str, Any], old: dict[str, Any], rounds: int, per_round: int
) -> dict[str, float]:
    """Best microseconds per write: the whole server step, and the CEL rules alone."""
    from codeflare.k8s.schema.rules import evaluate

    tree = schema.rules()
    assert tree is not None
    if schema.validate(copy.deepcopy(new), old):
        raise RuntimeError(f"the sample write is refused: {schema.validate(copy.deepcopy(new), old)}")

    def whole() -> None:
        obj = copy.deepcopy(new)
        schema.default(obj)
        schema.prune(obj)
        schema.validate(obj, old)

    def copy_only() -> None:
        copy.deepcopy(new)

    overhead = _best_us(copy_only, rounds, per_round)
    return {
        "whole": _best_us(whole, rounds, per_round) - overhead,
        "cel": _best_us(lambda: evaluate(tree, new, old), rounds, per_round),
        "cel_whole": _best_us(lambda: evaluate(tree, new, old, whole=True), rounds, per_round),
    }


def run(rounds: int, per_round: int) -> dict[str, dict[str, float]]:
    cases = {
        "Workload status update": (storage_schema("kueue.x-k8s.io_workloads.yaml"), *workload_update()),
        "ClusterQueue update": (storage_schema("kueue.x-k8s.io_clusterqueues.yaml"), *cluster_queue_update()),
    }
    return {name: measure(schema, new, old, rounds, per_round) for name, (schema, new, old) in cases.items()}


def markdown(results: dict[str, dict[str, float]]) -> str:
    lines = [
        "Schema + CEL validation of one Kueue write, in-process (`benchmarks/cel_bench.py`): default,",
        "prune and validate (OpenAPI checks, then the CRD's CEL rules with the old object), best of",
        "several rounds, in CPU time of this process (the machine is shared); the deep copy of the",
        "body the server would make is not counted.",
        "",
        "| write | default + prune + validate (us) | CEL rules alone (us) | CEL, whole values bound (us) |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {name} | {r['whole']:.0f} | {r['cel']:.0f} | {r['cel_whole']:.0f} |"
        for name, r in results.items()
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=100)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    text = markdown(run(args.rounds, args.per_round))
    print(text)
    if not args.no_write:
        write_section("cel", text)


if __name__ == "__main__":
    main()
