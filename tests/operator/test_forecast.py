"""Estimated starts end to end: a real API server process, the operator process, a test runner.

Workloads are created directly (no job behind them, as Kueue's scheduler performance test does)
with ``spec.maximumExecutionTimeSeconds``; the runner below marks each admitted Workload
Finished once it has been admitted for that long (counted from its QuotaReserved time, as Kueue's
runner counts from the admission it saw). Three jobs wait behind known-duration work in a 1-CPU
queue: the estimates the operator publishes match the admissions that follow within the run-time
tolerance; a job behind one of unknown duration says "unbounded"; finished runs reach the
run-time history ConfigMap.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true, set_condition
from codeflare.k8s.constants import ESTIMATE_UNBOUNDED, ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.kube import config, errors, kinds
from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import (
    OPERATOR_NAMESPACE,
    OperatorProcess,
    ensure_namespace,
    install_crds,
    quiet_config,
    write_operator_config,
)
from tests.support.polling import wait_for
from tests.support.queue_objects import cluster_queue, local_queue, workload

log = logging.getLogger(__name__)
Obj = dict[str, Any]
RUN_S = 3  # each job's maximumExecutionTimeSeconds
TOLERANCE_S = 2.5  # estimate vs admission: the runner's and operator's reaction time, 1 s timestamps


def timed_workload(name: str, namespace: str, seconds: int | None) -> Obj:
    body = workload(name, namespace, "queue", "1")
    if seconds is not None:
        body["spec"]["maximumExecutionTimeSeconds"] = seconds
    return body


def admitted_at(obj: Obj) -> float | None:
    reserved = find_condition(conditions_of(obj), "QuotaReserved") or {}
    if reserved.get("status") != "True" or not (obj.get("status") or {}).get("admission"):
        return None
    return epoch_seconds(reserved.get("lastTransitionTime"))


class Runner(threading.Thread):
    """Marks each admitted Workload Finished once admitted for its maximumExecutionTimeSeconds."""

    def __init__(self, kubeconfig: Any, namespaces: list[str]) -> None:
        super().__init__(daemon=True)
        self.kube = Kube(config.from_kubeconfig(kubeconfig))
        self.namespaces = namespaces
        self.stopping = threading.Event()
        self.errors: list[str] = []

    def run(self) -> None:
        try:
            while not self.stopping.wait(0.1):
                for namespace in self.namespaces:
                    for obj in self.kube.list(kinds.WORKLOAD, namespace):
                        self._maybe_finish(obj)
        except errors.KubeError as exc:
            self.errors.append(str(exc))
        finally:
            self.kube.close()

    def _maybe_finish(self, obj: Obj) -> None:
        seconds = (obj.get("spec") or {}).get("maximumExecutionTimeSeconds")
        since = admitted_at(obj)
        if seconds is None or since is None or is_condition_true(conditions_of(obj), "Finished"):
            return
        if time.time() < since + seconds:
            return

        def finish(current: Obj) -> Obj | None:
            if is_condition_true(conditions_of(current), "Finished"):
                return None
            conds = conditions_of(current)
            set_condition(conds, "Finished", "True", "ByTest", "By test runner", format_rfc3339(time.time()))
            return {**(current.get("status") or {}), "conditions": conds}

        def edit(current: Obj) -> Obj | None:
            new_status = finish(current)
            return None if new_status is None else {**current, "status": new_status}

        meta = obj["metadata"]
        self.kube.update(kinds.WORKLOAD, meta["name"], meta["namespace"], edit, status=True)


@pytest.fixture
def control_plane(fresh_apiserver: ServerProcess, tmp_path: Any) -> Iterator[tuple[Kube, Runner]]:
    kube = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    install_crds(kube)
    write_operator_config(kube, quiet_config(queueing={"forecastInterval": "1s"}))
    kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
    for namespace, cq in (("timed", "timed-cq"), ("open", "open-cq")):
        ensure_namespace(kube, namespace)
        kube.create(kinds.CLUSTER_QUEUE, cluster_queue(cq, "1"))
        kube.create(kinds.LOCAL_QUEUE, local_queue("queue", namespace, cq))
    operator = OperatorProcess(fresh_apiserver.kubeconfig, tmp_path / "operator.log").start()
    runner = Runner(fresh_apiserver.kubeconfig, ["timed", "open"])
    runner.start()
    try:
        yield kube, runner
    finally:
        runner.stopping.set()
        runner.join(10)
        operator.stop()
        kube.close()
        print(operator.log()[-4000:])  # shown by pytest when the test fails


def annotations(kube: Kube, namespace: str, name: str) -> dict[str, str]:
    return dict(kube.get(kinds.WORKLOAD, name, namespace)["metadata"].get("annotations") or {})


def test_estimated_starts_match_admissions_and_unknown_is_unbounded(
    control_plane: tuple[Kube, Runner],
) -> None:
    kube, runner = control_plane
    kube.create(kinds.WORKLOAD, timed_workload("job-1", "timed", RUN_S))
    wait_for(lambda: admitted_at(kube.get(kinds.WORKLOAD, "job-1", "timed")), 30, what="first admitted")
    waiting = ["job-2", "job-3", "job-4"]  # one creation second: ordered by name
    for name in waiting:
        kube.create(kinds.WORKLOAD, timed_workload(name, "timed", RUN_S))
    kube.create(kinds.WORKLOAD, timed_workload("forever", "open", None))
    wait_for(lambda: admitted_at(kube.get(kinds.WORKLOAD, "forever", "open")), 30, what="forever admitted")
    kube.create(kinds.WORKLOAD, timed_workload("after", "open", RUN_S))

    def published() -> dict[str, float] | None:
        out: dict[str, float] = {}
        for name in waiting:
            value = annotations(kube, "timed", name).get(ESTIMATED_START_ANNOTATION)
            start = epoch_seconds(value)
            if start is None:
                return None
            out[name] = start
        return out

    estimates = wait_for(published, 30, what="estimates published for the three waiting jobs")
    assert annotations(kube, "timed", "job-2")[WAITING_FOR_ANNOTATION] == "job-1"
    assert estimates["job-2"] < estimates["job-3"] < estimates["job-4"]

    unbounded = wait_for(
        lambda: annotations(kube, "open", "after").get(ESTIMATED_START_ANNOTATION),
        30,
        what="after's estimate",
    )
    assert unbounded == ESTIMATE_UNBOUNDED
    assert annotations(kube, "open", "after")[WAITING_FOR_ANNOTATION] == "forever"

    def admissions() -> dict[str, float] | None:
        out = {name: admitted_at(kube.get(kinds.WORKLOAD, name, "timed")) for name in waiting}
        seen = {k: v for k, v in out.items() if v is not None}
        return seen if len(seen) == len(waiting) else None

    actual = wait_for(admissions, 60, interval=0.2, what="the three waiting jobs admitted")
    log.info("estimate - admission (s): %s", {n: round(estimates[n] - actual[n], 1) for n in waiting})
    for name in waiting:
        assert abs(actual[name] - estimates[name]) <= TOLERANCE_S, (name, estimates, actual)
    assert runner.errors == []
    # the finished runs are in the history ConfigMap, by LocalQueue and shape
    history = wait_for(
        lambda: kube.find(kinds.CONFIGMAP, "codeflare-run-times", OPERATOR_NAMESPACE), 30, what="history"
    )
    runs = json.loads(history["data"]["runtimes.json"])["runs"]
    (entry,) = (v for k, v in runs.items() if k.startswith("timed/queue/"))
    assert entry and all(RUN_S - 1 <= r <= RUN_S + 2 for r in entry)
