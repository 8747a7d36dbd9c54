"""A RayJob's pod sets as Kueue counts them, the submitter Job's included (K8sJobMode).

The table ports the cases of Kueue's ``TestPodSets`` (kubernetes-sigs/kueue,
``pkg/controller/jobs/rayjob/rayjob_controller_test.go``) as data. Kueue builds its objects in Go,
without the RayJob CRD's defaults, so two of its inputs mean something else through the API:
an unset ``submissionMode`` is not K8sJobMode in Kueue's tests but is K8sJobMode here (the CRD's
default, KubeRay's too), and an unset worker ``replicas`` counts 1 there but is defaulted to 0 by
the CRD. The ported inputs therefore spell out what Kueue's objects mean: ``HTTPMode`` where its
mode is unset, ``replicas: 1`` where its replicas are unset. Topology annotations (Kueue's
TopologyRequest) are kept in the templates; topology itself is not modelled. The default
submitter template is KubeRay's (ray-operator/controllers/ray/common/job.go,
GetDefaultSubmitterContainer): requests 500m CPU / 200Mi, limits 1 CPU / 1Gi.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.operator.queueing import jobs
from codeflare.operator.queueing.adapters import PodSetInfo, adapter_for

REQUIRED_TOPOLOGY = {"kueue.x-k8s.io/podset-required-topology": "cloud.com/block"}
PREFERRED_TOPOLOGY = {"kueue.x-k8s.io/podset-preferred-topology": "cloud.com/block"}


def template(container: str, annotations: dict[str, str] | None = None) -> Obj:
    out: Obj = {"spec": {"containers": [{"name": container}]}}
    if annotations:
        out["metadata"] = {"annotations": annotations}
    return out


def rayjob(
    workers: list[Obj], *, mode: str | None, head: Obj | None = None, submitter: Obj | None = None
) -> Obj:
    spec: Obj = {
        "rayClusterSpec": {
            "headGroupSpec": {"template": head or template("head_c")},
            "workerGroupSpecs": workers,
        }
    }
    if mode is not None:
        spec["submissionMode"] = mode
    if submitter is not None:
        spec["submitterPodTemplate"] = submitter
    return {"metadata": {"name": "rayjob", "namespace": "ns", "uid": "u"}, "spec": spec}


def group(name: str, container: str, replicas: int, hosts: int | None = None, **meta: Any) -> Obj:
    out: Obj = {"groupName": name, "replicas": replicas, "template": template(container, **meta)}
    if hosts is not None:
        out["numOfHosts"] = hosts
    return out


DEFAULT_SUBMITTER = {
    "spec": {
        "containers": [
            {
                "name": "ray-job-submitter",
                "resources": {
                    "limits": {"cpu": "1", "memory": "1Gi"},
                    "requests": {"cpu": "500m", "memory": "200Mi"},
                },
            }
        ],
        "restartPolicy": "Never",
    }
}
SUBMITTER_OVERRIDE = {
    "spec": {
        "containers": [
            {"name": "ray-job-submitter", "resources": {"requests": {"cpu": "50m", "memory": "100Mi"}}}
        ],
        "restartPolicy": "Never",
    }
}
TWO_GROUPS = [group("group1", "group1_c", 1), group("group2", "group2_c", 3)]
# name -> (RayJob, [(pod set name, count, template)])
CASES: dict[str, tuple[Obj, list[tuple[str, int, Obj]]]] = {
    "no annotations": (
        rayjob(TWO_GROUPS, mode="HTTPMode"),
        [
            ("head", 1, template("head_c")),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c")),
        ],
    ),
    "with required topology annotation": (
        rayjob(
            [group("group1", "group1_c", 1, annotations=REQUIRED_TOPOLOGY), group("group2", "group2_c", 3)],
            mode="HTTPMode",
            head=template("head_c", REQUIRED_TOPOLOGY),
        ),
        [
            ("head", 1, template("head_c", REQUIRED_TOPOLOGY)),
            ("group1", 1, template("group1_c", REQUIRED_TOPOLOGY)),
            ("group2", 3, template("group2_c")),
        ],
    ),
    "with preferred topology annotation": (
        rayjob(
            [group("group1", "group1_c", 1), group("group2", "group2_c", 3, annotations=PREFERRED_TOPOLOGY)],
            mode="HTTPMode",
            head=template("head_c", PREFERRED_TOPOLOGY),
        ),
        [
            ("head", 1, template("head_c", PREFERRED_TOPOLOGY)),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c", PREFERRED_TOPOLOGY)),
        ],
    ),
    "with NumOfHosts > 1": (
        rayjob(
            [group("group1", "group1_c", 1, hosts=4), group("group2", "group2_c", 3, hosts=4)],
            mode="HTTPMode",
        ),
        [
            ("head", 1, template("head_c")),
            ("group1", 4, template("group1_c")),
            ("group2", 12, template("group2_c")),
        ],
    ),
    "with default job submitter": (
        rayjob(TWO_GROUPS, mode="K8sJobMode"),
        [
            ("head", 1, template("head_c")),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c")),
            ("submitter", 1, DEFAULT_SUBMITTER),
        ],
    ),
    "with submitter job pod template override": (
        rayjob(TWO_GROUPS, mode="K8sJobMode", submitter=SUBMITTER_OVERRIDE),
        [
            ("head", 1, template("head_c")),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c")),
            ("submitter", 1, SUBMITTER_OVERRIDE),
        ],
    ),
    # beyond Kueue's table: what the API's defaulting makes of an unset mode, and the other modes
    "unset submission mode is K8sJobMode (the CRD default)": (
        rayjob(TWO_GROUPS, mode=None),
        [
            ("head", 1, template("head_c")),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c")),
            ("submitter", 1, DEFAULT_SUBMITTER),
        ],
    ),
    "InteractiveMode has no submitter": (
        rayjob(TWO_GROUPS, mode="InteractiveMode"),
        [
            ("head", 1, template("head_c")),
            ("group1", 1, template("group1_c")),
            ("group2", 3, template("group2_c")),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pod_sets_as_kueue_counts_them(name: str) -> None:
    job, expected = CASES[name]
    got = [(ps.name, ps.count, ps.template) for ps in adapter_for(kinds.RAYJOB).pod_sets(copy.deepcopy(job))]
    assert got == expected


def test_default_submitter_uses_the_head_image_and_is_charged_kuberays_requests() -> None:
    head = {
        "spec": {
            "containers": [
                {
                    "name": "ray-head",
                    "image": "rayproject/ray:2.9",
                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                }
            ]
        }
    }
    job = rayjob([group("workers", "w", 2)], mode="K8sJobMode", head=head)
    submitter = adapter_for(kinds.RAYJOB).pod_sets(job)[-1]
    assert submitter.template["spec"]["containers"][0]["image"] == "rayproject/ray:2.9"
    assert jobs.workload_pod_sets(kinds.RAYJOB, job)[-1] == {
        "name": "submitter",
        "count": 1,
        "template": {
            "spec": {
                "containers": [
                    {"name": "main", "resources": {"requests": {"cpu": "500m", "memory": "200Mi"}}}
                ]
            }
        },
    }


def test_admission_injects_flavors_into_a_submitter_template_only_where_the_job_has_one() -> None:
    assignment = [PodSetInfo("submitter", {"pool": "cpu"})]
    adapter = adapter_for(kinds.RAYJOB)
    default = adapter.run_with_pod_set_infos(rayjob(TWO_GROUPS, mode="K8sJobMode"), assignment)
    assert "submitterPodTemplate" not in default["spec"] and default["spec"]["suspend"] is False
    custom = rayjob(TWO_GROUPS, mode="K8sJobMode", submitter=SUBMITTER_OVERRIDE)
    admitted = adapter.run_with_pod_set_infos(custom, assignment)
    assert admitted["spec"]["submitterPodTemplate"]["spec"]["nodeSelector"] == {"pool": "cpu"}


def test_a_rayclusters_pod_sets_have_no_submitter() -> None:
    cluster = {"metadata": {"name": "c"}, "spec": rayjob(TWO_GROUPS, mode=None)["spec"]["rayClusterSpec"]}
    assert [ps.name for ps in adapter_for(kinds.RAYCLUSTER).pod_sets(cluster)] == ["head", "group1", "group2"]
