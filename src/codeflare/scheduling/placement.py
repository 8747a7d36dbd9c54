"""Whether a pod set may run on a flavor's nodes: taints against tolerations, labels against affinity.

Kueue's flavor assigner skips a flavor when one of its ``nodeTaints`` with effect NoSchedule or
NoExecute is tolerated neither by the pod set nor by the flavor's own ``tolerations``, or when
the flavor's ``nodeLabels`` do not satisfy the pod set's ``nodeSelector`` and required node
affinity, both cut down to the label keys that the flavors of the resource group use (a key no
flavor sets is the node scheduler's business, not quota's). ``Placement`` is the hashable
summary of a pod set's constraints that shape classes carry. No quota, no node capacity here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from codeflare.k8s.labels import NodeSelectorTerm, node_selector_matches
from codeflare.scheduling.model import PodSet, ResourceFlavor

Toleration = tuple[tuple[str, str], ...]
Placement = tuple[tuple[Toleration, ...], tuple[tuple[str, str], ...], tuple[NodeSelectorTerm, ...] | None]
"""(tolerations, nodeSelector items, required node affinity terms or None)."""

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def placement_of(pod_set: PodSet) -> Placement | None:
    """The pod set's placement constraints, or None when it has none (the common, fast case)."""
    if not pod_set.tolerations and not pod_set.node_selector and pod_set.node_affinity is None:
        return None
    tolerations = tuple(tuple(sorted((str(k), str(v)) for k, v in t.items())) for t in pod_set.tolerations)
    return tolerations, tuple(sorted(pod_set.node_selector.items())), pod_set.node_affinity


def tolerates(toleration: Mapping[str, str], taint: Mapping[str, str]) -> bool:
    """Kubernetes' ToleratesTaint: effect, key and (Equal) value must match; Exists ignores value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if not key and operator != "Exists":
        return False
    if operator == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(
    flavor: ResourceFlavor, tolerations: Iterable[Mapping[str, str]]
) -> Mapping[str, str] | None:
    """The first NoSchedule/NoExecute taint of the flavor that nothing tolerates, if any."""
    every = [*tolerations, *flavor.tolerations]
    for taint in flavor.node_taints:
        if taint.get("effect") in _BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in every):
            return taint
    return None


def _taint_text(taint: Mapping[str, str]) -> str:
    value = taint.get("value") or ""
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"


def label_keys(flavors: Iterable[ResourceFlavor | None]) -> frozenset[str]:
    """Every nodeLabels key used by the given flavors (a resource group's)."""
    return frozenset(k for f in flavors if f is not None for k in f.node_labels)


def _affinity_matches(placement: Placement, labels: Mapping[str, str], keys: Collection[str]) -> bool:
    _, selector, affinity = placement
    if any(k in keys and labels.get(k) != v for k, v in selector):
        return False
    if affinity is None:
        return True
    terms = []
    for term in affinity:
        kept = tuple(req for req in term if req.key in keys)
        if not kept:
            return True  # a term with no relevant key matches every flavor (terms are ORed)
        terms.append(kept)
    return not terms or node_selector_matches(terms, labels)


def flavor_mismatch(flavor: ResourceFlavor, placement: Placement | None, keys: Collection[str]) -> str | None:
    """Why the pod set may not use ``flavor`` (Kueue's wording), or None when it may."""
    tolerations = [dict(t) for t in placement[0]] if placement is not None else []
    taint = untolerated_taint(flavor, tolerations)
    if taint is not None:
        return f"untolerated taint {_taint_text(taint)} in flavor {flavor.name}"
    if placement is not None and not _affinity_matches(placement, flavor.node_labels, keys):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None
