"""Pod set paths, inference for known kinds, and the components built from an AppWrapper."""

from __future__ import annotations

import copy

import pytest

from codeflare.k8s.types import Obj
from codeflare.operator.appwrapper.podsets import (
    PodSetError,
    build_component,
    expected_pods,
    infer_pod_sets,
    parse_path,
    resolve,
)


def pod_template(app: str) -> Obj:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def raycluster() -> Obj:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc"},
        "spec": {
            "headGroupSpec": {"template": pod_template("head")},
            "workerGroupSpecs": [
                {"groupName": "a", "replicas": 2, "template": pod_template("a")},
                {"groupName": "b", "replicas": 1, "numOfHosts": 4, "template": pod_template("b")},
            ],
        },
    }


def wrapper(*components: Obj) -> Obj:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns", "uid": "u-1"},
        "spec": {"components": list(components)},
    }


def test_parse_path_with_indexes() -> None:
    assert parse_path("template.spec.workerGroupSpecs[1].template") == [
        "template",
        "spec",
        "workerGroupSpecs",
        1,
        "template",
    ]
    with pytest.raises(PodSetError):
        parse_path("template..spec")


def test_resolve_reports_what_is_missing() -> None:
    component = {"template": raycluster()}
    assert resolve(component, "template.spec.workerGroupSpecs[1].template")["metadata"]["labels"] == {
        "app": "b"
    }
    with pytest.raises(PodSetError, match=r"no element \[5\]"):
        resolve(component, "template.spec.workerGroupSpecs[5].template")
    with pytest.raises(PodSetError, match="no field"):
        resolve(component, "template.spec.nothing")


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ({"apiVersion": "v1", "kind": "Pod"}, [{"path": "template", "replicas": 1}]),
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3}},
            [{"path": "template.spec.template", "replicas": 3}],
        ),
        (
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {}},
            [{"path": "template.spec.template", "replicas": 1}],
        ),
        (
            {"apiVersion": "batch/v1", "kind": "Job", "spec": {"parallelism": 4}},
            [{"path": "template.spec.template", "replicas": 4}],
        ),
        (
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "spec": {"replicatedJobs": [{"replicas": 2, "template": {"spec": {"parallelism": 3}}}]},
            },
            [{"path": "template.spec.replicatedJobs[0].template.spec.template", "replicas": 6}],
        ),
        (
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 3}}},
            },
            [
                {"path": "template.spec.pytorchReplicaSpecs.Master.template", "replicas": 1},
                {"path": "template.spec.pytorchReplicaSpecs.Worker.template", "replicas": 3},
            ],
        ),
        ({"apiVersion": "example.com/v1", "kind": "Unknown"}, []),
    ],
)
def test_inference(template: Obj, expected: list[Obj]) -> None:
    assert infer_pod_sets(template) == expected


def test_raycluster_and_rayjob_inference() -> None:
    assert infer_pod_sets(raycluster()) == [
        {"path": "template.spec.headGroupSpec.template", "replicas": 1},
        {"path": "template.spec.workerGroupSpecs[0].template", "replicas": 2},
        {"path": "template.spec.workerGroupSpecs[1].template", "replicas": 4},
    ]
    rayjob = {"apiVersion": "ray.io/v1", "kind": "RayJob", "spec": {"rayClusterSpec": raycluster()["spec"]}}
    head = infer_pod_sets(rayjob)[0]
    assert head["path"] == "template.spec.rayClusterSpec.headGroupSpec.template"
    assert expected_pods([{"template": raycluster()}, {"template": rayjob}]) == 14


def test_declared_pod_sets_win_over_inference() -> None:
    component = {"template": raycluster(), "podSets": [{"path": "template.spec.headGroupSpec.template"}]}
    assert expected_pods([component]) == 1


def test_build_component_labels_owns_and_injects_pod_set_infos() -> None:
    infos = [
        {
            "labels": {"flavor": "gpu"},
            "annotations": {"note": "x"},
            "nodeSelector": {"pool": "gpu"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
        },
        {},
        {"nodeSelector": {"pool": "cpu"}},
    ]
    aw = wrapper({"template": raycluster(), "podSetInfos": infos})
    original = copy.deepcopy(aw)

    obj = build_component(aw, 0)

    assert aw == original
    assert obj["metadata"]["namespace"] == "ns"
    assert obj["metadata"]["labels"]["workload.codeflare.dev/appwrapper"] == "aw"
    assert obj["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "workload.codeflare.dev/v1beta2",
            "kind": "AppWrapper",
            "name": "aw",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    head = obj["spec"]["headGroupSpec"]["template"]
    assert head["metadata"]["labels"] == {
        "app": "head",
        "flavor": "gpu",
        "workload.codeflare.dev/appwrapper": "aw",
    }
    assert head["metadata"]["annotations"] == {"note": "x"}
    assert head["spec"]["nodeSelector"] == {"pool": "gpu"}
    assert head["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    workers = obj["spec"]["workerGroupSpecs"]
    assert workers[0]["template"]["metadata"]["labels"]["workload.codeflare.dev/appwrapper"] == "aw"
    assert "nodeSelector" not in workers[0]["template"]["spec"]
    assert workers[1]["template"]["spec"]["nodeSelector"] == {"pool": "cpu"}


def test_build_pod_component_labels_the_pod_itself() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    obj = build_component(wrapper({"template": pod, "podSetInfos": [{"nodeSelector": {"a": "b"}}]}), 0)
    assert obj["metadata"]["labels"] == {"workload.codeflare.dev/appwrapper": "aw"}
    assert obj["spec"]["nodeSelector"] == {"a": "b"}


def test_build_component_rejects_bad_templates_and_paths() -> None:
    with pytest.raises(PodSetError, match=r"metadata\.name"):
        build_component(wrapper({"template": {"apiVersion": "v1", "kind": "Pod"}}), 0)
    bad_path = {"template": raycluster(), "podSets": [{"path": "template.spec.missing.template"}]}
    with pytest.raises(PodSetError, match="no field 'missing'"):
        build_component(wrapper(bad_path), 0)
