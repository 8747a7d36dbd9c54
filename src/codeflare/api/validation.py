"""Client-side checks of names, labels and built manifests, before anything reaches an API server.

Two layers use this: the SDK's typed configuration checks user input field by field (names and
labels with the rules of :mod:`codeflare.k8s.names`, extended resource names here), and every
builder in ``codeflare.api`` passes its output through :func:`validate_against_crd`, so a manifest
that our CRDs (or, for Kueue's kinds, Kueue's webhooks) would reject, or that a server would
silently prune, never leaves the SDK. Checks return plain problem
strings; raising is left to the caller, except :func:`validate_against_crd`, which raises
:class:`ManifestError`. No I/O.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from codeflare.errors import CodeFlareError
from codeflare.k8s.names import is_label_value, is_qualified_name

__all__ = [
    "ManifestError",
    "Problems",
    "extended_resource_problems",
    "label_problems",
    "validate_against_crd",
]

#: What is wrong, as (field, message) pairs: the SDK's and the builders' way to report problems.
Problems = list[tuple[str, str]]

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
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): ("kueue.x-k8s.io", "resourceflavors"),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): ("kueue.x-k8s.io", "clusterqueues"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): ("kueue.x-k8s.io", "localqueues"),
    ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"): ("kueue.x-k8s.io", "workloadpriorityclasses"),
    ("kueue.x-k8s.io/v1beta1", "Cohort"): ("kueue.x-k8s.io", "cohorts"),
    ("kueue.x-k8s.io/v1beta2", "Cohort"): ("kueue.x-k8s.io", "cohorts"),
}
_NAMESPACED = frozenset({"RayCluster", "RayJob", "AppWrapper", "LocalQueue"})


class ManifestError(CodeFlareError, ValueError):
    """A built manifest our CRDs would reject; ``problems`` holds (field path, message) pairs."""

    def __init__(self, kind: str, name: str, problems: Problems) -> None:
        self.kind, self.name, self.problems = kind, name, problems
        lines = "\n".join(f"  {field}: {message}" for field, message in problems)
        super().__init__(f"{kind} {name!r} is invalid:\n{lines}")


def label_problems(key: str, value: object) -> list[str]:
    """Why ``key: value`` is not a label: the key is a qualified name, the value a label value string."""
    problems = is_qualified_name(key)
    if not isinstance(value, str):
        return [*problems, f"must be a string (is {type(value).__name__})"]
    return problems + is_label_value(value)


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
    return is_qualified_name(name)


def validate_against_crd(obj: dict[str, Any]) -> None:
    """Raise :class:`ManifestError` unless ``obj`` is accepted, unchanged, by our bundled CRD.

    Checked: the kind is one we ship a CRD for; metadata by the API server's own ObjectMeta rules
    (:mod:`codeflare.k8s.schema.objectmeta`: name, namespace, labels, annotations and their total
    size); the CRD version's schema (types, enums, patterns, bounds, required fields, CEL
    rules); for Kueue's kinds the rules of Kueue's webhooks (:mod:`codeflare.api.kueue_validation`);
    and that pruning would remove nothing (a field the schema does not declare is reported, since
    a server would drop it silently). Defaults are not applied and ``obj`` is not modified.
    """
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = str(meta.get("name", ""))
    problems = _metadata_problems(kind, raw_meta if raw_meta is not None else {})
    if (api_version, kind) not in _KINDS:
        problems.append(("apiVersion", f"no bundled CRD serves {kind!r} in {api_version!r}"))
        raise ManifestError(kind or "object", name, problems)
    schema = _compiled_schema(api_version, kind)
    problems += [(error.field, error.message().partition(": ")[2]) for error in schema.validate(obj)]
    if api_version.startswith("kueue.x-k8s.io/"):
        from codeflare.api.kueue_validation import VALIDATORS

        check = VALIDATORS.get(kind)
        problems += [(error.field, error.body()) for error in (check(obj, None) if check else [])]
    probe = copy.deepcopy(obj)
    problems += [
        (path, "is not declared by the CRD schema (a server would drop it)") for path in schema.prune(probe)
    ]
    if problems:
        raise ManifestError(kind, name, problems)


def _metadata_problems(kind: str, meta: Any) -> Problems:
    """The API server's own ObjectMeta rules (names, namespace, labels, annotations and their size)."""
    from codeflare.k8s.schema.objectmeta import validate_object_meta

    found = validate_object_meta(meta, namespaced=kind in _NAMESPACED)
    return [(error.field, error.message().partition(": ")[2]) for error in found]


@functools.cache
def _compiled_schema(api_version: str, kind: str) -> Any:
    # Imported here: the schema engine is only needed when a manifest is actually built.
    from codeflare.api.crds import crd_for
    from codeflare.k8s.schema import CompiledSchema

    group, plural = _KINDS[(api_version, kind)]
    version = api_version.rpartition("/")[2]
    crd = crd_for(group, plural)
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            return CompiledSchema(entry["schema"]["openAPIV3Schema"])
    raise KeyError(f"CRD {plural}.{group} has no version {version!r}")
