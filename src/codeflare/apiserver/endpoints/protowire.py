"""Decoding of the Kubernetes protobuf request bodies that kubectl sends without a JSON option.

Typed client-go clients, and so kubectl, post built-in objects as
``application/vnd.kubernetes.protobuf``: the reviews and TokenRequests of ``kubectl auth can-i``,
``auth whoami`` and ``create token``, and the objects its generator commands build (``kubectl create
configmap|secret|namespace|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding|quota|
priorityclass|service|deployment|job``). This module reads that envelope (``k8s\\0`` +
``runtime.Unknown``) and the protobuf wire format of exactly those kinds into the JSON-shaped dicts
a JSON client would send: empty strings, zero numbers and false booleans are left out as
``omitempty`` does (except where the Go field is a pointer or required, marked ``!`` below),
``map<string, bytes>`` values become base64 strings, quantities and int-or-strings become their
JSON scalars, and unknown fields are skipped. Field numbers are those of the Kubernetes
``generated.proto`` files (k8s.io/api, k8s.io/apimachinery meta/v1).

It encodes nothing, and the handlers use it only for the review/token requests and for creates
(POST); a protobuf PUT or status/scale write stays a 415. A kind outside the table (or known
under another apiVersion) is a 415 naming the accepted media types; a body that is not
well-formed protobuf of its kind, or whose envelope names another kind, is a 400; a known field
this decoder cannot turn into JSON (volumes, probes, security contexts, ...) is a 415 naming the
field rather than being dropped. Status (field 3 of most kinds) is never decoded.
"""

from __future__ import annotations

import base64
from typing import Any

from codeflare.apiserver import errors

MAGIC = b"k8s\x00"
ACCEPTED = "application/json, application/yaml"

# A schema maps a field number to (json name, type). Types:
#   "str" / "int" / "bool"     scalars, left out when empty/zero/false (Go omitempty)
#   "int!" / "bool!"           kept even when zero/false (pointer or required Go fields)
#   "strs"                     repeated string (empty elements kept: apiGroups [""])
#   "map" / "bmap" / "qmap"    map<string, string | bytes (base64) | Quantity>
#   "intstr"                   intstr.IntOrString as a JSON number or string
#   "bytes"                    raw bytes (the envelope's payload)
#   "reject"                   a known field with no JSON mapping here: 415 when set
#   "Name" / "[]Name"          a nested message / a repeated one
Schema = dict[int, tuple[str, str]]

_META: dict[str, Schema] = {
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes"), 3: ("contentEncoding", "str")},
    "TypeMeta": {1: ("apiVersion", "str"), 2: ("kind", "str")},
    "ObjectMeta": {
        1: ("name", "str"),
        2: ("generateName", "str"),
        3: ("namespace", "str"),
        5: ("uid", "str"),
        6: ("resourceVersion", "str"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "strs"),
    },
    "OwnerReference": {
        5: ("apiVersion", "str"),
        1: ("kind", "str"),
        3: ("name", "str"),
        4: ("uid", "str"),
        6: ("controller", "bool!"),
        7: ("blockOwnerDeletion", "bool!"),
    },
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "str"), 2: ("operator", "str"), 3: ("values", "strs")},
}

_REVIEWS: dict[str, Schema] = {
    "ResourceAttributes": {
        1: ("namespace", "str"),
        2: ("verb", "str"),
        3: ("group", "str"),
        4: ("version", "str"),
        5: ("resource", "str"),
        6: ("subresource", "str"),
        7: ("name", "str"),
    },
    "NonResourceAttributes": {1: ("path", "str"), 2: ("verb", "str")},
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "SubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
        3: ("user", "str"),
        4: ("groups", "strs"),
        6: ("uid", "str"),
    },
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "str")},
    "TokenReviewSpec": {1: ("token", "str"), 2: ("audiences", "strs")},
    "TokenRequestSpec": {1: ("audiences", "strs"), 4: ("expirationSeconds", "int!")},
}

_CORE: dict[str, Schema] = {
    "NamespaceSpec": {1: ("finalizers", "strs")},
    "ObjectReference": {
        1: ("kind", "str"),
        2: ("namespace", "str"),
        3: ("name", "str"),
        4: ("uid", "str"),
        5: ("apiVersion", "str"),
        6: ("resourceVersion", "str"),
        7: ("fieldPath", "str"),
    },
    "LocalObjectReference": {1: ("name", "str")},
    "ResourceQuotaSpec": {
        1: ("hard", "qmap"),
        2: ("scopes", "strs"),
        3: ("scopeSelector", "ScopeSelector"),
    },
    "ScopeSelector": {1: ("matchExpressions", "[]ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: ("scopeName", "str"),
        2: ("operator", "str"),
        3: ("values", "strs"),
    },
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "map"),
        3: ("clusterIP", "str"),
        18: ("clusterIPs", "strs"),
        4: ("type", "str"),
        5: ("externalIPs", "strs"),
        7: ("sessionAffinity", "str"),
        8: ("loadBalancerIP", "str"),
        9: ("loadBalancerSourceRanges", "strs"),
        10: ("externalName", "str"),
        11: ("externalTrafficPolicy", "str"),
        12: ("healthCheckNodePort", "int"),
        13: ("publishNotReadyAddresses", "bool"),
        14: ("sessionAffinityConfig", "reject"),
    },
    "ServicePort": {
        1: ("name", "str"),
        2: ("protocol", "str"),
        6: ("appProtocol", "str"),
        3: ("port", "int!"),
        4: ("targetPort", "intstr"),
        5: ("nodePort", "int"),
    },
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {
        1: ("volumes", "reject"),
        20: ("initContainers", "[]Container"),
        2: ("containers", "[]Container"),
        34: ("ephemeralContainers", "reject"),
        3: ("restartPolicy", "str"),
        4: ("terminationGracePeriodSeconds", "int!"),
        5: ("activeDeadlineSeconds", "int!"),
        6: ("dnsPolicy", "str"),
        7: ("nodeSelector", "map"),
        8: ("serviceAccountName", "str"),
        9: ("serviceAccount", "str"),
        21: ("automountServiceAccountToken", "bool!"),
        10: ("nodeName", "str"),
        11: ("hostNetwork", "bool"),
        12: ("hostPID", "bool"),
        13: ("hostIPC", "bool"),
        27: ("shareProcessNamespace", "bool!"),
        14: ("securityContext", "reject"),
        15: ("imagePullSecrets", "[]LocalObjectReference"),
        16: ("hostname", "str"),
        17: ("subdomain", "str"),
        18: ("affinity", "reject"),
        19: ("schedulerName", "str"),
        22: ("tolerations", "reject"),
        23: ("hostAliases", "reject"),
        24: ("priorityClassName", "str"),
        25: ("priority", "int!"),
        26: ("dnsConfig", "reject"),
        28: ("readinessGates", "reject"),
        29: ("runtimeClassName", "str"),
        30: ("enableServiceLinks", "bool!"),
        31: ("preemptionPolicy", "str"),
        32: ("overhead", "qmap"),
        33: ("topologySpreadConstraints", "reject"),
        35: ("setHostnameAsFQDN", "bool!"),
    },
    "Container": {
        1: ("name", "str"),
        2: ("image", "str"),
        3: ("command", "strs"),
        4: ("args", "strs"),
        5: ("workingDir", "str"),
        6: ("ports", "[]ContainerPort"),
        19: ("envFrom", "reject"),
        7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"),
        9: ("volumeMounts", "reject"),
        21: ("volumeDevices", "reject"),
        10: ("livenessProbe", "reject"),
        11: ("readinessProbe", "reject"),
        22: ("startupProbe", "reject"),
        12: ("lifecycle", "reject"),
        13: ("terminationMessagePath", "str"),
        20: ("terminationMessagePolicy", "str"),
        14: ("imagePullPolicy", "str"),
        15: ("securityContext", "reject"),
        16: ("stdin", "bool"),
        17: ("stdinOnce", "bool"),
        18: ("tty", "bool"),
    },
    "ContainerPort": {
        1: ("name", "str"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int!"),
        4: ("protocol", "str"),
        5: ("hostIP", "str"),
    },
    "EnvVar": {1: ("name", "str"), 2: ("value", "str"), 3: ("valueFrom", "reject")},
    "ResourceRequirements": {1: ("limits", "qmap"), 2: ("requests", "qmap"), 3: ("claims", "reject")},
}

_OTHER: dict[str, Schema] = {
    # rbac.authorization.k8s.io/v1
    "PolicyRule": {
        1: ("verbs", "strs"),
        2: ("apiGroups", "strs"),
        3: ("resources", "strs"),
        4: ("resourceNames", "strs"),
        5: ("nonResourceURLs", "strs"),
    },
    "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
    "Subject": {1: ("kind", "str"), 2: ("apiGroup", "str"), 3: ("name", "str"), 4: ("namespace", "str")},
    "RoleRef": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    # apps/v1
    "DeploymentSpec": {
        1: ("replicas", "int!"),
        2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"),
        4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int!"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int!"),
    },
    "DeploymentStrategy": {1: ("type", "str"), 2: ("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "intstr"), 2: ("maxSurge", "intstr")},
    # batch/v1
    "JobSpec": {
        1: ("parallelism", "int!"),
        2: ("completions", "int!"),
        3: ("activeDeadlineSeconds", "int!"),
        7: ("backoffLimit", "int!"),
        4: ("selector", "LabelSelector"),
        5: ("manualSelector", "bool!"),
        6: ("template", "PodTemplateSpec"),
        8: ("ttlSecondsAfterFinished", "int!"),
        9: ("completionMode", "str"),
        10: ("suspend", "bool!"),
    },
}

_MESSAGES: dict[str, Schema] = {**_META, **_REVIEWS, **_CORE, **_OTHER}

_META_1: Schema = {1: ("metadata", "ObjectMeta")}
_RBAC = "rbac.authorization.k8s.io/v1"
_AUTHZ = "authorization.k8s.io/v1"
_AUTHN = "authentication.k8s.io/v1"

# kind -> (apiVersion, top-level schema); status (field 3 of most kinds) is never decoded
_TOP: dict[str, tuple[str, Schema]] = {
    "SelfSubjectAccessReview": (_AUTHZ, {**_META_1, 2: ("spec", "SelfSubjectAccessReviewSpec")}),
    "SubjectAccessReview": (_AUTHZ, {**_META_1, 2: ("spec", "SubjectAccessReviewSpec")}),
    "LocalSubjectAccessReview": (_AUTHZ, {**_META_1, 2: ("spec", "SubjectAccessReviewSpec")}),
    "SelfSubjectRulesReview": (_AUTHZ, {**_META_1, 2: ("spec", "SelfSubjectRulesReviewSpec")}),
    "SelfSubjectReview": (_AUTHN, _META_1),
    "TokenReview": (_AUTHN, {**_META_1, 2: ("spec", "TokenReviewSpec")}),
    "TokenRequest": (_AUTHN, {**_META_1, 2: ("spec", "TokenRequestSpec")}),
    "ConfigMap": (
        "v1",
        {**_META_1, 2: ("data", "map"), 3: ("binaryData", "bmap"), 4: ("immutable", "bool!")},
    ),
    "Secret": (
        "v1",
        {
            **_META_1,
            2: ("data", "bmap"),
            3: ("type", "str"),
            4: ("stringData", "map"),
            5: ("immutable", "bool!"),
        },
    ),
    "Namespace": ("v1", {**_META_1, 2: ("spec", "NamespaceSpec")}),
    "ServiceAccount": (
        "v1",
        {
            **_META_1,
            2: ("secrets", "[]ObjectReference"),
            3: ("imagePullSecrets", "[]LocalObjectReference"),
            4: ("automountServiceAccountToken", "bool!"),
        },
    ),
    "ResourceQuota": ("v1", {**_META_1, 2: ("spec", "ResourceQuotaSpec")}),
    "Service": ("v1", {**_META_1, 2: ("spec", "ServiceSpec")}),
    "Role": (_RBAC, {**_META_1, 2: ("rules", "[]PolicyRule")}),
    "ClusterRole": (
        _RBAC,
        {**_META_1, 2: ("rules", "[]PolicyRule"), 3: ("aggregationRule", "AggregationRule")},
    ),
    "RoleBinding": (_RBAC, {**_META_1, 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")}),
    "ClusterRoleBinding": (_RBAC, {**_META_1, 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")}),
    "PriorityClass": (
        "scheduling.k8s.io/v1",
        {
            **_META_1,
            2: ("value", "int!"),
            3: ("globalDefault", "bool"),
            4: ("description", "str"),
            5: ("preemptionPolicy", "str"),
        },
    ),
    "Deployment": ("apps/v1", {**_META_1, 2: ("spec", "DeploymentSpec")}),
    "Job": ("batch/v1", {**_META_1, 2: ("spec", "JobSpec")}),
}

SUPPORTED_KINDS: frozenset[str] = frozenset(_TOP)


class _Rejected(Exception):
    """A known field present in the body that this decoder cannot express as JSON."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of every field; fixed-width values come back as bytes."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 2, 5):
            if wire == 2:
                length, pos = _varint(data, pos)
            else:
                length = 8 if wire == 1 else 4
            if pos + length > len(data):
                raise ValueError("truncated field")
            value = data[pos : pos + length]
            pos += length
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    """int32/int64 varints carry negative numbers as 64-bit two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: invalid UTF-8") from exc


def _scalars(
    value: bytes, where: str, strings: tuple[int, ...], varints: tuple[int, ...] = ()
) -> dict[int, Any]:
    """The last value of each known field of a small message, wire types checked; others skipped."""
    out: dict[int, Any] = {}
    for number, wire, item in _fields(value):
        if number in strings or number in varints:
            if wire != (2 if number in strings else 0):
                raise ValueError(f"{where}: unexpected wire type {wire} for field {number}")
            out[number] = item
    return out


def _entry(value: bytes, where: str) -> tuple[str, bytes]:
    """Key and raw value of one map entry (key = 1, value = 2); a missing value is empty."""
    fields = _scalars(value, where, strings=(1, 2))
    return _text(fields.get(1, b""), where), fields.get(2, b"")


def _quantity(value: bytes, where: str) -> str:
    """resource.Quantity: its canonical string is field 1."""
    return _text(_scalars(value, where, strings=(1,)).get(1, b""), where)


def _intstr(value: bytes, where: str) -> int | str:
    """intstr.IntOrString: type (1; 0 = Int, 1 = String), intVal (2), strVal (3)."""
    fields = _scalars(value, where, strings=(3,), varints=(1, 2))
    if fields.get(1, 0) == 1:
        return _text(fields.get(3, b""), where)
    return _signed(fields.get(2, 0))


def _decode(data: bytes, schema: Schema, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        fields = _fields(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}" if path else str(exc)) from exc
    for number, wire, value in fields:
        if number not in schema:
            continue  # unknown (newer or unused) field
        name, kind = schema[number]
        where = f"{path}.{name}" if path else name
        if kind == "reject":
            if value:  # an empty message (a non-nil pointer to a zero struct) means nothing
                raise _Rejected(where)
            continue
        if kind in ("int", "int!", "bool", "bool!"):
            if wire != 0 or not isinstance(value, int):
                raise ValueError(f"{where}: expected a varint")
            scalar: int | bool = bool(value) if kind.startswith("bool") else _signed(value)
            if scalar or kind.endswith("!"):
                out[name] = scalar
            continue
        if wire != 2 or not isinstance(value, bytes):
            raise ValueError(f"{where}: expected a length-delimited field")
        if kind == "bytes":
            out[name] = value
        elif kind == "str":
            text = _text(value, where)
            if text:
                out[name] = text
        elif kind == "strs":
            out.setdefault(name, []).append(_text(value, where))
        elif kind in ("map", "bmap", "qmap"):
            key, raw = _entry(value, where)
            entries = out.setdefault(name, {})
            if kind == "map":
                entries[key] = _text(raw, f"{where}[{key}]")
            elif kind == "bmap":
                entries[key] = base64.b64encode(raw).decode("ascii")
            else:
                entries[key] = _quantity(raw, f"{where}[{key}]")
        elif kind == "intstr":
            out[name] = _intstr(value, where)
        elif kind.startswith("[]"):
            items = out.setdefault(name, [])
            items.append(_decode(value, _MESSAGES[kind[2:]], f"{where}[{len(items)}]"))
        else:
            out[name] = _decode(value, _MESSAGES[kind], where)
    return out


def decode_request(raw: bytes, kind: str, api_version: str | None = None) -> dict[str, Any]:
    """The JSON-shaped object of a protobuf-encoded request body of ``kind``.

    ``api_version``, when given, must be the one the table knows ``kind`` under (so a custom
    resource that happens to share a built-in kind is never decoded as the built-in). 415 for
    kinds (or fields) this module cannot decode, 400 for bodies that are not valid protobuf.
    """
    entry = _TOP.get(kind)
    if entry is None or (api_version is not None and api_version != entry[0]):
        raise errors.unsupported_media_type(ACCEPTED)
    known_version, schema = entry
    if not raw.startswith(MAGIC):
        raise errors.bad_request("protobuf body without the k8s envelope")
    try:
        envelope = _decode(raw[len(MAGIC) :], _MESSAGES["Unknown"], "")
    except ValueError as exc:
        raise errors.bad_request(f"the protobuf envelope could not be decoded: {exc}") from exc
    type_meta = envelope.get("typeMeta") or {}
    if not type_meta.get("kind"):
        raise errors.bad_request("the protobuf envelope does not name the kind of its object")
    if type_meta["kind"] != kind:
        raise errors.bad_request(f"the kind in the data ({type_meta['kind']}) does not match {kind}")
    if envelope.get("contentEncoding"):
        raise errors.unsupported_media_type(ACCEPTED)
    try:
        body = _decode(envelope.get("raw", b""), schema, "")
    except _Rejected as exc:
        raise errors.ApiError(
            415,
            "UnsupportedMediaType",
            f"the protobuf body sets {exc}, which this server does not decode from protobuf - "
            f"accepted media types include: {ACCEPTED}",
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise errors.bad_request(f"the protobuf body could not be decoded: {exc}") from exc
    body["apiVersion"] = type_meta.get("apiVersion") or known_version
    body["kind"] = kind
    return body
