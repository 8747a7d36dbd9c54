"""Runs a controller conformance case against the real API server and operator, with the official client.

Every case gets its own namespace (``<tag>-ns``) and its cluster-scoped names (flavors,
ClusterQueues, cohorts, priority classes, extra namespaces) prefixed with ``<tag>-``, so the
cases of a module share one API server and one operator. Actions go through the official
``kubernetes`` client; each expectation polls (tests/support/polling) until the API shows it.
A ``<name>`` in an expected message stands for the prefixed cluster-scoped name. A case's
pending reason is Kueue v0.14's ("Pending", "Inadmissible"): it also matches the 0.19 code that
Kueue writes in its place (``reason_codes.legacy_reason``).
"""

from __future__ import annotations

import copy
import logging
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from codeflare.api.kueue_conversion import to_v1beta1, to_v1beta2
from codeflare.k8s.quantity import Quantity
from codeflare.operator.queueing.reason_codes import legacy_reason
from tests.conformance.controller_dsl import Case, Obj, Step
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ThreadedOperator
from tests.support.polling import wait_for

log = logging.getLogger(__name__)
# The cases are written in v1beta1 (Kueue v0.14's tests); they run at v1beta2, the version the
# operator speaks and the server stores: objects and patches go in converted up, reads come back
# converted down for the expectations (codeflare.api.kueue_conversion, the webhook's own mapping).
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
PLURALS = {
    "ResourceFlavor": "resourceflavors",
    "ClusterQueue": "clusterqueues",
    "LocalQueue": "localqueues",
    "Workload": "workloads",
    "WorkloadPriorityClass": "workloadpriorityclasses",
    "Cohort": "cohorts",
}
NAMESPACED = {"LocalQueue", "Workload"}
TIMEOUT = 20.0
FINALIZER = "kueue.x-k8s.io/resource-in-use"


def _patch_v1beta2(kind: str, body: Obj) -> Obj:
    """A case's v1beta1 merge patch in v1beta2 names (e.g. ``cohort`` -> ``cohortName``)."""
    converted = to_v1beta2({"apiVersion": f"{GROUP}/v1beta1", "kind": kind, **body})
    return {key: value for key, value in converted.items() if key not in ("apiVersion", "kind")}


class CaseRun:
    """One case's objects and steps carried out under its tag."""

    def __init__(self, api: k8s.ApiClient, tag: str) -> None:
        self.custom = k8s.CustomObjectsApi(api)
        self.core = k8s.CoreV1Api(api)
        self.tag = tag
        self.ns = f"{tag}-ns"

    # -- names ---------------------------------------------------------------------------------
    def name(self, short: str) -> str:
        return f"{self.tag}-{short}"

    def _message(self, text: str) -> str:
        return re.sub(r"<([a-z0-9-]+)>", lambda m: self.name(m.group(1)), text)

    def _renamed(self, obj: Obj) -> Obj:
        out = copy.deepcopy(obj)
        kind, meta, spec = out["kind"], out.setdefault("metadata", {}), out.get("spec") or {}
        if kind in NAMESPACED:
            meta["namespace"] = self.name(meta["namespace"]) if meta.get("namespace") else self.ns
        else:
            meta["name"] = self.name(meta["name"])
        self._rename_spec(kind, spec)
        return out

    def _rename_spec(self, kind: str, spec: Obj) -> None:
        if kind == "Cohort" and spec.get("parentName"):
            spec["parentName"] = self.name(spec["parentName"])
        if kind in ("ClusterQueue", "Cohort"):
            if spec.get("cohort"):
                spec["cohort"] = self.name(spec["cohort"])
            for group in spec.get("resourceGroups") or []:
                for flavor in group.get("flavors") or []:
                    flavor["name"] = self.name(flavor["name"])
        if kind == "LocalQueue" and spec.get("clusterQueue"):
            spec["clusterQueue"] = self.name(spec["clusterQueue"])

    # -- API -------------------------------------------------------------------------------------
    def _namespace(self, kind: str, namespace: str | None) -> str | None:
        if kind not in NAMESPACED:
            return None
        return self.name(namespace) if namespace else self.ns

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        if "/" in name:  # "<namespace>/<name>": a Workload or LocalQueue of another namespace of the case
            namespace, name = name.split("/", 1)
        if kind == "Namespace":
            return dict(self.core.read_namespace(self.name(name)).to_dict())
        ns = self._namespace(kind, namespace)
        real = name if kind in NAMESPACED else self.name(name)
        if ns is None:
            result: Obj = self.custom.get_cluster_custom_object(GROUP, VERSION, PLURALS[kind], real)
        else:
            result = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURALS[kind], real)
        return to_v1beta1(result)

    def setup(self) -> None:
        self.core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=self.ns)))

    def create(self, obj: Obj) -> None:
        if obj["kind"] == "Namespace":
            meta = obj["metadata"]
            body = k8s.V1Namespace(
                metadata=k8s.V1ObjectMeta(name=self.name(meta["name"]), labels=meta["labels"])
            )
            self.core.create_namespace(body)
            return
        body = to_v1beta2(self._renamed(obj))
        plural, ns = PLURALS[obj["kind"]], body["metadata"].get("namespace")
        if ns:
            self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, plural, body)
        else:
            self.custom.create_cluster_custom_object(GROUP, VERSION, plural, body)

    def patch(self, kind: str, name: str, body: Obj, namespace: str | None) -> None:
        body = copy.deepcopy(body)
        self._rename_spec(kind, body.get("spec") or {})
        if kind == "Namespace":
            self.core.patch_namespace(self.name(name), body)
            return
        body = _patch_v1beta2(kind, body)
        ns = self._namespace(kind, namespace)
        real = name if kind in NAMESPACED else self.name(name)
        if ns is None:
            self.custom.patch_cluster_custom_object(GROUP, VERSION, PLURALS[kind], real, body)
        else:
            self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURALS[kind], real, body)

    def delete(self, kind: str, name: str) -> None:
        ns = self._namespace(kind, None)
        real = name if kind in NAMESPACED else self.name(name)
        if ns is None:
            self.custom.delete_cluster_custom_object(GROUP, VERSION, PLURALS[kind], real)
        else:
            self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURALS[kind], real)

    def finish(self, name: str) -> bool:
        """Finished=True on the Workload (``util.FinishWorkloads``); False on a conflict (retried)."""
        wl = self.get("Workload", name)
        namespace = wl["metadata"]["namespace"]
        conditions = [c for c in (wl.get("status") or {}).get("conditions") or [] if c["type"] != "Finished"]
        conditions.append(
            {
                "type": "Finished",
                "status": "True",
                "reason": "Succeeded",
                "message": "Job finished successfully",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        )
        wl["status"] = {**(wl.get("status") or {}), "conditions": conditions}
        try:
            self.custom.replace_namespaced_custom_object_status(
                GROUP, VERSION, namespace, "workloads", wl["metadata"]["name"], to_v1beta2(wl)
            )
        except ApiException as exc:
            if exc.status == 409:
                return False
            raise
        return True

    # -- expectations -------------------------------------------------------------------------------
    def _condition(self, obj: Obj, type_: str) -> Obj:
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == type_:
                return dict(cond)
        return {}

    def _admitted(self, name: str, cq: str, flavors: dict[str, str] | None, count: int | None) -> Any:
        wl = self.get("Workload", name)
        admission = (wl.get("status") or {}).get("admission") or {}
        if (
            admission.get("clusterQueue") != self.name(cq)
            or self._condition(wl, "QuotaReserved").get("status") != "True"
        ):
            return False
        first = (admission.get("podSetAssignments") or [{}])[0]
        if flavors is not None and first.get("flavors") != {r: self.name(f) for r, f in flavors.items()}:
            return False
        return count is None or first.get("count") == count

    def _pending(self, name: str, reason: str, message: str | None) -> bool:
        wl = self.get("Workload", name)
        cond = self._condition(wl, "QuotaReserved")
        if (
            (wl.get("status") or {}).get("admission")
            or cond.get("status") != "False"
            or reason not in (cond.get("reason"), legacy_reason(str(cond.get("reason"))))
        ):
            return False
        return message is None or self._message(message) in str(cond.get("message"))

    def _gone(self, kind: str, name: str) -> bool:
        try:
            self.get(kind, name)
        except ApiException as exc:
            return exc.status == 404
        return False

    def check(self, step: Step) -> Any:
        verb, args, opts = step.verb, step.args, step.options
        if verb == "admitted":
            cq, names = args
            return all(self._admitted(n, cq, opts["flavors"], opts["count"]) for n in names)
        if verb == "admitted_count":
            cq, count, names = args
            return sum(1 for n in names if self._admitted(n, cq, None, None)) == count
        if verb == "lq_usage":
            lq, op, milli, resource = args
            fair = (self.get("LocalQueue", lq).get("status") or {}).get("fairSharing") or {}
            consumed = (fair.get("admissionFairSharingStatus") or {}).get("consumedResources") or {}
            if len(consumed) != 1 or resource not in consumed:
                return op == "==" and milli == 0 and not consumed
            value = Quantity.parse(consumed[resource]).milli
            return {">": value > milli, "==": value == milli, "<": value < milli}[op]
        if verb == "pending":
            return all(self._pending(n, opts["reason"], opts["message"]) for n in args)
        if verb == "evicted":
            return all(
                self._condition(self.get("Workload", n), "Evicted").get("reason") == opts["reason"]
                and self._condition(self.get("Workload", n), "Evicted").get("status") == "True"
                for n in args
            )
        if verb in ("counts", "lq_counts"):
            name, want_pending, want_admitted = args
            status = self.get("ClusterQueue" if verb == "counts" else "LocalQueue", name).get("status") or {}
            return (status.get("pendingWorkloads"), status.get("admittedWorkloads")) == (
                want_pending,
                want_admitted,
            )
        if verb == "condition":
            kind, name, type_, want_status, reason = args
            cond = self._condition(self.get(kind, name), type_)
            ok = (cond.get("status"), cond.get("reason")) == (want_status, reason)
            return ok and (opts["message"] is None or self._message(opts["message"]) == cond.get("message"))
        if verb == "lacks_condition":
            kind, name, type_ = args
            return not self._condition(self.get(kind, name), type_)
        if verb == "gone":
            return self._gone(*args)
        if verb == "has_finalizer":
            return FINALIZER in (self.get(*args)["metadata"].get("finalizers") or [])
        if verb == "finalized":
            meta = self.get(*args)["metadata"]
            return bool(meta.get("deletionTimestamp")) and FINALIZER in (meta.get("finalizers") or [])
        if verb == "spec_is":
            kind, name, path, value = args
            node: Any = self.get(kind, name)
            for part in path.split("."):
                node = (node or {}).get(part)
            return node == value
        raise ValueError(f"unknown step {verb}")

    def act(self, step: Step) -> None:
        verb, args = step.verb, step.args
        if verb == "create":
            for obj in args:
                self.create(obj)
        elif verb == "patch":
            self.patch(*args, step.options.get("namespace"))
        elif verb == "delete":
            self.delete(*args)
        elif verb == "next_second":
            second = int(time.time())
            wait_for(lambda: int(time.time()) > second, 2.0, 0.02, what="the next second")
        elif verb == "finish":
            for name in args:
                wait_for(lambda n=name: self.finish(n), TIMEOUT, 0.05, what=f"finishing {name}")
        else:
            last: list[Any] = []

            def probe() -> Any:
                last[:] = [self.describe(step)]
                return self.check(step)

            try:
                wait_for(probe, TIMEOUT, 0.05, what=f"{verb} {args}")
            except AssertionError as exc:
                raise AssertionError(f"{verb} {args} {step.options}: never seen; last: {last}") from exc

    def describe(self, step: Step) -> Any:
        """What the objects of an expectation look like now (for the failure message)."""
        names = step.args[1] if step.verb == "admitted" else step.args
        if step.verb in ("admitted", "pending", "evicted"):
            out: dict[str, Any] = {}
            for name in names:
                try:
                    with_status = self.get("Workload", name).get("status") or {}
                except ApiException as exc:
                    out[name] = exc.status
                    continue
                out[name] = {
                    "admission": with_status.get("admission"),
                    "conditions": [
                        (c["type"], c["status"], c.get("reason"), c.get("message"))
                        for c in with_status.get("conditions") or []
                    ],
                }
            return out
        return step.args


def run_case(api: k8s.ApiClient, tag: str, case: Case) -> None:
    run = CaseRun(api, tag)
    run.setup()
    for obj in case.objects:
        run.create(obj)
    for index, step in enumerate(case.steps):
        started = time.monotonic()
        try:
            run.act(step)
            log.debug("%s step %d %s took %.2fs", tag, index, step.verb, time.monotonic() - started)
        except AssertionError as exc:
            raise AssertionError(f"{case.source}: step {index} ({step.verb}): {exc}") from None


@contextmanager
def operator_client(apiserver: ServerProcess, operator_config: dict[str, Any]) -> Iterator[k8s.ApiClient]:
    """An operator (in a thread) with ``operator_config`` on ``apiserver``, and an official client
    of the server: what a module of cases runs against."""
    operator = ThreadedOperator(apiserver, operator_config).start()
    client = k8s_config.new_client_from_config(str(apiserver.kubeconfig))
    try:
        yield client
    finally:
        client.close()
        operator.stop()


def unlisted(keys: Iterable[str], doc: Path) -> list[str]:
    """The case keys that ``doc`` does not list as ``- <key>``."""
    listed = doc.read_text()
    return [key for key in keys if f"- {key}" not in listed]
