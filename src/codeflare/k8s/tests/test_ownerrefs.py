"""Owner references point at the owner by uid and mark the controller."""

from __future__ import annotations

import pytest

from codeflare.k8s.ownerrefs import controller_of, is_owned_by, owner_reference, owner_references
from codeflare.k8s.types import Obj

OWNER: Obj = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc", "uid": "u-1"}}


def test_reference_is_built_from_the_owner() -> None:
    assert owner_reference(OWNER) == {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "rc",
                                      "uid": "u-1", "controller": True, "blockOwnerDeletion": True}
    listed = {"metadata": {"name": "aw", "uid": "u-2"}}  # list items may lack apiVersion/kind
    ref = owner_reference(listed, api_version="workload.codeflare.dev/v1beta2", kind="AppWrapper",
                          controller=False, block_owner_deletion=False)
    assert ref["kind"] == "AppWrapper" and ref["controller"] is False and ref["blockOwnerDeletion"] is False


def test_an_owner_without_identity_is_refused() -> None:
    with pytest.raises(ValueError, match="uid"):
        owner_reference({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})


def test_controller_and_ownership_are_found_by_uid() -> None:
    child: Obj = {"metadata": {"ownerReferences": [
        {"kind": "Workload", "uid": "w", "controller": False}, owner_reference(OWNER)]}}
    assert controller_of(child) == owner_reference(OWNER)
    assert controller_of(child, "AppWrapper") is None
    assert is_owned_by(child, OWNER) and is_owned_by(child, "w") and not is_owned_by(child, "other")
    assert not is_owned_by(child, {"metadata": {}}) and owner_references({}) == []
