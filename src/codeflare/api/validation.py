"""Client-side checks of names, labels and built manifests, before anything reaches an API server.

Two layers use this: the SDK's typed configuration checks user input field by field (RFC 1123
names, label keys and values, extended resource names), and every builder in ``codeflare.api``
passes its output through :func:`validate_against_crd`, so a manifest that our CRDs would reject
(or silently prune) never leaves the SDK. Checks return plain problem strings; raising is left to
the caller, except :func:`validate_against_crd`, which raises :class:`ManifestError`. No I/O.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from codeflare.errors import CodeFlareError

__all__ = [
    "ManifestError",
    "dns1123_label_problems",
    "dns1123_subdomain_problems",
    "extended_resource_problems",
    "label_key_problems",
    "label_value_problems",
    "validate_against_crd",
]

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(f"^{_LABEL}$")
_SUBDOMAIN_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_QUALIFIED_RE = re.compile("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_STANDARD_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})

# (apiVersion, kind) -> (group, plural) of the bundled CRD that defines it.
_KINDS: dict[tuple[str, str], tuple[str, str]] = {
    ("ray.io/v1", "RayCluster"): ("ray.io", "rayclusters"),
    ("ray.io/v1", "RayJob"): ("ray.io", "rayjobs"),
    ("workload.codeflare.dev/v1beta2", "AppWrapper"): ("workload.codeflare.dev", "appwrappers"),
    ("kueue.x-k8s.io/v1beta1", "ResourceFlavor"): ("kueue.x-k8s.io", "resourceflavors"),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"): ("kueue.x-k8s.io", "clusterqueues"),
    ("kueue.x-k8s.io/v1beta1", "LocalQueue"): ("kueue.x-k8s.io", "localqueues"),
    ("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass"): ("kueue.x-k8s.io", "workloadpriorityclasses"),
}
_NAMESPACED = frozenset({"RayCluster", "RayJob", "AppWrapper", "LocalQueue"})


class ManifestError(CodeFlareError, ValueError):
    """A built manifest our CRDs would reject; ``problems`` holds (field path, message) pairs."""

    def __init__(self, kind: str, name: str, problems: list[tuple[str, str]]) -> None:
        self.kind, self.name, self.problems = kind, name, problems
        lines = "\n".join(f"  {field}: {message}" for field, message in problems)
        super().__init__(f"{kind} {name!r} is invalid:\n{lines}")


def dns1123_label_problems(value: str, max_length: int = 63) -> list[str]:
    """Why ``value`` is not an RFC 1123 label of at most ``max_length`` characters; [] when it is."""
    problems = []
    if len(value) > max_length:
        problems.append(f"must be no more than {max_length} characters (is {len(value)})")
    if not _LABEL_RE.match(value):
        problems.append(
            "must be an RFC 1123 label: lower-case letters, digits and '-', starting and ending "
            "with a letter or digit (e.g. 'my-cluster')"
        )
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 subdomain (dot-separated labels, <= 253 chars)."""
    problems = []
    if len(value) > 253:
        problems.append(f"must be no more than 253 characters (is {len(value)})")
    if not _SUBDOMAIN_RE.match(value):
        problems.append(
            "must be an RFC 1123 subdomain: lower-case letters, digits, '-' and '.', starting and "
            "ending with a letter or digit (e.g. 'example.com')"
        )
    return problems


def label_key_problems(key: str) -> list[str]:
    """Why ``key`` is not a label/annotation key (``[prefix/]name``, name <= 63, prefix a subdomain)."""
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash and not prefix:
        problems.append("prefix part must not be empty")
    if slash and prefix:
        problems += [f"prefix part {p}" for p in dns1123_subdomain_problems(prefix)]
    if not name:
        problems.append("name part must not be empty")
    elif len(name) > 63 or not _QUALIFIED_RE.match(name):
        problems.append(
            "name part must be at most 63 characters of letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return problems


def label_value_problems(value: object) -> list[str]:
    """Why ``value`` is not a label value (a string, <= 63 chars, qualified-name characters or empty)."""
    if not isinstance(value, str):
        return [f"must be a string (is {type(value).__name__})"]
    if value and (len(value) > 63 or not _QUALIFIED_RE.match(value)):
        return [
            "must be empty or at most 63 characters of letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        ]
    return []


def extended_resource_problems(name: str) -> list[str]:
    """Why ``name`` is not an extended resource name: a domain-prefixed name such as nvidia.com/gpu.

    cpu, memory and the other built-in resources have fields of their own and are refused here, as
    are names without a domain prefix or in the reserved ``kubernetes.io`` domain.
    """
    if name in _STANDARD_RESOURCES:
        return [f"{name!r} is a standard resource; set it with its own field, not as an extended resource"]
    prefix, slash, _ = name.rpartition("/")
    if not slash or not prefix:
        return ["must be a domain-prefixed resource name such as 'nvidia.com/gpu'"]
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        return ["the kubernetes.io domain is reserved for built-in resources"]
    return label_key_problems(name)


def validate_against_crd(obj: dict[str, Any]) -> None:
    """Raise :class:`ManifestError` unless ``obj`` is accepted, unchanged, by our bundled CRD.

    Checked: the kind is one we ship a CRD for; metadata name, namespace presence, labels and
    annotations; the CRD version's schema (types, enums, patterns, bounds, required fields); and
    that pruning would remove nothing (a field the schema does not declare is reported, since a
    server would drop it silently). Defaults are not applied and ``obj`` is not modified.
    """
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = str(meta.get("name", ""))
    problems = _metadata_problems(kind, meta)
    if (api_version, kind) not in _KINDS:
        problems.append(("apiVersion", f"no bundled CRD serves {kind!r} in {api_version!r}"))
        raise ManifestError(kind or "object", name, problems)
    schema = _compiled_schema(api_version, kind)
    problems += [(error.field, error.message().partition(": ")[2]) for error in schema.validate(obj)]
    probe = copy.deepcopy(obj)
    problems += [
        (path, "is not declared by the CRD schema (a server would drop it)") for path in schema.prune(probe)
    ]
    if problems:
        raise ManifestError(kind, name, problems)


def _metadata_problems(kind: str, meta: dict[str, Any]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        problems.append(("metadata.name", "is required"))
    else:
        problems += [("metadata.name", p) for p in dns1123_subdomain_problems(name)]
    namespace = meta.get("namespace")
    if kind in _NAMESPACED:
        if not isinstance(namespace, str) or not namespace:
            problems.append(("metadata.namespace", f"is required for a namespaced {kind}"))
        else:
            problems += [("metadata.namespace", p) for p in dns1123_label_problems(namespace)]
    elif namespace is not None:
        problems.append(("metadata.namespace", f"must not be set for a cluster-scoped {kind}"))
    for key, value in (meta.get("labels") or {}).items():
        where = f"metadata.labels[{key!r}]"
        problems += [(where, p) for p in label_key_problems(key) + label_value_problems(value)]
    for key, value in (meta.get("annotations") or {}).items():
        where = f"metadata.annotations[{key!r}]"
        problems += [(where, p) for p in label_key_problems(key)]
        if not isinstance(value, str):
            problems.append((where, f"must be a string (is {type(value).__name__})"))
    return problems


@functools.cache
def _compiled_schema(api_version: str, kind: str) -> Any:
    # Imported here: the schema engine belongs to the embedded API server and is only needed
    # when a manifest is actually built.
    from codeflare.api.crds import crd_for
    from codeflare.apiserver.schema import CompiledSchema

    group, plural = _KINDS[(api_version, kind)]
    version = api_version.rpartition("/")[2]
    crd = crd_for(group, plural)
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            return CompiledSchema(entry["schema"]["openAPIV3Schema"])
    raise KeyError(f"CRD {plural}.{group} has no version {version!r}")
