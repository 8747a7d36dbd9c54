"""``forecast.codeflare.dev/v1alpha1`` FeasibilityCheck: "would this job be admitted, when, or never?"

A create-like review, as SubjectAccessReview is: ``POST .../namespaces/{ns}/feasibilitychecks``
with the described job in ``spec`` (``queueName``, ``podSets[]{name, count, requests}``,
``priority`` or ``priorityClassName``, ``durationSeconds``, ``jobKind``) is answered with the
same object and the engine's answer in ``status`` (:mod:`codeflare.scheduling.feasibility`);
nothing is stored. Served behind the aggregation layer on the visibility API's server pattern
(front-proxy client certificate, the user from its headers), registered as APIService
``v1alpha1.forecast.codeflare.dev``. Authorization: the user must be allowed to ``create``
Workloads (or the named job kind) in the namespace, asked with a SubjectAccessReview; the check
goes only through that namespace's LocalQueue, and workloads of other namespaces are counted,
never named. It does not create, admit or reserve anything.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import Any

from aiohttp import web

from codeflare.k8s.constants import LOOPBACK_PORT_ANNOTATION, MANAGED_BY_LABEL, OPERATOR_NAME
from codeflare.k8s.names import is_dns1123_label
from codeflare.k8s.quantity import QuantityError, format_milli
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.operator.config import WebhookConfig
from codeflare.operator.context import OperatorContext
from codeflare.operator.queueing.feeder import QueueingState
from codeflare.operator.queueing.forecasting import StartForecaster
from codeflare.operator.visibility.access import AccessReviewer
from codeflare.operator.visibility.controller import (
    APISERVICE,
    _front_proxy_trust,
    api_service_reference,
    serving_certificate,
)
from codeflare.operator.visibility.server import AggregatedServer, ApiStatus, FrontProxyTrust, RemoteUser
from codeflare.operator.webhooks.clientconfig import listen_port
from codeflare.scheduling import PodSet, Workload
from codeflare.scheduling.feasibility import Feasibility, check_feasibility
from codeflare.scheduling.forecast import fork

log = logging.getLogger(__name__)

CHECK = kinds.FEASIBILITY_CHECK
GROUP, VERSION, KIND, PLURAL = CHECK.group, CHECK.version, CHECK.kind, CHECK.plural
SERVICE_NAME = "codeflare-operator-forecast"
FIELD_MANAGER = "codeflare-forecast"
JOB_RESOURCES = {"RayCluster": kinds.RAYCLUSTER, "RayJob": kinds.RAYJOB, "AppWrapper": kinds.APPWRAPPER,
                 "Workload": kinds.WORKLOAD}  # fmt: skip
MAX_POD_SETS = 8


def invalid(field: str, message: str) -> ApiStatus:
    """A 422 naming the field, as the API server words field errors."""
    details = {"group": GROUP, "kind": PLURAL, "causes": [{"field": field, "message": message}]}
    return ApiStatus(422, "Invalid", f"{KIND}.{GROUP} is invalid: {field}: {message}", details)


def pod_sets_of(spec: Obj) -> tuple[PodSet, ...]:
    """``spec.podSets`` as engine pod sets; a bad entry is a 422 naming it."""
    items = spec.get("podSets")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_POD_SETS:
        raise invalid("spec.podSets", f"must be a list of 1 to {MAX_POD_SETS} pod sets")
    out = []
    for i, item in enumerate(items):
        where = f"spec.podSets[{i}]"
        if not isinstance(item, dict):
            raise invalid(where, "must be an object")
        name = item.get("name", "main")
        problems = is_dns1123_label(name) if isinstance(name, str) else ["must be a string"]
        if problems:
            raise invalid(f"{where}.name", "; ".join(problems))
        count = item.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise invalid(f"{where}.count", "must be an integer >= 1")
        requests = item.get("requests") or {}
        if not isinstance(requests, dict) or not requests:
            raise invalid(f"{where}.requests", "must map resource names to quantities")
        try:
            amounts: dict[str, Any] = {str(k): str(v) for k, v in requests.items()}
            out.append(PodSet(name, count, amounts))
        except QuantityError as exc:
            raise invalid(f"{where}.requests", str(exc)) from exc
    return tuple(out)


def job_of(
    namespace: str, body: Obj, priorities: dict[str, int], now: float
) -> tuple[Workload, float | None]:
    """The described job as an engine Workload, and its expected run time."""
    spec = body.get("spec")
    if not isinstance(spec, dict):
        raise invalid("spec", "must be an object")
    queue = spec.get("queueName")
    if not isinstance(queue, str) or not queue:
        raise invalid("spec.queueName", "required: the LocalQueue the job would be queued in")
    priority = spec.get("priority", 0)
    if isinstance(spec.get("priorityClassName"), str):
        if spec["priorityClassName"] not in priorities:
            raise invalid("spec.priorityClassName", f"no WorkloadPriorityClass {spec['priorityClassName']!r}")
        priority = priorities[spec["priorityClassName"]]
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise invalid("spec.priority", "must be an integer")
    duration = spec.get("durationSeconds")
    if duration is not None and (
        not isinstance(duration, int | float) or isinstance(duration, bool) or duration <= 0
    ):
        raise invalid("spec.durationSeconds", "must be a positive number of seconds")
    name = str((body.get("metadata") or {}).get("name") or "check")
    workload = Workload(namespace, name, queue, pod_sets_of(spec), priority, now)
    return workload, None if duration is None else float(duration)


def shown(keys: tuple[str, ...], namespace: str) -> tuple[list[str], int]:
    """Names of the workloads in the caller's namespace, and how many others there are."""
    own = [k.partition("/")[2] for k in keys if k.partition("/")[0] == namespace]
    return own, len(keys) - len(own)


def redacted(message: str, keys: tuple[str, ...], namespace: str) -> str:
    """``message`` with other namespaces' workload keys replaced by a count."""
    for key in keys:
        if key.partition("/")[0] != namespace:
            message = message.replace(key, "a workload of another namespace")
    return message


def status_of(answer: Feasibility, namespace: str) -> Obj:
    """The ``status`` of a FeasibilityCheck (other namespaces' workloads only counted)."""
    behind, behind_others = shown(answer.behind, namespace)
    preempts, preempt_others = shown(answer.preempts, namespace)
    status: Obj = {
        "verdict": answer.verdict,
        "message": redacted(answer.message, answer.behind + answer.preempts, namespace),
        "clusterQueue": answer.cluster_queue or "",
        "flavors": dict(answer.flavors),
        "behind": behind, "behindInOtherNamespaces": behind_others,
        "preempts": preempts, "preemptsInOtherNamespaces": preempt_others,
        "limits": [{"clusterQueue": lim.cluster_queue, "flavor": lim.flavor, "resource": lim.resource,
                    "needs": format_milli(lim.needs), "most": format_milli(lim.most),
                    "nominal": format_milli(lim.nominal), "borrowing": format_milli(lim.borrowing)}
                   for lim in answer.limits],
    }  # fmt: skip
    if answer.position is not None:
        status["position"] = answer.position
    if answer.estimated_start is not None:
        status["estimatedStart"] = format_rfc3339(answer.estimated_start)
    elif answer.verdict == "Wait":
        status["estimatedStart"] = "unbounded"
    if answer.reason:
        status["reason"] = answer.reason
    return status


class FeasibilityEndpoint:
    """The handler: validate, authorize, answer from a copy of the engine."""

    def __init__(self, ctx: OperatorContext, state: QueueingState, forecaster: StartForecaster,
                 access: AccessReviewer) -> None:  # fmt: skip
        self.ctx, self.state, self.forecaster, self.access = ctx, state, forecaster, access

    async def handle(self, request: web.Request, user: RemoteUser) -> web.StreamResponse:
        namespace = request.match_info["namespace"]
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiStatus(400, "BadRequest", f"the body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise ApiStatus(400, "BadRequest", "the body must be a FeasibilityCheck object")
        await self._authorize(user, namespace, (body.get("spec") or {}).get("jobKind", "Workload"))
        now = self.ctx.clock()
        job, duration = job_of(namespace, body, self.state.priorities, now)
        durations = self.forecaster.durations()
        engine = fork(self.state.engine)  # on the loop: a consistent copy; the work runs off it
        arrivals = self.forecaster.arrivals.expected(now)  # as the published estimates
        answer = await asyncio.to_thread(check_feasibility, engine, now, durations, job, duration, arrivals)
        reply = {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND,
                 "metadata": {**(body.get("metadata") or {}), "namespace": namespace},
                 "spec": body.get("spec"), "status": status_of(answer, namespace)}  # fmt: skip
        return web.json_response(reply, status=201)

    async def _authorize(self, user: RemoteUser, namespace: str, job_kind: Any) -> None:
        kind = JOB_RESOURCES.get(str(job_kind))
        if kind is None:
            raise invalid("spec.jobKind", f"must be one of {', '.join(JOB_RESOURCES)}")
        for asked in {kinds.WORKLOAD, kind}:
            attributes = {
                "verb": "create",
                "group": asked.group,
                "resource": asked.plural,
                "namespace": namespace,
            }
            if await self.access.allowed(user, attributes):
                return
        message = (f'{PLURAL}.{GROUP} is forbidden: User "{user.name}" cannot create resource '
                   f'"{kind.plural}" in API group "{kind.group}" in the namespace "{namespace}"')  # fmt: skip
        raise ApiStatus(403, "Forbidden", message, {"group": GROUP, "kind": PLURAL})


class ForecastServer(AggregatedServer):
    """The visibility API's HTTPS server and front-proxy authentication, serving this group."""

    def __init__(self, trust: FrontProxyTrust, endpoint: FeasibilityEndpoint) -> None:
        super().__init__(trust, [])
        self.endpoint = endpoint

    def app(self) -> web.Application:
        app = web.Application()
        base = f"/apis/{GROUP}/{VERSION}"
        app.router.add_post(
            f"{base}/namespaces/{{namespace}}/{PLURAL}", self._authenticated(self.endpoint.handle)
        )
        app.router.add_get(base, self._authenticated(self._listing))
        return app

    @staticmethod
    async def _listing(request: web.Request, user: RemoteUser) -> web.StreamResponse:
        resource = {"name": PLURAL, "singularName": "feasibilitycheck", "namespaced": True, "kind": KIND,
                    "verbs": ["create"]}  # fmt: skip
        return web.json_response({"kind": "APIResourceList", "apiVersion": "v1",
                                  "groupVersion": f"{GROUP}/{VERSION}", "resources": [resource]})  # fmt: skip


def registration(
    namespace: str, port: int, ca_bundle: bytes, settings: WebhookConfig | None = None
) -> tuple[Obj | None, Obj]:
    """The Service (with the loopback port the embedded API server resolves; None with
    ``webhook.service`` set, whose Service deploy/ ships) and the APIService."""
    settings = settings or WebhookConfig()
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": SERVICE_NAME,
            "namespace": namespace,
            "labels": {MANAGED_BY_LABEL: OPERATOR_NAME},
            "annotations": {LOOPBACK_PORT_ANNOTATION: str(port)},
        },
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port, "protocol": "TCP"}]},
    }
    spec = {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 100, "versionPriority": 100,
            "caBundle": base64.b64encode(ca_bundle).decode(),
            "service": api_service_reference(settings, namespace, "forecast", SERVICE_NAME)}  # fmt: skip
    api_service = {"apiVersion": APISERVICE.api_version, "kind": APISERVICE.kind,
                   "metadata": {"name": f"{VERSION}.{GROUP}", "labels": {MANAGED_BY_LABEL: OPERATOR_NAME}},
                   "spec": spec}  # fmt: skip
    return (service if settings.service is None else None), api_service


async def serve(ctx: OperatorContext, endpoint: FeasibilityEndpoint) -> None:
    """Serve until cancelled, registered once listening."""
    trust = await _front_proxy_trust(ctx)
    settings = ctx.config.webhook
    leaf, ca_pem = serving_certificate(settings, ctx.namespace, SERVICE_NAME)
    server = ForecastServer(trust, endpoint)
    host, _ = settings.listen
    try:
        port = await server.start(host, listen_port(settings, "forecast"), leaf.cert_pem, leaf.key_pem)
        delay = 0.5
        while True:
            try:
                service, api_service = registration(ctx.namespace, port, ca_pem, settings)
                if service is not None:
                    await ctx.kube.apply(kinds.SERVICE, service, field_manager=FIELD_MANAGER)
                await ctx.kube.apply(APISERVICE, api_service, field_manager=FIELD_MANAGER)
                break
            except errors.KubeError as exc:
                log.warning("cannot register the forecast API: %s; retrying", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        log.info("forecast API %s/%s registered (port %d)", GROUP, VERSION, port)
        await asyncio.Event().wait()
    finally:
        await server.stop()


def register(ctx: OperatorContext, state: QueueingState, forecaster: StartForecaster) -> list[Any]:
    """The forecast API's background coroutine (it does not hold back readiness: it is advice)."""
    endpoint = FeasibilityEndpoint(ctx, state, forecaster, AccessReviewer(ctx.kube.create))
    return [serve(ctx, endpoint)]
