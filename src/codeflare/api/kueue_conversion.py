"""Kueue's v1beta1 <-> v1beta2 field mapping, the one home of it: plain dicts in, plain dicts out.

v1beta2 is the hub (Kueue stores it since 0.16); v1beta1 is the deprecated spoke that
codeflare-sdk 0.40 and Kueue 0.13-0.15 still speak. The mapping follows Kueue's own
``apis/kueue/v1beta1/*_conversion.go`` and the generated ``zz_generated.conversion.go``:

- ClusterQueue: ``spec.cohort`` <-> ``spec.cohortName``; a non-empty v1beta1 ``admissionChecks``
  list becomes ``admissionChecksStrategy.admissionChecks[{name}]`` (and stays a strategy on the
  way back, as in Kueue); flavorFungibility ``Borrow``/``Preempt`` become ``MayStopSearch`` (v1beta1
  accepts that value too, so it is not turned back); ``status.pendingWorkloadsStatus`` is dropped.
- LocalQueue: ``status.flavorUsage`` <-> ``status.flavorsUsage``; ``status.flavors`` is dropped.
- Workload: ``spec.priorityClassName`` + ``priorityClassSource`` <-> ``spec.priorityClassRef``
  ``{group, kind, name}`` (a name without a source has no v1beta2 form and is dropped, as Kueue
  drops it); ``status.accumulatedPastExexcutionTimeSeconds`` (v1beta1's typo) <->
  ``accumulatedPastExecutionTimeSeconds``.
- ResourceFlavor, WorkloadPriorityClass, Cohort: same fields in both versions.

Where we differ from Kueue: Kueue loses the v1beta2-only fields (:data:`V1BETA2_ONLY`) on a trip
through v1beta1; here they are kept as JSON in the annotation :data:`PRESERVED_ANNOTATION` on the
way down and put back (annotation removed) on the way up, so a v1beta1 client's update keeps them.
Topology assignments (``domains`` <-> ``slices``) are not converted: our CRDs do not carry
topology-aware scheduling, so the fields are pruned before they could reach here. No I/O.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from codeflare.k8s.constants import POD_PRIORITY_CLASS_SOURCE, WORKLOAD_PRIORITY_CLASS_SOURCE

__all__ = [
    "GROUP",
    "PRESERVED_ANNOTATION",
    "V1BETA1",
    "V1BETA2",
    "ConversionError",
    "convert",
    "priority_class_ref",
    "priority_class_source",
    "to_v1beta1",
    "to_v1beta2",
]

GROUP = "kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
PRESERVED_ANNOTATION = "conversion.codeflare.dev/kueue-v1beta2-fields"

# v1beta1 priorityClassSource -> v1beta2 priorityClassRef (group, kind); Kueue v1beta2 workload_types.go.
_PRIORITY_REFS = {
    WORKLOAD_PRIORITY_CLASS_SOURCE: (GROUP, "WorkloadPriorityClass"),
    POD_PRIORITY_CLASS_SOURCE: ("scheduling.k8s.io", "PriorityClass"),
}
_PRIORITY_SOURCES = {ref: source for source, ref in _PRIORITY_REFS.items()}

# Fields v1beta2 has and v1beta1 has not, by kind (Kueue zz_generated.conversion.go "does not
# exist in peer-type" warnings on the v1beta2 -> v1beta1 side), as paths from the object root.
V1BETA2_ONLY: dict[str, tuple[tuple[str, ...], ...]] = {
    "ClusterQueue": (("spec", "concurrentAdmissionPolicy"),),
    "Workload": (("spec", "preemptionGates"), ("status", "preemptionGates")),
}
# Fields v1beta1 has and v1beta2 has not: dropped on the way up, as Kueue drops them.
V1BETA1_DROPPED: dict[str, tuple[tuple[str, ...], ...]] = {
    "ClusterQueue": (("status", "pendingWorkloadsStatus"),),
    "LocalQueue": (("status", "flavors"),),
}


class ConversionError(ValueError):
    """The object cannot be converted (not a Kueue object, or an unknown version)."""


Obj = dict[str, Any]


def convert(obj: Obj, api_version: str, *, in_place: bool = False) -> Obj:
    """``obj`` at ``api_version`` (``kueue.x-k8s.io/v1beta1`` or ``/v1beta2``): a copy, or ``obj``
    itself changed when ``in_place`` (for objects the caller owns, e.g. a review just parsed)."""
    source = obj.get("apiVersion")
    if source not in (V1BETA1, V1BETA2):
        raise ConversionError(f"apiVersion {source!r} is not {V1BETA1} or {V1BETA2}")
    if api_version not in (V1BETA1, V1BETA2):
        raise ConversionError(f"cannot convert to {api_version!r}: only {V1BETA1} and {V1BETA2} are served")
    out = obj if in_place else copy.deepcopy(obj)
    if source == api_version:
        return out
    return _up(out) if api_version == V1BETA2 else _down(out)


def to_v1beta2(obj: Obj) -> Obj:
    """A v1beta1 object as v1beta2 (the fields kept by :func:`to_v1beta1`'s annotation restored)."""
    return _up(copy.deepcopy(obj))


def to_v1beta1(obj: Obj) -> Obj:
    """A v1beta2 object as v1beta1; v1beta2-only fields go into :data:`PRESERVED_ANNOTATION`."""
    return _down(copy.deepcopy(obj))


def _up(out: Obj) -> Obj:
    out["apiVersion"] = V1BETA2
    kind = str(out.get("kind", ""))
    for path in V1BETA1_DROPPED.get(kind, ()):
        _pop(out, path)
    _UP.get(kind, _same)(out)
    _restore_preserved(out)
    return out


def _down(out: Obj) -> Obj:
    out["apiVersion"] = V1BETA1
    kind = str(out.get("kind", ""))
    kept = {
        ".".join(path): value for path in V1BETA2_ONLY.get(kind, ()) if (value := _pop(out, path)) is not None
    }
    _DOWN.get(kind, _same)(out)
    if kept:
        annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[PRESERVED_ANNOTATION] = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return out


def priority_class_ref(source: str, name: str) -> Obj | None:
    """v1beta2 ``priorityClassRef`` of a v1beta1 source and name (None: no v1beta2 form)."""
    ref = _PRIORITY_REFS.get(source)
    return {"group": ref[0], "kind": ref[1], "name": name} if ref is not None and name else None


def priority_class_source(ref: Any) -> tuple[str, str] | None:
    """(v1beta1 ``priorityClassSource``, name) of a v1beta2 ``priorityClassRef``, or None."""
    if not isinstance(ref, dict):
        return None
    source = _PRIORITY_SOURCES.get((str(ref.get("group", "")), str(ref.get("kind", ""))))
    return (source, str(ref.get("name", ""))) if source is not None else None


# --- per kind (each mutates its own copy) ----------------------------------------------------------


def _same(obj: Obj) -> None:
    """ResourceFlavor, WorkloadPriorityClass, Cohort: nothing but apiVersion changes."""


def _cluster_queue_up(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    _rename(spec, "cohort", "cohortName")
    checks = spec.pop("admissionChecks", None)
    if checks:  # Kueue: a non-empty list replaces any strategy given alongside it
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": name} for name in checks]}
    fungibility = spec.get("flavorFungibility")
    if isinstance(fungibility, dict):
        for key, old in (("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")):
            if fungibility.get(key) == old:
                fungibility[key] = "MayStopSearch"


def _cluster_queue_down(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _rename(spec, "cohortName", "cohort")


def _local_queue_up(obj: Obj) -> None:
    status = obj.get("status")
    if isinstance(status, dict):
        _rename(status, "flavorUsage", "flavorsUsage")


def _local_queue_down(obj: Obj) -> None:
    status = obj.get("status")
    if isinstance(status, dict):
        _rename(status, "flavorsUsage", "flavorUsage")


def _workload_up(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        name = str(spec.pop("priorityClassName", None) or "")
        ref = priority_class_ref(str(spec.pop("priorityClassSource", None) or ""), name)
        if ref is not None:
            spec["priorityClassRef"] = ref
    status = obj.get("status")
    if isinstance(status, dict):
        _rename(status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds")


def _workload_down(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        found = priority_class_source(spec.pop("priorityClassRef", None))
        if found is not None:
            spec["priorityClassSource"], spec["priorityClassName"] = found
    status = obj.get("status")
    if isinstance(status, dict):
        _rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds")


_UP: dict[str, Callable[[Obj], None]] = {
    "ClusterQueue": _cluster_queue_up,
    "LocalQueue": _local_queue_up,
    "Workload": _workload_up,
}
_DOWN: dict[str, Callable[[Obj], None]] = {
    "ClusterQueue": _cluster_queue_down,
    "LocalQueue": _local_queue_down,
    "Workload": _workload_down,
}


# --- helpers -----------------------------------------------------------------------------------


def _rename(node: Obj, old: str, new: str) -> None:
    if old in node:
        node[new] = node.pop(old)


def _pop(obj: Obj, path: tuple[str, ...]) -> Any:
    node: Any = obj
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    return node.pop(path[-1], None) if isinstance(node, dict) else None


def _restore_preserved(obj: Obj) -> None:
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict) or PRESERVED_ANNOTATION not in annotations:
        return
    raw = annotations.pop(PRESERVED_ANNOTATION)
    if not annotations:
        del metadata["annotations"]  # type: ignore[union-attr]
    try:
        kept = json.loads(raw)
    except (TypeError, ValueError):
        return  # a hand-edited annotation: the fields are lost, as without it
    allowed = {".".join(path): path for path in V1BETA2_ONLY.get(str(obj.get("kind", "")), ())}
    for dotted, value in kept.items() if isinstance(kept, dict) else ():
        path = allowed.get(dotted)
        if path is None:
            continue
        node = obj
        for key in path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        node.setdefault(path[-1], value)
