"""The Cohort admin helper refuses before any call what Kueue's CRD and webhook would refuse."""

from __future__ import annotations

import pytest

from codeflare.api.kueue import FlavorQuota
from codeflare.api.validation import ManifestError
from codeflare.sdk import build_cohort


def test_a_cohort_under_a_parent_with_quota_limits_and_weight() -> None:
    quota = FlavorQuota(
        "default", {"cpu": 4, "memory": "8Gi"}, borrowing_limit={"cpu": 2}, lending_limit={"cpu": 1}
    )
    obj = build_cohort("team", parent="org", flavors=[quota], weight=0.5)
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2" and obj["kind"] == "Cohort"
    assert obj["spec"]["parentName"] == "org"
    assert obj["spec"]["fairSharing"] == {"weight": "500m"}
    (group,) = obj["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory"]
    cpu = group["flavors"][0]["resources"][0]
    assert (cpu["nominalQuota"], cpu["borrowingLimit"], cpu["lendingLimit"]) == ("4", "2", "1")


def test_a_root_cohort_is_just_a_name() -> None:
    assert build_cohort("org")["spec"] == {}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"flavors": [FlavorQuota("default", {"cpu": 4}, borrowing_limit={"cpu": 1})]}, "borrowingLimit"),
        ({"weight": -1}, "weight"),
        ({"parent": "Not_A_Name"}, "parent"),
        ({"flavors": [FlavorQuota("default", {"cpu": "lots"})]}, "flavors[0]"),
    ],
)
def test_refused_with_the_field_named(kwargs: dict, field: str) -> None:
    with pytest.raises(ManifestError) as caught:
        build_cohort("org", **kwargs)
    assert field in str(caught.value)
