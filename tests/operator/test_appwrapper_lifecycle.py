"""AppWrapper lifecycle against a real API server, the operator and a simulated kubelet.

One operator (queueing off, so only the AppWrapper controller acts) serves the module; each test
works in its own namespace with a :class:`KubeletSim` playing kubelet and the Job/Deployment
controllers. Fault-tolerance durations come from per-AppWrapper annotations ("1s") so the
retries, resets and deletions happen within seconds.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from tests.operator.operator_metrics import OperatorMetricsReader
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator
from tests.support.kubelet_sim import KubeletSim, Policy, keep_running, succeed
from tests.support.polling import async_wait_for

Obj = dict[str, Any]
LABEL = "workload.codeflare.dev/appwrapper"
KNOB = "workload.codeflare.dev.appwrapper/"
FAST = {KNOB + "failureGracePeriod": "1s", KNOB + "retryPausePeriod": "1s"}


@pytest.fixture(scope="module")
def operator(apiserver: ServerProcess) -> Iterator[ThreadedOperator]:
    running = ThreadedOperator(apiserver, {"queueing": {"enabled": False}}).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def metrics(operator: ThreadedOperator) -> OperatorMetricsReader:
    return OperatorMetricsReader(operator.metrics_port)


@pytest.fixture
async def kube(operator: ThreadedOperator) -> AsyncIterator[AsyncKube]:
    async with AsyncKube(operator.connection) as client:
        yield client


@pytest.fixture
async def namespace(kube: AsyncKube) -> str:
    name = f"aw-{uuid.uuid4().hex[:8]}"
    await kube.create(kinds.NAMESPACE, {"metadata": {"name": name}})
    return name


class SimRunner:
    """Starts a simulator task for a namespace and stops it at the end of the test."""

    def __init__(self, kube: AsyncKube) -> None:
        self.kube = kube
        self.tasks: list[asyncio.Task[None]] = []

    def start(self, namespace: str, policy: Policy = keep_running) -> KubeletSim:
        sim = KubeletSim(self.kube, namespace, policy)
        self.tasks.append(asyncio.create_task(sim.run()))
        return sim


@pytest.fixture
async def sims(kube: AsyncKube) -> AsyncIterator[SimRunner]:
    runner = SimRunner(kube)
    yield runner
    for task in runner.tasks:
        task.cancel()
    await asyncio.gather(*runner.tasks, return_exceptions=True)


# -- helpers ------------------------------------------------------------------------------------

def job(name: str, parallelism: int = 1, backoff_limit: int = 0) -> Obj:
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"parallelism": parallelism, "completions": parallelism, "backoffLimit": backoff_limit,
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "main", "image": "busybox"}]}}},
    }


def deployment(name: str, replicas: int = 2, finalizers: list[str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if finalizers:
        meta["finalizers"] = finalizers
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "busybox"}]}}},
    }


def appwrapper(name: str, namespace: str, *components: Obj, annotations: dict[str, str] | None = None,
               suspend: bool = False, pod_set_infos: list[Obj] | None = None) -> Obj:
    comps: list[Obj] = [{"template": c} for c in components]
    if pod_set_infos is not None:
        comps[0]["podSetInfos"] = pod_set_infos
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}},
        "spec": {"suspend": suspend, "components": comps},
    }


async def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """:func:`async_wait_for` with the description first, as these tests read best."""
    return await async_wait_for(check, timeout, what=what)


async def wait_phase(kube: AsyncKube, namespace: str, name: str, phase: str, timeout: float = 20.0) -> Obj:
    seen: list[str] = []

    async def check() -> Obj | None:
        aw = await kube.get(kinds.APPWRAPPER, name, namespace)
        current = (aw.get("status") or {}).get("phase", "")
        if not seen or seen[-1] != current:
            seen.append(current)
        return aw if current == phase else None

    try:
        return await wait_for(f"phase {phase}", check, timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; phases seen: {seen}") from None


def condition(aw: Obj, type_: str) -> Obj:
    return next(c for c in aw["status"]["conditions"] if c["type"] == type_)


async def gone(kube: AsyncKube, kind: kinds.Kind, name: str, namespace: str) -> bool:
    return await kube.find(kind, name, namespace) is None


async def labelled_pods(kube: AsyncKube, namespace: str, name: str) -> list[Obj]:
    return await kube.list(kinds.POD, namespace, labels={LABEL: name})


async def event_reasons(kube: AsyncKube, namespace: str, name: str, wanted: set[str]) -> list[str]:
    """The reasons of ``name``'s Events once they include ``wanted`` (an Event is recorded just
    after the status write it reports, so a test that saw the phase waits for its Event)."""

    async def reasons() -> list[str] | None:
        events = await kube.list(kinds.EVENT, namespace)
        found = [e["reason"] for e in events if e["involvedObject"]["name"] == name]
        return found if wanted <= set(found) else None

    return await wait_for(f"events {sorted(wanted)} of {name}", reasons)


# -- tests --------------------------------------------------------------------------------------

async def test_success_creates_labelled_owned_components_and_expires_after_success_ttl(
        kube: AsyncKube, namespace: str, sims: SimRunner, metrics: OperatorMetricsReader) -> None:
    sims.start(namespace, succeed)
    succeeded_before = metrics.value("appwrapper_phase_total", phase="Succeeded")
    infos = [{"labels": {"team": "a"}, "nodeSelector": {"pool": "gpu"},
              "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}]
    created = await kube.create(kinds.APPWRAPPER, appwrapper(
        "ok", namespace, job("ok-job", parallelism=2),
        annotations={KNOB + "successTTL": "3s"}, pod_set_infos=infos))

    aw = await wait_phase(kube, namespace, "ok", "Succeeded")

    component = await kube.get(kinds.JOB, "ok-job", namespace)
    assert component["metadata"]["labels"][LABEL] == "ok"
    [owner] = component["metadata"]["ownerReferences"]
    uid = created["metadata"]["uid"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("AppWrapper", uid, True)
    pods = await labelled_pods(kube, namespace, "ok")
    assert len(pods) == 2 and all(p["status"]["phase"] == "Succeeded" for p in pods)
    assert all(p["metadata"]["labels"]["team"] == "a" and p["spec"]["nodeSelector"] == {"pool": "gpu"}
               and p["spec"]["tolerations"][0]["key"] == "gpu" for p in pods)
    [status] = aw["status"]["componentStatus"]
    assert (status["name"], status["kind"], status["apiVersion"]) == ("ok-job", "Job", "batch/v1")
    assert status["podSets"] == [{"path": "template.spec.template", "replicas": 2}]
    assert condition(aw, "ResourcesDeployed")["status"] == "True"
    assert condition(aw, "QuotaReserved")["status"] == "False"
    assert aw["status"].get("resettingCount", 0) == 0
    assert "workload.codeflare.dev/finalizer" in aw["metadata"]["finalizers"]
    assert metrics.value("appwrapper_phase_total", phase="Succeeded") == succeeded_before + 1
    assert {"Resuming", "Running", "Succeeded"} <= set(await event_reasons(
        kube, namespace, "ok", {"Resuming", "Running", "Succeeded"}))

    await wait_for("AppWrapper deleted after successTTL",
                   lambda: gone(kube, kinds.APPWRAPPER, "ok", namespace))
    await wait_for("Job deleted with it", lambda: gone(kube, kinds.JOB, "ok-job", namespace))


async def test_failed_pod_is_retried_after_a_reset(kube: AsyncKube, namespace: str, sims: SimRunner) -> None:
    first: list[str] = []

    def fail_first_pod(pod: Obj) -> int:
        first.append(first[0] if first else pod["metadata"]["name"])
        return 1 if pod["metadata"]["name"] == first[0] else 0

    sims.start(namespace, fail_first_pod)
    await kube.create(kinds.APPWRAPPER, appwrapper("retry", namespace, job("retry-job"),
                                                   annotations={**FAST, KNOB + "retryLimit": "2"}))

    aw = await wait_phase(kube, namespace, "retry", "Succeeded", timeout=30)

    assert aw["status"]["resettingCount"] == 1
    assert condition(aw, "Unhealthy")["status"] == "False"
    reasons = await event_reasons(kube, namespace, "retry", {"Unhealthy", "Resetting", "Succeeded"})
    assert {"Unhealthy", "Resetting", "Succeeded"} <= set(reasons)
    assert reasons.count("Resuming") == 2


async def test_retry_limit_exhausted_fails_and_deletes_components(
        kube: AsyncKube, namespace: str, sims: SimRunner, metrics: OperatorMetricsReader) -> None:
    sims.start(namespace, lambda pod: 3)
    failed_before = metrics.value("appwrapper_phase_total", phase="Failed")
    await kube.create(kinds.APPWRAPPER, appwrapper("doomed", namespace, job("doomed-job"),
                                                   annotations={**FAST, KNOB + "retryLimit": "1"}))

    aw = await wait_phase(kube, namespace, "doomed", "Failed", timeout=30)

    assert aw["status"]["resettingCount"] == 1
    assert condition(aw, "Unhealthy")["reason"] == "FoundFailedPods"
    assert condition(aw, "QuotaReserved")["reason"] == "RetryLimitExceeded"  # kept after the cleanup
    await wait_for("Job deleted", lambda: gone(kube, kinds.JOB, "doomed-job", namespace))
    await wait_for("pods deleted", lambda: _no_pods(kube, namespace, "doomed"))
    aw = await wait_for("cleanup recorded", lambda: _condition_is(kube, namespace, "doomed",
                                                                   "DeletingResources", "False"))
    assert aw["status"]["phase"] == "Failed"
    assert metrics.value("appwrapper_phase_total", phase="Failed") == failed_before + 1


async def test_terminal_exit_code_fails_without_retry(
        kube: AsyncKube, namespace: str, sims: SimRunner) -> None:
    sims.start(namespace, lambda pod: 42)
    await kube.create(kinds.APPWRAPPER, appwrapper(
        "fatal", namespace, job("fatal-job"),
        annotations={**FAST, KNOB + "retryLimit": "5", KNOB + "terminalExitCodes": "42, 43"}))

    aw = await wait_phase(kube, namespace, "fatal", "Failed")

    assert aw["status"].get("resettingCount", 0) == 0
    assert condition(aw, "QuotaReserved")["reason"] == "TerminalExitCode"
    assert "exit codes 42" in condition(aw, "Unhealthy")["message"]
    await wait_for("Job deleted", lambda: gone(kube, kinds.JOB, "fatal-job", namespace))


async def test_suspend_while_running_deletes_components_and_resume_recreates_them(
        kube: AsyncKube, namespace: str, sims: SimRunner) -> None:
    sims.start(namespace)
    await kube.create(kinds.APPWRAPPER, appwrapper("pausable", namespace, deployment("pausable-web")))
    await wait_for("pods ready", lambda: _condition_is(kube, namespace, "pausable", "PodsReady", "True"))

    await kube.patch(kinds.APPWRAPPER, "pausable", {"spec": {"suspend": True}}, namespace)
    aw = await wait_phase(kube, namespace, "pausable", "Suspended")

    assert await kube.find(kinds.DEPLOYMENT, "pausable-web", namespace) is None
    assert await labelled_pods(kube, namespace, "pausable") == []
    assert condition(aw, "QuotaReserved")["status"] == "False"
    assert condition(aw, "ResourcesDeployed")["status"] == "False"

    await kube.patch(kinds.APPWRAPPER, "pausable", {"spec": {"suspend": False}}, namespace)
    await wait_for("pods ready again",
                   lambda: _condition_is(kube, namespace, "pausable", "PodsReady", "True"))
    assert await kube.find(kinds.DEPLOYMENT, "pausable-web", namespace) is not None


async def test_created_suspended_waits_then_runs_when_unsuspended(
        kube: AsyncKube, namespace: str, sims: SimRunner, metrics: OperatorMetricsReader) -> None:
    sims.start(namespace)
    await kube.create(kinds.APPWRAPPER,
                      appwrapper("queued", namespace, deployment("queued-web", 1), suspend=True))
    await wait_phase(kube, namespace, "queued", "Suspended")
    # a change it must look at: once that pass is done, still nothing deployed
    before = await asyncio.to_thread(metrics.count, "appwrapper")
    await kube.patch(kinds.APPWRAPPER, "queued", {"metadata": {"labels": {"looked-at": "yes"}}}, namespace)
    await asyncio.to_thread(metrics.wait_passes, "appwrapper", 1, before)
    assert await kube.find(kinds.DEPLOYMENT, "queued-web", namespace) is None

    await kube.patch(kinds.APPWRAPPER, "queued", {"spec": {"suspend": False}}, namespace)
    await wait_phase(kube, namespace, "queued", "Running")
    await wait_for("Deployment created", lambda: kube.find(kinds.DEPLOYMENT, "queued-web", namespace))


async def test_deletion_waits_for_components_to_be_gone(
        kube: AsyncKube, namespace: str, sims: SimRunner, metrics: OperatorMetricsReader) -> None:
    sims.start(namespace)
    await kube.create(kinds.APPWRAPPER, appwrapper(
        "held", namespace, deployment("held-web", 1, finalizers=["test.codeflare.dev/hold"])))
    await wait_for("pods ready", lambda: _condition_is(kube, namespace, "held", "PodsReady", "True"))

    await kube.delete(kinds.APPWRAPPER, "held", namespace)
    aw = await wait_phase(kube, namespace, "held", "Terminating")
    assert condition(aw, "DeletingResources")["status"] == "True"
    await asyncio.to_thread(metrics.wait_passes, "appwrapper")  # it looks again at least every second
    assert await kube.find(kinds.APPWRAPPER, "held", namespace) is not None  # held by its finalizer
    web = await kube.get(kinds.DEPLOYMENT, "held-web", namespace)
    assert web["metadata"].get("deletionTimestamp")

    await kube.patch(kinds.DEPLOYMENT, "held-web", {"metadata": {"finalizers": None}}, namespace)
    await wait_for("AppWrapper deleted", lambda: gone(kube, kinds.APPWRAPPER, "held", namespace))
    assert await kube.find(kinds.DEPLOYMENT, "held-web", namespace) is None


async def test_deletion_becomes_forceful_after_the_grace_period(
        kube: AsyncKube, namespace: str, sims: SimRunner) -> None:
    sims.start(namespace)
    await kube.create(kinds.APPWRAPPER, appwrapper(
        "stuck", namespace, deployment("stuck-web", 1, finalizers=["test.codeflare.dev/hold"]),
        annotations={KNOB + "forcefulDeletionGracePeriod": "1s"}))
    await wait_for("pods ready", lambda: _condition_is(kube, namespace, "stuck", "PodsReady", "True"))

    await kube.delete(kinds.APPWRAPPER, "stuck", namespace)

    await wait_for("AppWrapper deleted", lambda: gone(kube, kinds.APPWRAPPER, "stuck", namespace))
    assert await kube.find(kinds.DEPLOYMENT, "stuck-web", namespace) is None


async def _no_pods(kube: AsyncKube, namespace: str, name: str) -> bool:
    return not await labelled_pods(kube, namespace, name)


async def _condition_is(kube: AsyncKube, namespace: str, name: str, type_: str, status: str) -> Obj | None:
    try:
        aw = await kube.get(kinds.APPWRAPPER, name, namespace)
    except errors.NotFound:
        return None
    for c in (aw.get("status") or {}).get("conditions") or []:
        if c["type"] == type_ and c["status"] == status:
            return aw
    return None
