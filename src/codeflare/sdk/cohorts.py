"""Admin helper for Kueue's hierarchical cohorts: build and apply a Cohort.

A Cohort is a node of a cohort tree: its ``parent`` (unset for a root), the quota it adds to its
subtree's pool (FlavorQuotas, with borrowing and lending limits only under a parent), and its
fair-sharing ``weight``. ClusterQueues join by ``cohort=`` (:func:`codeflare.sdk.admin.create_cluster_queue`).
:func:`build_cohort` checks everything client-side (names, quantities, the CRD schema and Kueue's
webhook rules, through :func:`codeflare.api.validation.validate_against_crd`) before any call;
:func:`create_cohort` applies it (idempotent). A cycle of parents is not refused (Kueue does not
either): the operator marks the Cohorts ``Active=False`` and their queues admit nothing.
"""

from __future__ import annotations

from typing import Any

from codeflare.api.kueue import FlavorQuota, _flavor_entry, _flavor_problems, weight_problems
from codeflare.api.validation import ManifestError, Problems, validate_against_crd
from codeflare.k8s.names import is_dns1123_subdomain
from codeflare.k8s.quantity import QuantityInput, canonical
from codeflare.kube import kinds
from codeflare.sdk.client import Client

__all__ = ["build_cohort", "create_cohort"]


def build_cohort(
    name: str,
    *,
    parent: str | None = None,
    flavors: list[FlavorQuota] | None = None,
    weight: QuantityInput | None = None,
) -> dict[str, Any]:
    """A v1beta2 Cohort named ``name`` under ``parent`` with the quota of ``flavors`` (one
    resource group, flavors in order) and fair-sharing ``weight`` (Kueue's default 1)."""
    problems: Problems = [("name", p) for p in is_dns1123_subdomain(name)]
    if parent is not None:
        problems += [("parent", p) for p in is_dns1123_subdomain(parent)]
    covered: list[str] = []
    for index, flavor in enumerate(flavors or []):
        problems += _flavor_problems(f"flavors[{index}]", flavor)
        covered += [resource for resource in flavor.resources if resource not in covered]
    problems += weight_problems(weight)
    if problems:
        raise ManifestError("Cohort", name, problems)
    spec: dict[str, Any] = {}
    if parent is not None:
        spec["parentName"] = parent
    if flavors:
        spec["resourceGroups"] = [
            {"coveredResources": covered, "flavors": [_flavor_entry(f, covered) for f in flavors]}
        ]
    if weight is not None:
        spec["fairSharing"] = {"weight": canonical(weight)}
    obj = {"apiVersion": kinds.COHORT.api_version, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}
    validate_against_crd(obj)
    return obj


def create_cohort(
    name: str,
    *,
    parent: str | None = None,
    flavors: list[FlavorQuota] | None = None,
    weight: QuantityInput | None = None,
    client: Client | None = None,
) -> dict[str, Any]:
    """Build (:func:`build_cohort`) and apply a Cohort; returns it as the server stored it."""
    obj = build_cohort(name, parent=parent, flavors=flavors, weight=weight)
    return (client or Client.default()).kueue_apply(kinds.COHORT, obj)
