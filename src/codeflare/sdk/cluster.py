"""``Cluster``: bring a Ray cluster up, watch it become ready, use it, tear it down.

Configuration is validated before any API call (:class:`ClusterConfiguration`); ``apply()`` is
a server-side apply with field manager ``codeflare`` (idempotent); ``status()`` is one GET of one
object; ``why_pending()`` returns the Workload's reason code and message with its queue position.
Every call goes through the one :class:`~codeflare.sdk.client.Client` the cluster was given (or
the default one).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from codeflare.api.kueue import is_default_local_queue, namespace_default_queue
from codeflare.api.raycluster import dashboard_name
from codeflare.errors import CodeFlareError, WaitTimeout
from codeflare.k8s.constants import DASHBOARD_URL_ANNOTATION, JOB_UID_LABEL
from codeflare.k8s.ownerrefs import owner_references
from codeflare.kube import errors, kinds
from codeflare.kube.kinds import Kind
from codeflare.sdk.applying import apply_keeping_admission
from codeflare.sdk.client import Client
from codeflare.sdk.config import ClusterConfiguration
from codeflare.sdk.raylink import dashboard_answers, job_client_for
from codeflare.sdk.status import (
    CodeFlareClusterStatus,
    QueuePositions,
    RayClusterInfo,
    explain_pending,
    info_of,
    status_of,
)

log = logging.getLogger(__name__)


class Cluster:
    """One Ray cluster described by a :class:`ClusterConfiguration`."""

    def __init__(self, config: ClusterConfiguration, client: Client | None = None) -> None:
        self.config = config
        self.client = client or Client.default()
        self.namespace = config.namespace or self.client.namespace
        if config.local_queue is None and config.suspend_when_queued:
            default = self.client.default_local_queue(self.namespace)
            if default is not None:
                config.local_queue = default
                config.validate()

    # -- what we create --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.name

    @property
    def _kind(self) -> Kind:
        return kinds.APPWRAPPER if self.config.appwrapper else kinds.RAYCLUSTER

    def manifest(self) -> dict[str, Any]:
        """The object ``apply()`` sends (validated against the CRD schema)."""
        from codeflare.api.builders import build_cluster_manifest

        return build_cluster_manifest(self.config, self.namespace)

    # -- lifecycle -------------------------------------------------------------------------------
    def apply(self) -> dict[str, Any]:
        """Create or update the cluster (server-side apply; calling it twice changes nothing)."""
        obj = apply_keeping_admission(self.client.kube, self._kind, self.manifest())
        log.info("applied %s", self._kind.ref(self.name, self.namespace))
        return obj

    def up(self) -> dict[str, Any]:
        """Bring the cluster up (same as :meth:`apply`)."""
        return self.apply()

    def down(self) -> None:
        """Delete the cluster and everything it owns."""
        self.client.kube.delete(self._kind, self.name, self.namespace)
        log.info("deleted %s", self._kind.ref(self.name, self.namespace))

    def _object(self) -> dict[str, Any] | None:
        return self.client.kube.find(self._kind, self.name, self.namespace)

    def _raycluster(self) -> dict[str, Any] | None:
        if not self.config.appwrapper:
            return self._object()
        return self.client.kube.find(kinds.RAYCLUSTER, self.name, self.namespace)

    def status(self) -> CodeFlareClusterStatus:
        """Queued, starting, ready or failed: one GET of the cluster's object."""
        obj = self._object()
        if obj is None:
            return CodeFlareClusterStatus.UNKNOWN
        state = status_of(obj)
        if self.config.appwrapper and state == CodeFlareClusterStatus.STARTING:
            rc = self.client.kube.find(kinds.RAYCLUSTER, self.name, self.namespace)
            if rc is not None and status_of(rc) == CodeFlareClusterStatus.READY:
                return CodeFlareClusterStatus.READY
        return state

    def cluster_dashboard_uri(self) -> str | None:
        """The Ray dashboard URL users and the Jobs client talk to (None until it is known)."""
        rc = self._raycluster()
        return dashboard_uri(self.client, rc) if rc is not None else None

    def _dashboard_answers(self, url: str) -> bool:
        return dashboard_answers(self.client, url, self._raycluster())

    def wait_ready(self, timeout: float | None = 600, progress: bool = True, poll: float = 1.0) -> None:
        """Wait until the cluster is ready and its dashboard answers, showing progress."""
        from codeflare.sdk.widgets import status_display  # a live widget in notebooks

        deadline = None if timeout is None else time.monotonic() + timeout
        with status_display(f"{self.namespace}/{self.name}", enabled=progress) as display:
            while True:
                state = self.status()
                detail = ""
                if state == CodeFlareClusterStatus.QUEUED:
                    detail = self.why_pending() or "waiting for admission"
                elif state == CodeFlareClusterStatus.FAILED:
                    rc = self._raycluster() or {}
                    reason = (rc.get("status") or {}).get("reason", "")
                    # a failure is not a timeout: callers (and the CLI's exit code) must tell them apart
                    raise CodeFlareError(f"cluster {self.namespace}/{self.name} failed: {reason}".strip())
                elif state == CodeFlareClusterStatus.READY:
                    url = self.cluster_dashboard_uri()
                    if url and self._dashboard_answers(url):
                        display.update("ready", f"dashboard {url}")
                        return
                    detail = "waiting for the dashboard to answer"
                display.update(state.name.lower(), detail)
                if deadline is not None and time.monotonic() > deadline:
                    raise WaitTimeout(
                        f"cluster {self.namespace}/{self.name} not ready after {timeout}s "
                        f"(status {state.name}{': ' + detail if detail else ''})"
                    )
                time.sleep(poll)

    def check(self, duration: float | None = None) -> Any:
        """Would this cluster be admitted now, later or never? Asks the operator; creates nothing
        (a :class:`~codeflare.sdk.check.CheckResult`)."""
        from codeflare.sdk.check import check_manifest

        return check_manifest(self.client, self._kind, self.manifest(), duration)

    def why_pending(self) -> str | None:
        """Why the cluster is not admitted yet: its Workload's reason code and message, and its
        position in the queue from the visibility API (a :class:`PendingReason`; None when admitted)."""
        obj = self._object()
        if obj is None:
            return None
        workloads = workloads_of(self.client, obj)
        if not workloads:
            if (obj.get("spec") or {}).get("suspend"):
                return "no Workload yet: the queueing controller has not seen this cluster"
            return None
        return explain_pending(workloads[0], QueuePositions(self.client.kube))

    def details(self) -> RayClusterInfo:
        rc = self._raycluster()
        if rc is None:
            raise errors.NotFound(
                f'RayCluster "{self.name}" not found',
                kind="RayCluster",
                name=self.name,
                namespace=self.namespace,
            )
        return info_of(rc, dashboard_uri(self.client, rc) or "")

    @property
    def job_client(self) -> Any:
        """Ray's ``JobSubmissionClient`` for this cluster's dashboard, with the credentials it needs."""
        url = self.cluster_dashboard_uri()
        if url is None:
            raise WaitTimeout(
                f"cluster {self.namespace}/{self.name} has no dashboard yet; call wait_ready() first"
            )
        return job_client_for(self.client, url, self._raycluster())

    def widget(self) -> Any:
        """Apply and down buttons with the cluster's state (notebook widgets; a line elsewhere)."""
        from codeflare.sdk.widgets import cluster_widget

        return cluster_widget(self)

    def __repr__(self) -> str:
        return f"Cluster({self.namespace}/{self.name})"


def dashboard_uri(
    client: Client,
    rc: dict[str, Any],
    ingresses: dict[str, dict[str, Any]] | None = None,
    routes: dict[str, dict[str, Any]] | None = None,
) -> str | None:
    """The dashboard URL: local mode's recorded one, the Ingress/Route host, or the head service.

    ``ingresses``/``routes`` (by name, from one list call each) spare GETs per cluster when listing.
    """
    meta = rc.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if annotations.get(DASHBOARD_URL_ANNOTATION):
        return str(annotations[DASHBOARD_URL_ANNOTATION])
    name, namespace = dashboard_name(str(meta.get("name"))), meta.get("namespace")
    ingress = _exposing(client, kinds.INGRESS, name, namespace, ingresses)
    if ingress is not None:
        rules = (ingress.get("spec") or {}).get("rules") or []
        if rules and rules[0].get("host"):
            scheme = "https" if (ingress.get("spec") or {}).get("tls") else "http"
            return f"{scheme}://{rules[0]['host']}"
    route = _exposing(client, kinds.ROUTE, name, namespace, routes) if ingress is None else None
    route_host = _route_host(route) if route is not None else None
    if route_host:
        return f"https://{route_host}"
    status = rc.get("status") or {}
    port = (status.get("endpoints") or {}).get("dashboard")
    ip = (status.get("head") or {}).get("serviceIP")
    if port and ip:
        return f"http://{ip}:{port}"
    return None


def _exposing(
    client: Client, kind: Kind, name: str, namespace: str | None, listed: dict[str, dict[str, Any]] | None
) -> dict[str, Any] | None:
    """The Ingress or Route ``name``: from the caller's listing when given, else one GET (None when
    it does not exist yet, or the cluster serves no such kind: Routes exist only on OpenShift)."""
    if listed is not None:
        return listed.get(name)
    try:
        return client.kube.find(kind, name, namespace)
    except errors.KubeError:
        return None


def _by_name(client: Client, kind: Kind, namespace: str) -> dict[str, dict[str, Any]]:
    """Every ``kind`` of the namespace by name, in one list call (none where the kind is not served)."""
    try:
        return {obj["metadata"]["name"]: obj for obj in client.kube.list(kind, namespace)}
    except errors.KubeError:
        return {}


def _route_host(route: dict[str, Any]) -> str | None:
    """The host an OpenShift Route serves (its spec's, else the one the router admitted)."""
    ingresses = (route.get("status") or {}).get("ingress") or []
    host = (route.get("spec") or {}).get("host") or (ingresses[0].get("host") if ingresses else None)
    return str(host) if host else None


def workloads_of(client: Client, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The Workloads the queueing controller made for ``obj`` (found by its uid label)."""
    meta = obj.get("metadata") or {}
    labels = {JOB_UID_LABEL: str(meta.get("uid", ""))}
    return client.kueue_list(kinds.WORKLOAD, meta.get("namespace"), labels=labels)


def get_cluster(name: str, namespace: str | None = None, client: Client | None = None) -> Cluster:
    """A :class:`Cluster` for an existing RayCluster (its configuration read back from the object)."""
    client = client or Client.default()
    namespace = namespace or client.namespace
    rc = client.kube.get(kinds.RAYCLUSTER, name, namespace)
    return Cluster(_config_from(rc), client)


def _config_from(rc: dict[str, Any]) -> ClusterConfiguration:
    info = info_of(rc)
    spec = rc.get("spec") or {}
    head = (
        ((spec.get("headGroupSpec") or {}).get("template") or {}).get("spec", {}).get("containers", [{}])[0]
    )
    head_res = head.get("resources") or {}
    owned_by_aw = any(o.get("kind") == "AppWrapper" for o in owner_references(rc))
    kwargs: dict[str, Any] = {
        "namespace": info.namespace,
        "num_workers": info.workers,
        "local_queue": info.local_queue,
        "appwrapper": owned_by_aw,
        "image": head.get("image") or ClusterConfiguration.__dataclass_fields__["image"].default,
        "suspend_when_queued": False,
    }
    for key, source in (
        ("head_cpu_requests", ("requests", "cpu")),
        ("head_cpu_limits", ("limits", "cpu")),
        ("head_memory_requests", ("requests", "memory")),
        ("head_memory_limits", ("limits", "memory")),
    ):
        value = (head_res.get(source[0]) or {}).get(source[1])
        if value is not None:
            kwargs[key] = value
    if info.worker_cpus:
        kwargs["worker_cpu_requests"] = kwargs["worker_cpu_limits"] = info.worker_cpus
    if info.worker_memory:
        kwargs["worker_memory_requests"] = kwargs["worker_memory_limits"] = info.worker_memory
    return ClusterConfiguration(info.name, **kwargs)


def list_all_clusters(namespace: str | None = None, client: Client | None = None) -> list[RayClusterInfo]:
    """Every RayCluster of the namespace: one list, plus one Ingress and one Route list only when a
    cluster has no recorded dashboard URL (never a request per cluster)."""
    client = client or Client.default()
    namespace = namespace or client.namespace
    clusters = client.kube.list(kinds.RAYCLUSTER, namespace)
    ingresses: dict[str, dict[str, Any]] = {}
    routes: dict[str, dict[str, Any]] = {}
    if any(not ((rc.get("metadata") or {}).get("annotations") or {}).get(DASHBOARD_URL_ANNOTATION)
           for rc in clusters):
        ingresses = _by_name(client, kinds.INGRESS, namespace)
        routes = _by_name(client, kinds.ROUTE, namespace)
    return [info_of(rc, dashboard_uri(client, rc, ingresses, routes) or "") for rc in clusters]


def list_all_queued(namespace: str | None = None, client: Client | None = None) -> list[dict[str, Any]]:
    """Every queued job that is not admitted yet, with its Workload's reason: one list call."""
    client = client or Client.default()
    out = []
    positions = QueuePositions(client.kube)
    for wl in client.kueue_list(kinds.WORKLOAD, namespace or client.namespace):
        reason = explain_pending(wl, positions)
        if reason is None:
            continue
        owner: dict[str, Any] = next(iter(owner_references(wl)), {})
        out.append(
            {
                "name": owner.get("name", wl["metadata"]["name"]),
                "kind": owner.get("kind", "Workload"),
                "namespace": wl["metadata"].get("namespace"),
                "queue": (wl.get("spec") or {}).get("queueName"),
                "workload": wl["metadata"]["name"],
                "reason": str(reason),  # plain text (yaml and friends do not take str subclasses)
                "reason_code": reason.reason,
                "message": reason.message,
                "position_in_cluster_queue": reason.position.cluster_queue if reason.position else None,
                "position_in_local_queue": reason.position.local_queue if reason.position else None,
                "position_note": reason.position_note,
            }
        )
    return out


def list_local_queues(namespace: str | None = None, client: Client | None = None) -> list[dict[str, Any]]:
    """Every LocalQueue of the namespace with its ClusterQueue and counters: one list call."""
    client = client or Client.default()
    queues = client.kueue_list(kinds.LOCAL_QUEUE, namespace or client.namespace)
    default = namespace_default_queue(queues)
    return [local_queue_summary(lq, lq["metadata"]["name"] == default) for lq in queues]


def local_queue_summary(lq: dict[str, Any], default: bool | None = None) -> dict[str, Any]:
    """What a user asks of a LocalQueue: its ClusterQueue, whether it is the namespace's default
    (``default``, as :func:`namespace_default_queue` decides over all its queues; when not given,
    whether it carries the default-queue annotation), its counters, and under admission fair
    sharing its recent usage (``consumedResources``; None when the operator samples none)."""
    status = lq.get("status") or {}
    sampled = (status.get("fairSharing") or {}).get("admissionFairSharingStatus") or {}
    return {
        "name": lq["metadata"]["name"],
        "namespace": lq["metadata"].get("namespace"),
        "cluster_queue": (lq.get("spec") or {}).get("clusterQueue"),
        "default": is_default_local_queue(lq) if default is None else default,
        "pending": status.get("pendingWorkloads", 0),
        "admitted": status.get("admittedWorkloads", 0),
        "flavors": [f.get("name") for f in status.get("flavorsUsage") or []],
        "recent_usage": dict(sampled["consumedResources"]) if "consumedResources" in sampled else None,
    }
