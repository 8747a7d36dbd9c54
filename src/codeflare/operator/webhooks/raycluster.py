"""Admission rules for RayClusters and RayJobs.

Mutation (create and update, idempotent): the operator version annotation; on create, queued
objects are suspended so nothing starts before admission (as Kueue's webhook does); with mTLS,
every Ray pod template gets the certificate init container, volumes and TLS environment; with
OAuth on OpenShift, the head gets the proxy sidecar, its volume and service account. Validation:
``enableIngress: true`` is refused (the operator exposes the dashboard), what the mutation
injected cannot later be changed or removed, and the queueing labels follow Kueue's job rules
(:mod:`.jobrules`; RayJobs too).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from codeflare.k8s.types import Obj
from codeflare.operator.queueing.jobs import owned_by_queued_job, queue_name
from codeflare.operator.raycluster import mtls, oauth
from codeflare.operator.webhooks.admission import (
    AdmissionRequest,
    AdmissionSettings,
    Verdict,
    allowed,
    denied,
)
from codeflare.operator.webhooks.jobrules import job_label_problems

VERSION_ANNOTATION = "ray.openshift.ai/version"
INJECTED_CONTAINERS = (oauth.CONTAINER_NAME,)
INJECTED_INIT_CONTAINERS = (mtls.INIT_CONTAINER,)
INJECTED_VOLUMES = (mtls.CA_VOLUME, mtls.CERT_VOLUME, oauth.TLS_VOLUME)


def pod_templates(spec: Obj) -> Iterator[tuple[str, Obj]]:
    """(field path, template) of the head and each worker group of a RayCluster spec."""
    head = (spec.get("headGroupSpec") or {}).get("template")
    if isinstance(head, dict):
        yield "spec.headGroupSpec.template", head
    for index, group in enumerate(spec.get("workerGroupSpecs") or []):
        template = group.get("template") if isinstance(group, dict) else None
        if isinstance(template, dict):
            yield f"spec.workerGroupSpecs[{index}].template", template


def _add_named(items: list[Any], item: Obj) -> list[Any]:
    """``items`` plus ``item`` unless an entry of that name is there already (never replaced)."""
    if any(isinstance(existing, dict) and existing.get("name") == item["name"] for existing in items):
        return items
    return [*items, item]


def _inject_mtls(template: Obj, cluster_name: str) -> None:
    pod = template.setdefault("spec", {})
    containers = pod.get("containers") or []
    if not containers or not isinstance(containers[0], dict):
        return
    ray = containers[0]
    image = str(ray.get("image", "rayproject/ray:latest"))
    pod["initContainers"] = _add_named(list(pod.get("initContainers") or []), mtls.init_container(image))
    for volume in mtls.volumes(cluster_name):
        pod["volumes"] = _add_named(list(pod.get("volumes") or []), volume)
    for variable in mtls.tls_env():
        ray["env"] = _add_named(list(ray.get("env") or []), variable)
    for mount in mtls.volume_mounts():
        ray["volumeMounts"] = _add_named(list(ray.get("volumeMounts") or []), mount)


def _inject_oauth(template: Obj, cluster_name: str, namespace: str) -> None:
    pod = template.setdefault("spec", {})
    pod["containers"] = _add_named(list(pod.get("containers") or []), oauth.sidecar(cluster_name, namespace))
    for volume in oauth.volumes(cluster_name):
        pod["volumes"] = _add_named(list(pod.get("volumes") or []), volume)
    pod.setdefault("serviceAccountName", oauth.service_account_name(cluster_name))


def _queued(obj: Obj) -> bool:
    return queue_name(obj) is not None and not owned_by_queued_job(obj)


def mutate_raycluster(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    rc = copy.deepcopy(request.obj)
    meta = rc.setdefault("metadata", {})
    name = str(meta.get("name") or request.name)
    if settings.operator_version:
        annotations = dict(meta.get("annotations") or {})
        annotations[VERSION_ANNOTATION] = settings.operator_version
        meta["annotations"] = annotations
    spec = rc.setdefault("spec", {})
    if request.operation == "CREATE" and _queued(rc):
        spec["suspend"] = True
    for path, template in pod_templates(spec):
        if settings.mtls_enabled:
            _inject_mtls(template, name)
        if settings.oauth_enabled and path == "spec.headGroupSpec.template":
            _inject_oauth(template, name, request.namespace)
    return allowed(rc)


def _by_name(items: Any) -> dict[str, Any]:
    return {str(i.get("name")): i for i in items or [] if isinstance(i, dict)}


def _injected_changes(old: Obj, new: Obj) -> list[str]:
    """What the update changes or removes among the items the mutation injected."""
    problems: list[str] = []
    new_templates = dict(pod_templates(new.get("spec") or {}))
    for path, old_template in pod_templates(old.get("spec") or {}):
        old_pod = old_template.get("spec") or {}
        new_pod = (new_templates.get(path) or {}).get("spec") or {}
        for field, names in (
            ("containers", INJECTED_CONTAINERS),
            ("initContainers", INJECTED_INIT_CONTAINERS),
            ("volumes", INJECTED_VOLUMES),
        ):
            before, after = _by_name(old_pod.get(field)), _by_name(new_pod.get(field))
            for item in names:
                if item in before and before[item] != after.get(item):
                    problems.append(
                        f"{path}.spec.{field}[name={item}]: injected by the CodeFlare operator; "
                        "it cannot be changed or removed"
                    )
        account = old_pod.get("serviceAccountName")
        name = str((old.get("metadata") or {}).get("name", ""))
        if account == oauth.service_account_name(name) and new_pod.get("serviceAccountName") != account:
            problems.append(
                f"{path}.spec.serviceAccountName: {account!r} is set by the CodeFlare operator for the "
                "OAuth proxy; it cannot be changed"
            )
    return problems


def validate_raycluster(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    spec = request.obj.get("spec") or {}
    problems: list[str] = []
    if (spec.get("headGroupSpec") or {}).get("enableIngress") is True:
        problems.append(
            "spec.headGroupSpec.enableIngress: must not be true; the CodeFlare operator exposes the "
            "dashboard itself (Ingress with kuberay.ingressDomain, or a Route on OpenShift)"
        )
    if request.operation == "UPDATE" and request.old is not None:
        problems += _injected_changes(request.old, request.obj)
    problems += job_label_problems(request.operation, request.obj, request.old)
    return denied(*problems) if problems else allowed()


def validate_rayjob(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    problems = job_label_problems(request.operation, request.obj, request.old)
    return denied(*problems) if problems else allowed()


def mutate_rayjob(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    job = copy.deepcopy(request.obj)
    if request.operation == "CREATE" and _queued(job):
        job.setdefault("spec", {})["suspend"] = True
    return allowed(job)
