"""Generate the API server's protobuf field tables from Kubernetes' ``generated.proto`` files.

The embedded API server decodes the protobuf bodies kubectl sends for a fixed set of kinds
(``codeflare.apiserver.endpoints.protowire``). Which fields it reads, and how each becomes JSON,
is decided here in :data:`SPEC` (JSON names and decoding kinds); the field *numbers* are never
typed by hand: they are read from the upstream ``.proto`` files, and every field's proto type is
checked against its decoding kind (a string is decoded as a string, a repeated message as a
list, ...). The result is written to ``src/codeflare/apiserver/endpoints/protowire_tables.py``.

Run it with checkouts of kubernetes/api and kubernetes/apimachinery (any directory holding their
``*/generated.proto`` files at the upstream paths)::

    python scripts/gen_protowire_tables.py --api ~/src/api --apimachinery ~/src/apimachinery
    python scripts/gen_protowire_tables.py --api ... --apimachinery ... --check   # CI: up to date?

``--api-ref`` / ``--apimachinery-ref`` name the upstream versions in the generated header (the
checkouts' git HEAD when they are git work trees). The script needs only the standard library.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "src/codeflare/apiserver/endpoints/protowire_tables.py"

# Proto files, by the name SPEC uses: (repository, path inside it).
FILES: dict[str, tuple[str, str]] = {
    "runtime": ("apimachinery", "pkg/runtime/generated.proto"),
    "meta": ("apimachinery", "pkg/apis/meta/v1/generated.proto"),
    "authorization": ("api", "authorization/v1/generated.proto"),
    "authentication": ("api", "authentication/v1/generated.proto"),
    "core": ("api", "core/v1/generated.proto"),
    "rbac": ("api", "rbac/v1/generated.proto"),
    "scheduling": ("api", "scheduling/v1/generated.proto"),
    "apps": ("api", "apps/v1/generated.proto"),
    "batch": ("api", "batch/v1/generated.proto"),
}

QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"

# Message (as the decoder names it) -> (proto file, [(JSON name, decoding kind), ...]).
# Decoding kinds are documented in protowire.py; a trailing "!" keeps zero/false values.
SPEC: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "Unknown": ("runtime", [("typeMeta", "TypeMeta"), ("raw", "bytes"), ("contentEncoding", "str")]),
    "TypeMeta": ("runtime", [("apiVersion", "str"), ("kind", "str")]),
    "ObjectMeta": (
        "meta",
        [
            ("name", "str"),
            ("generateName", "str"),
            ("namespace", "str"),
            ("uid", "str"),
            ("resourceVersion", "str"),
            ("labels", "map"),
            ("annotations", "map"),
            ("ownerReferences", "[]OwnerReference"),
            ("finalizers", "strs"),
        ],
    ),
    "OwnerReference": (
        "meta",
        [
            ("apiVersion", "str"),
            ("kind", "str"),
            ("name", "str"),
            ("uid", "str"),
            ("controller", "bool!"),
            ("blockOwnerDeletion", "bool!"),
        ],
    ),
    "LabelSelector": ("meta", [("matchLabels", "map"), ("matchExpressions", "[]LabelSelectorRequirement")]),
    "LabelSelectorRequirement": ("meta", [("key", "str"), ("operator", "str"), ("values", "strs")]),
    # authorization.k8s.io/v1, authentication.k8s.io/v1
    "ResourceAttributes": (
        "authorization",
        [
            ("namespace", "str"),
            ("verb", "str"),
            ("group", "str"),
            ("version", "str"),
            ("resource", "str"),
            ("subresource", "str"),
            ("name", "str"),
        ],
    ),
    "NonResourceAttributes": ("authorization", [("path", "str"), ("verb", "str")]),
    "SelfSubjectAccessReviewSpec": (
        "authorization",
        [("resourceAttributes", "ResourceAttributes"), ("nonResourceAttributes", "NonResourceAttributes")],
    ),
    "SubjectAccessReviewSpec": (
        "authorization",
        [
            ("resourceAttributes", "ResourceAttributes"),
            ("nonResourceAttributes", "NonResourceAttributes"),
            ("user", "str"),
            ("groups", "strs"),
            ("uid", "str"),
        ],
    ),
    "SelfSubjectRulesReviewSpec": ("authorization", [("namespace", "str")]),
    "TokenReviewSpec": ("authentication", [("token", "str"), ("audiences", "strs")]),
    "TokenRequestSpec": ("authentication", [("audiences", "strs"), ("expirationSeconds", "int!")]),
    # core/v1
    "NamespaceSpec": ("core", [("finalizers", "strs")]),
    "ObjectReference": (
        "core",
        [
            ("kind", "str"),
            ("namespace", "str"),
            ("name", "str"),
            ("uid", "str"),
            ("apiVersion", "str"),
            ("resourceVersion", "str"),
            ("fieldPath", "str"),
        ],
    ),
    "LocalObjectReference": ("core", [("name", "str")]),
    "ResourceQuotaSpec": ("core", [("hard", "qmap"), ("scopes", "strs"), ("scopeSelector", "ScopeSelector")]),
    "ScopeSelector": ("core", [("matchExpressions", "[]ScopedResourceSelectorRequirement")]),
    "ScopedResourceSelectorRequirement": (
        "core",
        [("scopeName", "str"), ("operator", "str"), ("values", "strs")],
    ),
    "ServiceSpec": (
        "core",
        [
            ("ports", "[]ServicePort"),
            ("selector", "map"),
            ("clusterIP", "str"),
            ("clusterIPs", "strs"),
            ("type", "str"),
            ("externalIPs", "strs"),
            ("sessionAffinity", "str"),
            ("loadBalancerIP", "str"),
            ("loadBalancerSourceRanges", "strs"),
            ("externalName", "str"),
            ("externalTrafficPolicy", "str"),
            ("healthCheckNodePort", "int"),
            ("publishNotReadyAddresses", "bool"),
            ("sessionAffinityConfig", "reject"),
        ],
    ),
    "ServicePort": (
        "core",
        [
            ("name", "str"),
            ("protocol", "str"),
            ("appProtocol", "str"),
            ("port", "int!"),
            ("targetPort", "intstr"),
            ("nodePort", "int"),
        ],
    ),
    "PodTemplateSpec": ("core", [("metadata", "ObjectMeta"), ("spec", "PodSpec")]),
    "PodSpec": (
        "core",
        [
            ("volumes", "reject"),
            ("initContainers", "[]Container"),
            ("containers", "[]Container"),
            ("ephemeralContainers", "reject"),
            ("restartPolicy", "str"),
            ("terminationGracePeriodSeconds", "int!"),
            ("activeDeadlineSeconds", "int!"),
            ("dnsPolicy", "str"),
            ("nodeSelector", "map"),
            ("serviceAccountName", "str"),
            ("serviceAccount", "str"),
            ("automountServiceAccountToken", "bool!"),
            ("nodeName", "str"),
            ("hostNetwork", "bool"),
            ("hostPID", "bool"),
            ("hostIPC", "bool"),
            ("shareProcessNamespace", "bool!"),
            ("securityContext", "reject"),
            ("imagePullSecrets", "[]LocalObjectReference"),
            ("hostname", "str"),
            ("subdomain", "str"),
            ("affinity", "reject"),
            ("schedulerName", "str"),
            ("tolerations", "reject"),
            ("hostAliases", "reject"),
            ("priorityClassName", "str"),
            ("priority", "int!"),
            ("dnsConfig", "reject"),
            ("readinessGates", "reject"),
            ("runtimeClassName", "str"),
            ("enableServiceLinks", "bool!"),
            ("preemptionPolicy", "str"),
            ("overhead", "qmap"),
            ("topologySpreadConstraints", "reject"),
            ("setHostnameAsFQDN", "bool!"),
        ],
    ),
    "Container": (
        "core",
        [
            ("name", "str"),
            ("image", "str"),
            ("command", "strs"),
            ("args", "strs"),
            ("workingDir", "str"),
            ("ports", "[]ContainerPort"),
            ("envFrom", "reject"),
            ("env", "[]EnvVar"),
            ("resources", "ResourceRequirements"),
            ("volumeMounts", "reject"),
            ("volumeDevices", "reject"),
            ("livenessProbe", "reject"),
            ("readinessProbe", "reject"),
            ("startupProbe", "reject"),
            ("lifecycle", "reject"),
            ("terminationMessagePath", "str"),
            ("terminationMessagePolicy", "str"),
            ("imagePullPolicy", "str"),
            ("securityContext", "reject"),
            ("stdin", "bool"),
            ("stdinOnce", "bool"),
            ("tty", "bool"),
        ],
    ),
    "ContainerPort": (
        "core",
        [
            ("name", "str"),
            ("hostPort", "int"),
            ("containerPort", "int!"),
            ("protocol", "str"),
            ("hostIP", "str"),
        ],
    ),
    "EnvVar": ("core", [("name", "str"), ("value", "str"), ("valueFrom", "reject")]),
    "ResourceRequirements": ("core", [("limits", "qmap"), ("requests", "qmap"), ("claims", "reject")]),
    # rbac.authorization.k8s.io/v1
    "PolicyRule": (
        "rbac",
        [
            ("verbs", "strs"),
            ("apiGroups", "strs"),
            ("resources", "strs"),
            ("resourceNames", "strs"),
            ("nonResourceURLs", "strs"),
        ],
    ),
    "AggregationRule": ("rbac", [("clusterRoleSelectors", "[]LabelSelector")]),
    "Subject": ("rbac", [("kind", "str"), ("apiGroup", "str"), ("name", "str"), ("namespace", "str")]),
    "RoleRef": ("rbac", [("apiGroup", "str"), ("kind", "str"), ("name", "str")]),
    # apps/v1
    "DeploymentSpec": (
        "apps",
        [
            ("replicas", "int!"),
            ("selector", "LabelSelector"),
            ("template", "PodTemplateSpec"),
            ("strategy", "DeploymentStrategy"),
            ("minReadySeconds", "int"),
            ("revisionHistoryLimit", "int!"),
            ("paused", "bool"),
            ("progressDeadlineSeconds", "int!"),
        ],
    ),
    "DeploymentStrategy": ("apps", [("type", "str"), ("rollingUpdate", "RollingUpdateDeployment")]),
    "RollingUpdateDeployment": ("apps", [("maxUnavailable", "intstr"), ("maxSurge", "intstr")]),
    # batch/v1
    "JobSpec": (
        "batch",
        [
            ("parallelism", "int!"),
            ("completions", "int!"),
            ("activeDeadlineSeconds", "int!"),
            ("backoffLimit", "int!"),
            ("selector", "LabelSelector"),
            ("manualSelector", "bool!"),
            ("template", "PodTemplateSpec"),
            ("ttlSecondsAfterFinished", "int!"),
            ("completionMode", "str"),
            ("suspend", "bool!"),
        ],
    ),
}

# Kind -> (apiVersion, proto file, top-level fields); status is never decoded.
_META = ("metadata", "ObjectMeta")
TOP: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "SelfSubjectAccessReview": (
        "authorization.k8s.io/v1",
        "authorization",
        [_META, ("spec", "SelfSubjectAccessReviewSpec")],
    ),
    "SubjectAccessReview": (
        "authorization.k8s.io/v1",
        "authorization",
        [_META, ("spec", "SubjectAccessReviewSpec")],
    ),
    "LocalSubjectAccessReview": (
        "authorization.k8s.io/v1",
        "authorization",
        [_META, ("spec", "SubjectAccessReviewSpec")],
    ),
    "SelfSubjectRulesReview": (
        "authorization.k8s.io/v1",
        "authorization",
        [_META, ("spec", "SelfSubjectRulesReviewSpec")],
    ),
    "SelfSubjectReview": ("authentication.k8s.io/v1", "authentication", [_META]),
    "TokenReview": ("authentication.k8s.io/v1", "authentication", [_META, ("spec", "TokenReviewSpec")]),
    "TokenRequest": ("authentication.k8s.io/v1", "authentication", [_META, ("spec", "TokenRequestSpec")]),
    "ConfigMap": ("v1", "core", [_META, ("data", "map"), ("binaryData", "bmap"), ("immutable", "bool!")]),
    "Secret": (
        "v1",
        "core",
        [_META, ("data", "bmap"), ("type", "str"), ("stringData", "map"), ("immutable", "bool!")],
    ),
    "Namespace": ("v1", "core", [_META, ("spec", "NamespaceSpec")]),
    "ServiceAccount": (
        "v1",
        "core",
        [
            _META,
            ("secrets", "[]ObjectReference"),
            ("imagePullSecrets", "[]LocalObjectReference"),
            ("automountServiceAccountToken", "bool!"),
        ],
    ),
    "ResourceQuota": ("v1", "core", [_META, ("spec", "ResourceQuotaSpec")]),
    "Service": ("v1", "core", [_META, ("spec", "ServiceSpec")]),
    "Role": ("rbac.authorization.k8s.io/v1", "rbac", [_META, ("rules", "[]PolicyRule")]),
    "ClusterRole": (
        "rbac.authorization.k8s.io/v1",
        "rbac",
        [_META, ("rules", "[]PolicyRule"), ("aggregationRule", "AggregationRule")],
    ),
    "RoleBinding": (
        "rbac.authorization.k8s.io/v1",
        "rbac",
        [_META, ("subjects", "[]Subject"), ("roleRef", "RoleRef")],
    ),
    "ClusterRoleBinding": (
        "rbac.authorization.k8s.io/v1",
        "rbac",
        [_META, ("subjects", "[]Subject"), ("roleRef", "RoleRef")],
    ),
    "PriorityClass": (
        "scheduling.k8s.io/v1",
        "scheduling",
        [
            _META,
            ("value", "int!"),
            ("globalDefault", "bool"),
            ("description", "str"),
            ("preemptionPolicy", "str"),
        ],
    ),
    "Deployment": ("apps/v1", "apps", [_META, ("spec", "DeploymentSpec")]),
    "Job": ("batch/v1", "batch", [_META, ("spec", "JobSpec")]),
}


@dataclass(frozen=True)
class ProtoField:
    label: str  # "optional", "repeated" or "" (maps)
    type: str
    number: int


_MESSAGE = re.compile(r"^message (\w+) \{")
_FIELD = re.compile(r"^\s*(optional|repeated|required)?\s*(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*[;\[]")


def parse_proto(text: str) -> dict[str, dict[str, ProtoField]]:
    """Top-level messages of a proto2 file: message -> field name -> field (comments ignored)."""
    messages: dict[str, dict[str, ProtoField]] = {}
    current: dict[str, ProtoField] | None = None
    depth = 0
    for raw in text.splitlines():
        line = raw.split("//", 1)[0]
        if current is None:
            match = _MESSAGE.match(line)
            if match:
                current = messages.setdefault(match.group(1), {})
                depth = 1
            continue
        if depth == 1:
            field = _FIELD.match(line)
            if field:
                label, typ, name, number = field.groups()
                current[name] = ProtoField(
                    label or "",
                    typ.replace(" ", "").replace("<string,.", "<string,").lstrip("."),
                    int(number),
                )
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            current = None
    return messages


def _compatible(kind: str, field: ProtoField) -> bool:
    """Whether a field of this proto type may be decoded as ``kind``."""
    scalar = field.label != "repeated"
    if kind == "reject":
        return True
    if kind == "str":
        return scalar and field.type == "string"
    if kind in ("int", "int!"):
        return scalar and field.type in ("int32", "int64")
    if kind in ("bool", "bool!"):
        return scalar and field.type == "bool"
    if kind == "bytes":
        return scalar and field.type == "bytes"
    if kind == "strs":
        return field.label == "repeated" and field.type == "string"
    if kind == "map":
        return field.type == "map<string,string>"
    if kind == "bmap":
        return field.type == "map<string,bytes>"
    if kind == "qmap":
        return field.type == f"map<string,{QUANTITY}>"
    if kind == "intstr":
        return scalar and field.type == INT_OR_STRING
    if kind.startswith("[]"):
        return field.label == "repeated" and field.type.split(".")[-1] == kind[2:]
    return scalar and field.type.split(".")[-1] == kind


def _numbered(
    owner: str, fields: list[tuple[str, str]], proto: dict[str, ProtoField], errors: list[str]
) -> list[tuple[int, str, str]]:
    out = []
    for name, kind in fields:
        found = proto.get(name)
        if found is None:
            errors.append(f"{owner}.{name}: not in the proto")
            continue
        if not _compatible(kind, found):
            errors.append(
                f"{owner}.{name}: proto type {found.label} {found.type} cannot be decoded as {kind!r}"
            )
        out.append((found.number, name, kind))
    return out


def build(
    protos: dict[str, dict[str, dict[str, ProtoField]]],
) -> tuple[
    dict[str, list[tuple[int, str, str]]], dict[str, tuple[str, list[tuple[int, str, str]]]], list[str]
]:
    errors: list[str] = []
    messages: dict[str, list[tuple[int, str, str]]] = {}
    for name, (file, fields) in SPEC.items():
        proto = protos[file].get(name)
        if proto is None:
            errors.append(f"{name}: no such message in {FILES[file][1]}")
            continue
        messages[name] = _numbered(name, fields, proto, errors)
    top: dict[str, tuple[str, list[tuple[int, str, str]]]] = {}
    for kind, (api_version, file, fields) in TOP.items():
        proto = protos[file].get(kind)
        if proto is None:
            errors.append(f"{kind}: no such message in {FILES[file][1]}")
            continue
        top[kind] = (api_version, _numbered(kind, fields, proto, errors))
    for fields in [*messages.values(), *(f for _, f in top.values())]:
        for _, _, kind in fields:
            nested = kind.removeprefix("[]")
            if nested[:1].isupper() and nested not in messages:
                errors.append(f"{nested}: used but not in SPEC")
    return messages, top, errors


def _schema_literal(fields: list[tuple[int, str, str]], indent: str) -> str:
    inner = "".join(f'{indent}    {number}: ("{name}", "{kind}"),\n' for number, name, kind in fields)
    return "{\n" + inner + indent + "}"


def render(
    messages: dict[str, list[tuple[int, str, str]]],
    top: dict[str, tuple[str, list[tuple[int, str, str]]]],
    api_ref: str,
    apimachinery_ref: str,
) -> str:
    """The tables module, formatted as ``ruff format`` leaves it."""
    api_files = sorted(path for repo, path in FILES.values() if repo == "api")
    machinery_files = sorted(path for repo, path in FILES.values() if repo == "apimachinery")
    lines = [
        '"""Protobuf field tables of the kinds kubectl posts as protobuf. GENERATED - do not edit.',
        "",
        "Written by scripts/gen_protowire_tables.py: the JSON names and decoding kinds come from its",
        "SPEC, the field numbers from these upstream files (each field's proto type checked):",
        "",
        f"- k8s.io/api, {api_ref}:",
        *(f"  {path}" for path in api_files),
        f"- k8s.io/apimachinery, {apimachinery_ref}:",
        *(f"  {path}" for path in machinery_files),
        "",
        "The decoder using them is :mod:`codeflare.apiserver.endpoints.protowire`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# field number -> (JSON name, decoding kind); see protowire.py for the kinds",
        "Schema = dict[int, tuple[str, str]]",
        "",
        "MESSAGES: dict[str, Schema] = {",
    ]
    for name, fields in messages.items():
        lines.append(f'    "{name}": {_schema_literal(sorted(fields), "    ")},')
    lines += ["}", "", "# kind -> (apiVersion, top-level schema)", "TOP: dict[str, tuple[str, Schema]] = {"]
    for kind, (api_version, fields) in top.items():
        lines += [
            f'    "{kind}": (',
            f'        "{api_version}",',
            f"        {_schema_literal(sorted(fields), '        ')},",
            "    ),",
        ]
    lines += ["}", ""]
    return "\n".join(lines)


def _git_head(directory: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", type=Path, required=True, help="checkout of kubernetes/api")
    parser.add_argument(
        "--apimachinery", type=Path, required=True, help="checkout of kubernetes/apimachinery"
    )
    parser.add_argument("--api-ref", help="upstream version named in the header (default: git HEAD)")
    parser.add_argument("--apimachinery-ref", help="upstream version named in the header (default: git HEAD)")
    parser.add_argument(
        "--check", action="store_true", help="fail if the tables differ from the written file"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    roots = {"api": args.api, "apimachinery": args.apimachinery}
    protos = {key: parse_proto((roots[repo] / path).read_text()) for key, (repo, path) in FILES.items()}
    messages, top, errors = build(protos)
    if errors:
        print("\n".join(errors), file=sys.stderr)  # noqa: T201 - a command-line tool
        return 1
    api_ref = args.api_ref or _git_head(args.api) or "unknown version"
    machinery_ref = args.apimachinery_ref or _git_head(args.apimachinery) or "unknown version"
    text = render(messages, top, f"kubernetes/api {api_ref}", f"kubernetes/apimachinery {machinery_ref}")
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        body = current[current.index('"""', 3) :] if current.count('"""') >= 2 else ""
        if body != text[text.index('"""', 3) :]:
            print(f"{args.output} differs from what the protos give; rerun without --check", file=sys.stderr)  # noqa: T201
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
