"""Services as kube-apiserver validates them (``pkg/apis/core/validation`` ValidateService).

The type from its enum; at least one port unless the Service is ExternalName or headless
(``clusterIP: None``); each port 1-65535 with a known protocol; names required when there is
more than one port, DNS-1123 labels, and unique; a numeric targetPort in range or a
valid port name. Deliberately not here: IP families, node ports, load balancer fields.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.registry.builtin_validation.common import (
    PORT_RANGE,
    PROTOCOLS,
    duplicate_names,
    is_int,
    objects,
    one_of,
    port_name,
    port_number,
)
from codeflare.k8s.names import is_dns1123_label
from codeflare.k8s.schema.field import ErrorType, FieldError

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def validate_service(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    errs = one_of(spec.get("type"), "spec.type", SERVICE_TYPES)
    ports = list(objects(spec.get("ports"), "spec.ports"))
    headless = spec.get("clusterIP") == "None"
    if not spec.get("ports") and spec.get("type") != "ExternalName" and not headless:
        errs.append(FieldError(ErrorType.REQUIRED, "spec.ports", ""))
    for path, port in ports:
        if len(ports) > 1 and not port.get("name"):
            errs.append(FieldError(ErrorType.REQUIRED, f"{path}.name", ""))
        name = port.get("name")
        if isinstance(name, str) and name:  # a DNS-1123 label here; container ports are IANA names
            errs += [FieldError(ErrorType.INVALID, f"{path}.name", m, name) for m in is_dns1123_label(name)]
        number = port.get("port")
        if number in (None, 0):  # IsValidPortNum: 0 is out of range, not missing
            errs.append(FieldError(ErrorType.INVALID, f"{path}.port", PORT_RANGE, 0))
        else:
            errs += port_number(number, f"{path}.port", required=False)
        errs += one_of(port.get("protocol"), f"{path}.protocol", PROTOCOLS)
        target = port.get("targetPort")
        if is_int(target):
            errs += port_number(target, f"{path}.targetPort", required=False)
        elif isinstance(target, str):
            errs += port_name(target, f"{path}.targetPort")
    errs += duplicate_names(ports)
    return errs
