"""Kueue's own scheduler performance test, replayed end to end through our API server and operator.

Kueue's test (kubernetes-sigs/kueue ``test/performance/scheduler/``) has a generator that creates
cohorts of ClusterQueues, one namespace and LocalQueue per ClusterQueue, and Workload objects
directly (no job behind them), each workload set paced by its ``creationIntervalMs``; a runner
that marks each admitted Workload ``Finished`` once it has been admitted for its ``runtimeMs``;
and a recorder whose summary its checker compares with ``rangespec.yaml``. This module does the
same against a ``codeflare server`` and a ``codeflare operator`` process (default configuration,
so ``clientConnection`` qps 50 / burst 100, as minimalkueue's client; capacity check off, as Kueue
has none): the configurations are data in ``benchmarks/kueue_baseline/`` (ported, cited there).
We queue plain Workloads with ``spec.queueName`` as Kueue's generator does; our operator admits
those without a job. Differences from Kueue's run: our operator evicts by clearing the admission
itself, so the runner has no eviction to finish; wall time runs from the generator's start (Kueue
times its minimalkueue process, started just before); everything shares this machine's cores.

Reported: wall and makespan against the ideal (work / nominal quota, or the last creation plus
its run time if later) and Kueue's published figure; per class average time to admission by
Kueue's recorder method (Admitted lastTransitionTime - creationTimestamp, second resolution) and
as observed by this client; ClusterQueue usage by Kueue's method (status.flavorsUsage integrated
over time between a queue class's first and last ClusterQueue events) and from the Workloads'
own admissions; admissions/s; preemptions; operator and server CPU and peak RSS; and quota checked
after every Workload event this client sees (each is a state of the server's history).

Usage: python -m benchmarks.kueue_baseline_bench [--config baseline|large-scale] [--scale 0.1]
       [--runs 3] [--profile DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import yaml
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import OperatorProcess, install_crds, write_operator_config
from tests.support.polling import wait_for
from tests.support.queue_objects import local_queue, workload

from benchmarks.kueue_baseline.recorder import Recorder, WorkloadRecord, conditions
from benchmarks.kueue_baseline.scenario import (
    CLASS_LABEL,
    FLAVOR,
    RUNNING_MS_LABEL,
    Queue,
    Scenario,
    WorkloadSet,
    cluster_queue,
    load,
)
from benchmarks.results import write_section
from codeflare.k8s.conditions import conditions_of, find_condition, is_condition_true, set_condition
from codeflare.k8s.quantity import milli_value
from codeflare.k8s.timestamps import epoch_seconds, format_rfc3339
from codeflare.kube import config, errors, kinds
from codeflare.kube.client import AsyncKube, Kube

Obj = dict[str, Any]


# -- generator, runner, watches ------------------------------------------------------------------
class Replay:
    def __init__(self, scenario: Scenario, kube: AsyncKube) -> None:
        self.scenario = scenario
        self.kube = kube
        self.recorder = Recorder(scenario)
        self.tokens: dict[str, int] = {}  # admitted key -> admission number (the runner's clock)
        self.generated = asyncio.Event()
        self.errors: list[str] = []
        self.trace: list[tuple[float, str, str]] | None = None  # (epoch s, key, what), with --trace

    async def generate(self) -> None:
        """Kueue's generator: every queue and every workload set concurrently, each set sleeping its
        interval before each creation."""
        await self.kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": FLAVOR}, "spec": {}})
        await asyncio.gather(*(self._queue(q) for q in self.scenario.queues))
        self.generated.set()

    async def _queue(self, queue: Queue) -> None:
        await self.kube.create(kinds.CLUSTER_QUEUE, cluster_queue(queue))
        await self.kube.create(kinds.NAMESPACE, {"metadata": {"name": queue.name}})
        await self.kube.create(kinds.LOCAL_QUEUE, local_queue(queue.name, queue.name, queue.name))
        await asyncio.gather(*(self._workload_set(queue, i, s) for i, s in enumerate(queue.sets)))

    async def _workload_set(self, queue: Queue, index: int, wl_set: WorkloadSet) -> None:
        for si in range(wl_set.count):
            for i, t in enumerate(wl_set.templates):
                await asyncio.sleep(wl_set.interval_s)
                name = f"{t.class_name}-{index}-{si}-{i}"
                labels = {RUNNING_MS_LABEL: str(round(t.runtime_s * 1000)), CLASS_LABEL: t.class_name}
                self.recorder.created_at[f"{queue.name}/{name}"] = time.monotonic()
                if self.trace is not None:
                    self.trace.append((time.time(), f"{queue.name}/{name}", "create"))
                await self.kube.create(
                    kinds.WORKLOAD, workload(name, queue.name, queue.name, t.cpu, t.priority, labels)
                )

    async def follow_workloads(self) -> None:
        async for obj in watch_forever(self.kube, kinds.WORKLOAD):
            now = time.monotonic()
            key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
            if self.trace is not None:
                self.trace.append((time.time(), key, _state(obj)))
            if self.recorder.workload_event(obj, now):
                if key not in self.tokens:  # the runner notes when it saw the admission
                    self.tokens[key] = len(self.recorder.admissions)
                    runtime = int((obj["metadata"].get("labels") or {}).get(RUNNING_MS_LABEL, "0")) / 1000
                    asyncio.get_running_loop().call_later(runtime, self._finish_soon, obj, self.tokens[key])
            else:
                self.tokens.pop(key, None)

    async def follow_cluster_queues(self) -> None:
        async for obj in watch_forever(self.kube, kinds.CLUSTER_QUEUE):
            self.recorder.cluster_queue_event(obj, time.monotonic())

    def _finish_soon(self, obj: Obj, token: int) -> None:
        asyncio.get_running_loop().create_task(self._finish(obj, token))

    async def _finish(self, obj: Obj, token: int) -> None:
        """Kueue's runner: Finished=True (reason ByTest), unless the admission it timed has gone."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"

        def finish(current: Obj) -> Obj | None:
            if self.tokens.get(key) != token or is_condition_true(conditions_of(current), "Finished"):
                return None
            if not (current.get("status") or {}).get("admission"):
                return None
            status = dict(current.get("status") or {})
            conds = conditions_of(current)
            set_condition(conds, "Finished", "True", "ByTest", "By test runner", format_rfc3339(time.time()))
            status["conditions"] = conds
            return {**current, "status": status}

        try:
            latest = finish(obj)  # first from the watched copy, as the runner updates its cached object
            if latest is None:
                return
            try:
                await self.kube.replace_status(kinds.WORKLOAD, latest)
            except errors.Conflict:
                await self.kube.update(kinds.WORKLOAD, meta["name"], meta["namespace"], finish, status=True)
        except errors.KubeError as exc:
            self.errors.append(f"finishing {key}: {exc}")


def _state(obj: Obj) -> str:
    """A Workload's state for --trace: the true ones of its conditions, its ClusterQueue, and
    when it was admitted by its condition (the decision's time, to the second)."""
    conds = conditions_of(obj)
    true = [c for c in ("QuotaReserved", "Admitted", "Evicted", "Finished") if is_condition_true(conds, c)]
    queue = ((obj.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
    admitted = find_condition(conds, "Admitted") if "Admitted" in true else None
    decided = epoch_seconds(admitted.get("lastTransitionTime")) if admitted else None
    return ",".join(true) + (f"@{queue}" if queue else "") + (f"|{decided:.0f}" if decided else "")


async def watch_forever(kube: AsyncKube, kind: Any) -> Any:
    """ADDED/MODIFIED objects of ``kind`` from the start, resuming after a broken stream."""
    version = ""
    while True:
        try:
            if not version:
                items, version = await kube.list_with_version(kind)
                for obj in items:
                    yield obj
            async for event_type, obj in kube.watch(kind, resource_version=version):
                version = obj.get("metadata", {}).get("resourceVersion", version)
                if event_type in ("ADDED", "MODIFIED"):
                    yield obj
        except errors.Gone:
            version = ""
        except errors.KubeError:
            await asyncio.sleep(0.2)


# -- one run -------------------------------------------------------------------------------------
@dataclass
class Processes:
    """CPU seconds and peak RSS of the server and the operator (each with its children)."""

    pids: dict[str, int]
    cpu_start: dict[str, float] = field(default_factory=dict)
    peak_rss: dict[str, int] = field(default_factory=dict)

    def _tree(self, name: str) -> list[psutil.Process]:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.pids[name])
            return [root, *root.children(recursive=True)]
        return []

    def cpu(self, name: str) -> float:
        total = 0.0
        for proc in self._tree(name):
            with contextlib.suppress(psutil.Error):
                total += sum(proc.cpu_times()[:2])
        return total

    def start(self) -> None:
        self.cpu_start = {name: self.cpu(name) for name in self.pids}

    def sample(self) -> None:
        for name in self.pids:
            rss = 0
            for proc in self._tree(name):
                with contextlib.suppress(psutil.Error):
                    rss += proc.memory_info().rss
            self.peak_rss[name] = max(self.peak_rss.get(name, 0), rss)


async def replay(
    scenario: Scenario, kubeconfig: Path, processes: Processes, timeout: float, trace: Path | None
) -> Obj:
    kube = AsyncKube(config.from_kubeconfig(kubeconfig), timeout=120)
    run = Replay(scenario, kube)
    if trace is not None:
        run.trace = []
    followers = [
        asyncio.create_task(run.follow_workloads()),
        asyncio.create_task(run.follow_cluster_queues()),
    ]
    processes.start()
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    generating = asyncio.create_task(run.generate())
    all_finished_at = drained_at = None
    while time.monotonic() - start < timeout:
        await asyncio.sleep(0.25)
        processes.sample()
        if generating.done() and generating.exception() is not None:
            raise RuntimeError("generator failed") from generating.exception()
        if all_finished_at is None and run.recorder.finished >= scenario.workloads:
            all_finished_at = time.monotonic()
        if all_finished_at is not None and run.generated.is_set() and run.recorder.drained():
            drained_at = time.monotonic()
            break
        if all_finished_at is not None and time.monotonic() - all_finished_at > 30:
            break  # the queues never reported drained: wall is taken when the last workload finished
    end = time.monotonic()
    cpu = {name: processes.cpu(name) - processes.cpu_start[name] for name in processes.pids}
    for task in [*followers, generating]:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*followers, generating, return_exceptions=True)
    await kube.aclose()
    if trace is not None and run.trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        with (trace / "workloads.tsv").open("w") as out:
            out.writelines(f"{t:.3f}\t{key}\t{what}\n" for t, key, what in run.trace)
    return summarize(run, start, end, all_finished_at, drained_at, cpu, processes, load_before)


def _mean(values: Any) -> float:
    items = list(values)
    return statistics.fmean(items) if items else float("nan")


def summarize(
    run: Replay,
    start: float,
    end: float,
    finished_at: float | None,
    drained_at: float | None,
    cpu: dict[str, float],
    processes: Processes,
    load_before: float,
) -> Obj:
    rec = run.recorder
    classes: dict[str, list[WorkloadRecord]] = {}
    for record in rec.workloads.values():
        classes.setdefault(record.class_name, []).append(record)
    wall = (drained_at or finished_at or end) - start
    makespan = (finished_at or end) - start
    capacity = sum(milli_value(q.nominal) for q in run.scenario.queues)
    admitted_span = (rec.admissions[-1] - start) if rec.admissions else float("nan")
    return {
        "workloads": run.scenario.workloads,
        "created": len(rec.created_at),
        "finished": rec.finished,
        "wall_s": wall,
        "makespan_s": makespan,
        "drained": drained_at is not None,
        "ideal_s": run.scenario.ideal_makespan(),
        "to_admit_s": {c: _mean(r.to_admit_s for r in rs if r.ever_admitted) for c, rs in classes.items()},
        "observed_to_admit_s": {
            c: _mean(r.observed_to_admit_s for r in rs if r.ever_admitted) for c, rs in classes.items()
        },
        "admitted_by_class": {c: sum(r.ever_admitted for r in rs) for c, rs in classes.items()},
        "evictions": {c: sum(r.evictions for r in rs) for c, rs in classes.items()},
        "kueue_usage_pct": rec.class_usage(),
        "usage_pct": 100 * rec.usage_integral / (capacity * makespan) if capacity and makespan else 0.0,
        "admissions": len(rec.admissions),
        "admissions_per_s": len(rec.admissions) / admitted_span if admitted_span > 0 else float("nan"),
        "cpu_s": cpu,
        "peak_rss_mib": {k: v / 2**20 for k, v in processes.peak_rss.items()},
        "quota_checks": rec.checks,
        "violations": rec.violations[:5],
        "violation_count": len(rec.violations),
        "runner_errors": run.errors[:3],
        "load": (load_before, os.getloadavg()[0]),
    }


def run_once(
    scenario: Scenario,
    profile: Path | None,
    timeout: float,
    client_connection: Obj | None = None,
    trace: Path | None = None,
) -> Obj:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "server").start()
        operator: OperatorProcess | None = None
        spies: list[subprocess.Popen[bytes]] = []
        metrics_port = free_port()
        try:
            with Kube(config.from_kubeconfig(server.kubeconfig)) as kube:
                install_crds(kube)
                write_operator_config(
                    kube,
                    {
                        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
                        "health": {"bindAddress": "0"},
                        "queueing": {"capacityCheck": False},
                        "instascale": {"enabled": False},
                        **({"clientConnection": client_connection} if client_connection else {}),
                    },
                )
            operator = OperatorProcess(server.kubeconfig, Path(tmp) / "operator.log").start()
            try:
                wait_for(lambda: "queueing controller synced" in operator.log(), 120, what="operator synced")
            except AssertionError:
                raise SystemExit(f"the operator did not start:\n{operator.log()[-3000:]}") from None
            assert operator.proc is not None and server.proc is not None
            pids = {"operator": operator.proc.pid, "server": server.proc.pid}
            if profile is not None:
                spies = [py_spy(pid, profile / f"{name}.txt") for name, pid in pids.items()]
            result = asyncio.run(replay(scenario, server.kubeconfig, Processes(pids), timeout, trace))
            result["operator_log_tail"] = operator.log()[-1500:]
            if trace is not None:
                (trace / "operator.log").write_text(operator.log())
            result.update(client_requests(metrics_port))
        finally:
            for spy in spies:
                spy.send_signal(2)  # SIGINT: py-spy writes what it sampled
                with contextlib.suppress(subprocess.TimeoutExpired):
                    spy.wait(60)
            if operator is not None:
                operator.stop()
            server.stop()
    return result


def client_requests(port: int) -> Obj:
    """What the operator's API client sent, from its metrics: requests by "verb resource (priority)"
    and the seconds they waited for rate-limit tokens, by priority; and its scheduling cycles
    (Kueue's admission attempts: how many, seconds in all)."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    sent: dict[str, float] = {}
    waited: dict[str, float] = {}
    cycles = {"count": 0.0, "sum": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name.startswith("kueue_admission_attempt_duration_seconds_"):
                part = sample.name.rsplit("_", 1)[1]
                if part in cycles:
                    cycles[part] += sample.value
            elif sample.name == "codeflare_client_requests_total":
                key = f"{labels['verb']} {labels['resource']} ({labels['priority']})"
                sent[key] = sent.get(key, 0.0) + sample.value
            elif sample.name == "codeflare_client_rate_limiter_duration_seconds_sum":
                waited[labels["priority"]] = sample.value
    return {"client_requests": sent, "client_throttled_s": waited, "cycles": cycles}


def py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """``py-spy record`` of ``pid`` in raw (collapsed stacks) form; py-spy is a separate install."""
    exe = Path(sys.executable).with_name("py-spy")
    if not exe.exists():
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    out.parent.mkdir(parents=True, exist_ok=True)
    args = [
        str(exe),
        "record",
        "--pid",
        str(pid),
        "--rate",
        "50",
        "--format",
        "raw",
        "--nonblocking",
        "-o",
        str(out),
    ]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# -- the report ----------------------------------------------------------------------------------
CLASSES = ("small", "medium", "large")


def _median(results: list[Obj], pick: Any) -> float:
    return statistics.median(pick(r) for r in results)


def report(scenario: Scenario, results: list[Obj], limits: Obj | None = None) -> str:
    """Markdown: every run, the median, and the rangespec conditions on the median."""
    published = scenario.document.get("published") or {} if scenario.scale == 1 else {}  # full scale only
    kueue_wall = published.get("wallMs", 0) / 1000
    ideal = scenario.ideal_makespan()
    median: Obj = {
        "wall_s": _median(results, lambda r: r["wall_s"]),
        "kueue_usage_pct": {"cq": _median(results, lambda r: r["kueue_usage_pct"].get("cq", 0.0))},
        "to_admit_s": {
            c: _median(results, lambda r, c=c: r["to_admit_s"].get(c, float("nan"))) for c in CLASSES
        },
    }
    head = ["measure", *[f"run {i + 1}" for i in range(len(results))], "median", "Kueue (published)"]
    rows: list[list[str]] = []

    def row(label: str, pick: Any, fmt: str, kueue: str = "") -> None:
        values = [pick(r) for r in results]
        rows.append([label, *[fmt.format(v) for v in values], fmt.format(statistics.median(values)), kueue])

    row("wall (s)", lambda r: r["wall_s"], "{:.1f}", f"{kueue_wall:.0f}" if kueue_wall else "")
    row("makespan, last Finished (s)", lambda r: r["makespan_s"], "{:.1f}")
    row(
        "wall / ideal",
        lambda r: r["wall_s"] / ideal,
        "{:.2f}x",
        f"{kueue_wall / ideal:.2f}x" if kueue_wall else "",
    )
    kueue_admit = published.get("wlClassesAvgTimeToAdmissionMs") or {}
    for c in CLASSES:
        row(
            f"{c}: avg time to admission, Kueue's method (s)",
            lambda r, c=c: r["to_admit_s"].get(c, float("nan")),
            "{:.1f}",
            f"{kueue_admit[c] / 1000:.1f}" if c in kueue_admit else "",
        )
        row(
            f"{c}: avg, observed by the client (s)",
            lambda r, c=c: r["observed_to_admit_s"].get(c, float("nan")),
            "{:.2f}",
        )
    kueue_usage = (published.get("clusterQueueClassesUsage") or {}).get("cq")
    row(
        "ClusterQueue usage, Kueue's method (% of nominal)",
        lambda r: r["kueue_usage_pct"].get("cq", 0.0),
        "{:.1f}",
        f"{kueue_usage}" if kueue_usage else "",
    )
    row("usage from admissions over the makespan (%)", lambda r: r["usage_pct"], "{:.1f}")
    row("admissions", lambda r: r["admissions"], "{:.0f}")
    row("admissions/s (first creation to last admission)", lambda r: r["admissions_per_s"], "{:.1f}")
    row("preemptions (evictions)", lambda r: sum(r["evictions"].values()), "{:.0f}")
    if all("cycles" in r for r in results):
        row("scheduling cycles", lambda r: r["cycles"]["count"], "{:.0f}")
        row(
            "scheduling cycle, mean decision time (ms)",
            lambda r: 1000 * r["cycles"]["sum"] / max(1.0, r["cycles"]["count"]),
            "{:.1f}",
        )
    for proc in ("operator", "server"):
        row(f"{proc} CPU (s)", lambda r, p=proc: r["cpu_s"][p], "{:.0f}")
        row(f"{proc} peak RSS (MiB)", lambda r, p=proc: r["peak_rss_mib"].get(p, 0.0), "{:.0f}")
    row("quota checks", lambda r: r["quota_checks"], "{:.0f}")
    row("quota violations", lambda r: r["violation_count"], "{:.0f}", "0 (never over quota)")
    row("1-min load before / after", lambda r: r["load"][0], "{:.1f}")
    rows[-1][1:-2] = [f"{r['load'][0]:.1f} / {r['load'][1]:.1f}" for r in results]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    checks = [
        "",
        f"Kueue's pass conditions on the median (rangespec of {scenario.name}; issue 18's thresholds)"
        + ("" if scenario.scale == 1 else ", set for the full-scale run and shown for orientation only")
        + ":",
        "",
    ]
    checks += ["| condition | median | pass |", "|---|---|---|"]
    checks += [f"| {c} | {v} | {'pass' if ok else 'FAIL'} |" for c, v, ok in conditions(scenario, median)]
    if "rangespecAtHead" in scenario.document:
        at_head = conditions(scenario, median, "rangespecAtHead")
        checks += [
            "",
            "At Kueue's HEAD rangespec: "
            + "; ".join(f"{c}: {'pass' if ok else 'FAIL'}" for c, _, ok in at_head),
        ]
    workloads = scenario.workloads
    intro = (
        f"Kueue's scheduler performance test, config `{scenario.name}` at scale {scenario.scale:g} "
        f"({len(scenario.queues)} ClusterQueues, {workloads} Workloads), replayed through a "
        f"`codeflare server` and a `codeflare operator` (clientConnection {client_limits(limits)}) by "
        "`benchmarks/kueue_baseline_bench.py`; ideal makespan "
        f"{ideal:.1f} s. Not finished within the timeout: "
        + ", ".join(f"run {i + 1}: {r['workloads'] - r['finished']}" for i, r in enumerate(results))
        + "."
    )
    return intro + "\n\n" + "\n".join(lines) + "\n" + "\n".join(checks) + request_table(results)


def request_table(results: list[Obj]) -> str:
    """The operator client's requests by verb, resource and priority in each run, most first, with
    the seconds that priority's requests waited for tokens in all."""
    if not all("client_requests" in r for r in results):
        return ""
    keys = sorted(
        {k for r in results for k in r["client_requests"]},
        key=lambda k: -results[0]["client_requests"].get(k, 0),
    )
    head = ["operator requests (verb resource (priority))", *[f"run {i + 1}" for i in range(len(results))]]
    lines = ["", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in [*keys, "all"]:
        counts = [
            sum(r["client_requests"].values()) if key == "all" else r["client_requests"].get(key, 0)
            for r in results
        ]
        lines.append(f"| {key} | " + " | ".join(f"{c:.0f}" for c in counts) + " |")
    for level in sorted({p for r in results for p in r["client_throttled_s"]}):
        waits = [r["client_throttled_s"].get(level, 0.0) for r in results]
        lines.append(
            f"| waited for tokens, {level} (s, summed) | " + " | ".join(f"{w:.0f}" for w in waits) + " |"
        )
    return "\n".join(lines)


def client_limits(limits: Obj | None) -> str:
    qps, burst = (limits or {}).get("qps"), (limits or {}).get("burst")
    if qps is None and burst is None:
        return "at its defaults, qps 50 / burst 100"
    return f"qps {qps if qps is not None else 50:g} / burst {burst if burst is not None else 100}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--config", default="baseline", choices=("baseline", "large-scale"))
    parser.add_argument(
        "--scale", type=float, default=1.0, help="workload counts x SCALE (0.1 for a quick run)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run at most")
    parser.add_argument("--profile", type=Path, help="py-spy the operator and server into DIR/<run>/")
    parser.add_argument(
        "--qps", type=float, help="the operator's clientConnection.qps (default: its own, 50)"
    )
    parser.add_argument(
        "--burst", type=int, help="the operator's clientConnection.burst (default: its own, 100)"
    )
    parser.add_argument(
        "--trace",
        type=Path,
        help="keep DIR/<run>/workloads.tsv (every Workload event seen: epoch s, key, state) and operator.log",
    )
    parser.add_argument("--json", type=Path, help="also write every run's figures to this file")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    scenario = load(args.config, args.scale)
    results = []
    limits = {k: v for k, v in (("qps", args.qps), ("burst", args.burst)) if v is not None}
    for i in range(args.runs):
        profile = args.profile / f"run{i + 1}" if args.profile else None
        trace = args.trace / f"run{i + 1}" if args.trace else None
        result = run_once(scenario, profile, args.timeout, limits, trace)
        log_tail = result.pop("operator_log_tail")
        print(yaml.safe_dump({f"run {i + 1}": result}, sort_keys=False), flush=True)
        if result["finished"] < result["workloads"]:
            print(log_tail, flush=True)
        results.append(result)
    if args.json:
        args.json.write_text(yaml.safe_dump(results, sort_keys=False))
    markdown = report(scenario, results, limits)
    print(markdown)
    if not args.no_write:
        suffix = ("" if args.scale == 1 else f"-x{args.scale:g}") + ("-qps" if limits else "")
        write_section(f"kueue-{args.config}{suffix}", markdown)


if __name__ == "__main__":
    main()
