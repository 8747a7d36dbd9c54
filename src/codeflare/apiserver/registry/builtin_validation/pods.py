"""Pod specs as kube-apiserver validates them, in Pods and in the templates of workloads.

From ``pkg/apis/core/validation`` (ValidatePodSpec, validateContainers, validateContainerPorts)
and the apps/batch rules on templates: at least one container; container names required,
DNS-1123 labels, unique across init and regular containers; an image for each container of a
Pod (templates may leave it to a controller); container ports 1-65535 with a known protocol
and valid, unique names; restartPolicy and imagePullPolicy from their enums, and the policies a
workload's template may use (Deployment, StatefulSet: Always; Job: OnFailure or Never).
Deliberately not here: volumes, probes, security contexts, resource limits versus requests.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.registry.builtin_validation.common import (
    PROTOCOLS,
    duplicate_names,
    objects,
    one_of,
    port_name,
    port_number,
)
from codeflare.k8s.names import is_dns1123_label
from codeflare.k8s.schema.field import ErrorType, FieldError

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def validate_pod(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    spec = obj.get("spec")
    return validate_pod_spec(spec if isinstance(spec, dict) else {}, "spec", for_pod=True)


def validate_deployment(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _template(obj, ("Always",))


def validate_stateful_set(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _template(obj, ("Always",))


def validate_job(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    return _template(obj, ("OnFailure", "Never"))


def _template(obj: dict[str, Any], policies: tuple[str, ...]) -> list[FieldError]:
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    if not isinstance(template, dict):
        return [FieldError(ErrorType.REQUIRED, "spec.template", "")] if isinstance(spec, dict) else []
    pod_spec = template.get("spec")
    path = "spec.template.spec"
    errs = validate_pod_spec(pod_spec if isinstance(pod_spec, dict) else {}, path, for_pod=False)
    restart = pod_spec.get("restartPolicy") if isinstance(pod_spec, dict) else None
    if not any(e.field == f"{path}.restartPolicy" for e in errs):
        errs += one_of(restart, f"{path}.restartPolicy", policies)
    return errs


def validate_pod_spec(spec: dict[str, Any], path: str, *, for_pod: bool) -> list[FieldError]:
    """The rules above for one PodSpec at ``path`` (``spec``, ``spec.template.spec``)."""
    errs: list[FieldError] = []
    containers = list(objects(spec.get("containers"), f"{path}.containers"))
    if not spec.get("containers"):
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.containers", ""))
    init = list(objects(spec.get("initContainers"), f"{path}.initContainers"))
    for cpath, container in init + containers:
        errs += _container(container, cpath, for_pod)
    errs += duplicate_names(init + containers)
    errs += one_of(spec.get("restartPolicy"), f"{path}.restartPolicy", RESTART_POLICIES)
    errs += one_of(spec.get("dnsPolicy"), f"{path}.dnsPolicy", DNS_POLICIES)
    return errs


def _container(container: dict[str, Any], path: str, for_pod: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    name = container.get("name")
    if not name:
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.name", ""))
    elif isinstance(name, str):
        errs += [FieldError(ErrorType.INVALID, f"{path}.name", msg, name) for msg in is_dns1123_label(name)]
    if for_pod and not container.get("image"):
        errs.append(FieldError(ErrorType.REQUIRED, f"{path}.image", ""))
    errs += one_of(container.get("imagePullPolicy"), f"{path}.imagePullPolicy", PULL_POLICIES)
    ports = list(objects(container.get("ports"), f"{path}.ports"))
    for ppath, port in ports:
        errs += port_number(port.get("containerPort"), f"{ppath}.containerPort", required=True)
        errs += port_number(port.get("hostPort"), f"{ppath}.hostPort", required=False)
        errs += port_name(port.get("name"), f"{ppath}.name")
        errs += one_of(port.get("protocol"), f"{ppath}.protocol", PROTOCOLS)
    errs += duplicate_names(ports)
    return errs
