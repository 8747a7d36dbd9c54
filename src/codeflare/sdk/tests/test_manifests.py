"""Manifests built from SDK configurations and admin arguments: what a user of the builders observes.

They live with the SDK because their input is a ``ClusterConfiguration``; ``codeflare.api`` itself
never imports the SDK (the layer contract).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.api.appwrapper import build_appwrapper
from codeflare.api.builders import (
    FlavorQuota,
    ManifestError,
    build_cluster_manifest,
    build_cluster_queue,
    build_local_queue,
    build_raycluster,
    build_rayjob,
    build_resource_flavor,
    build_workload_priority_class,
    validate_against_crd,
)
from codeflare.sdk.config import ClusterConfiguration, WorkerGroup

# --- RayCluster ----------------------------------------------------------------------------------


def _head(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["headGroupSpec"]


def test_gpus_become_num_gpus_and_other_resources_ray_custom_resources() -> None:
    config = ClusterConfiguration(
        "gpu", head_extended_resource_requests={"nvidia.com/gpu": 1},
        worker_extended_resource_requests={"nvidia.com/gpu": 2, "example.com/fpga": 1},
    )
    obj = build_raycluster(config, "ns")
    assert _head(obj)["rayStartParams"]["num-gpus"] == "1"
    worker = obj["spec"]["workerGroupSpecs"][0]
    assert worker["rayStartParams"]["num-gpus"] == "2"
    quoted = worker["rayStartParams"]["resources"]  # KubeRay's quoted format, which Ray's autoscaler parses
    assert json.loads(quoted[1:-1].replace("\\", "")) == {"example.com/fpga": 1}
    resources = worker["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "2"


def test_extended_resource_mapping_overrides_the_defaults() -> None:
    config = ClusterConfiguration("tpu", worker_extended_resource_requests={"example.com/accel": 2},
                                  extended_resource_mapping={"example.com/accel": "GPU"})
    assert build_raycluster(config, "ns")["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"] == "2"


def test_unqueued_cluster_is_not_suspended_and_has_no_kueue_labels() -> None:
    obj = build_raycluster(ClusterConfiguration("plain"), "ns")
    assert "suspend" not in obj["spec"] and "labels" not in obj["metadata"]


def test_queued_cluster_can_opt_out_of_suspension() -> None:
    obj = build_raycluster(ClusterConfiguration("q", local_queue="lq", suspend_when_queued=False), "ns")
    assert obj["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq"}
    assert "suspend" not in obj["spec"]


def test_builder_revalidates_a_configuration_changed_after_construction() -> None:
    config = ClusterConfiguration("later")
    config.num_workers = -3
    with pytest.raises(ValueError, match="num_workers: -3 must not be negative"):
        build_raycluster(config, "ns")


def test_autoscaling_bounds_are_written_per_group() -> None:
    config = ClusterConfiguration("auto", num_workers=2, enable_autoscaling=True, max_workers=4,
                                  additional_worker_groups=[WorkerGroup("g", replicas=1, max_replicas=3)])
    obj = build_raycluster(config, "ns")
    assert obj["spec"]["enableInTreeAutoscaling"] is True
    groups = {g["groupName"]: (g["minReplicas"], g["replicas"], g["maxReplicas"])
              for g in obj["spec"]["workerGroupSpecs"]}
    assert groups == {"default-worker": (2, 2, 4), "g": (1, 1, 3)}


# --- AppWrapper ----------------------------------------------------------------------------------


def test_appwrapper_takes_the_queue_and_the_wrapped_cluster_is_not_suspended() -> None:
    config = ClusterConfiguration("w", local_queue="lq", priority="high", labels={"app": "x"},
                                  appwrapper=True)
    wrapper = build_cluster_manifest(config, "ns")
    assert wrapper["kind"] == "AppWrapper" and wrapper["spec"]["suspend"] is True
    assert wrapper["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq",
                                             "kueue.x-k8s.io/priority-class": "high"}
    template = wrapper["spec"]["components"][0]["template"]
    assert template["metadata"] == {"name": "w", "labels": {"app": "x"}}
    assert "suspend" not in template["spec"]


def test_appwrapper_pod_sets_count_hosts_and_drop_status() -> None:
    cluster = build_raycluster(ClusterConfiguration("w", num_workers=3), "ns")
    cluster["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    cluster["status"] = {"state": "ready"}
    cluster["metadata"]["uid"] = "abc"
    wrapper = build_appwrapper(cluster)
    component = wrapper["spec"]["components"][0]
    assert component["podSets"] == [
        {"path": "template.spec.headGroupSpec.template", "replicas": 1},
        {"path": "template.spec.workerGroupSpecs[0].template", "replicas": 6},
    ]
    assert "status" not in component["template"] and "uid" not in component["template"]["metadata"]
    assert cluster["status"] == {"state": "ready"}, "the input is not modified"


def test_appwrapper_only_wraps_rayclusters() -> None:
    job = build_rayjob("j", "python x.py", "ns", cluster_name="c")
    with pytest.raises(ManifestError, match=r"only ray\.io/v1 RayCluster"):
        build_appwrapper(job)


# --- RayJob --------------------------------------------------------------------------------------


def test_rayjob_on_existing_cluster_rejects_queue_and_shutdown() -> None:
    with pytest.raises(ManifestError) as caught:
        build_rayjob("j", "python x.py", "ns", cluster_name="c", local_queue="lq",
                     shutdown_after_job_finishes=True)
    fields = {field for field, _ in caught.value.problems}
    assert fields == {"local_queue", "shutdown_after_job_finishes"}


@pytest.mark.parametrize(("kwargs", "field", "rule"), [
    ({}, "cluster_name", "exactly one of"),
    ({"cluster_name": "c", "cluster_config": ClusterConfiguration("c")}, "cluster_name", "exactly one of"),
    ({"cluster_name": "c", "backoff_limit": -1}, "backoff_limit", ">= 0"),
    ({"cluster_name": "c", "entrypoint_num_gpus": -1}, "entrypoint_num_gpus", ">= 0"),
    ({"cluster_name": "c", "submission_mode": "Magic"}, "submission_mode", "must be one of"),
    ({"cluster_name": "Bad"}, "cluster_name", "RFC 1123"),
])
def test_rayjob_argument_errors_name_the_argument(kwargs: dict[str, Any], field: str, rule: str) -> None:
    with pytest.raises(ManifestError) as caught:
        build_rayjob("job", "python x.py", "ns", **kwargs)
    assert any(f == field and rule in message for f, message in caught.value.problems), caught.value


def test_rayjob_name_leaves_room_for_kuberay_suffixes() -> None:
    with pytest.raises(ManifestError, match="job_name: must be no more than 47"):
        build_rayjob("j" * 48, "python x.py", "ns", cluster_name="c")


def test_rayjob_inherits_queue_from_its_cluster_and_can_be_left_running() -> None:
    config = ClusterConfiguration("c", local_queue="lq", priority="low")
    job = build_rayjob("j", "python x.py", "ns", cluster_config=config, suspend=False)
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq",
                                         "kueue.x-k8s.io/priority-class": "low"}
    assert "suspend" not in job["spec"] and "suspend" not in job["spec"]["rayClusterSpec"]
    assert job["spec"]["shutdownAfterJobFinishes"] is True


# --- Kueue ---------------------------------------------------------------------------------------


def test_cluster_queue_covers_the_union_of_flavor_resources() -> None:
    cq = build_cluster_queue("cq", flavors=[FlavorQuota("a", {"cpu": 4}),
                                            FlavorQuota("b", {"memory": "1Gi", "cpu": "500m"})])
    group = cq["spec"]["resourceGroups"][0]
    assert group["coveredResources"] == ["cpu", "memory"]
    quotas = [[r["nominalQuota"] for r in f["resources"]] for f in group["flavors"]]
    assert quotas == [["4", "0"], ["500m", "1Gi"]]


@pytest.mark.parametrize(("flavors", "field", "rule"), [
    ([], "flavors", "at least one"),
    ([FlavorQuota("a", {"cpu": "-1"})], "flavors[0].resources['cpu']", "must not be negative"),
    ([FlavorQuota("a", {"cpu": "lots"})], "flavors[0].resources['cpu']", "not a quantity"),
    ([FlavorQuota("a", {"gpu": 1})], "flavors[0].resources['gpu']", "domain-prefixed"),
    ([FlavorQuota("a", {"cpu": 1}, borrowing_limit={"memory": 1})], "flavors[0].borrowing_limit['memory']",
     "no nominal quota"),
    ([FlavorQuota("a", {"cpu": 1}, lending_limit={"cpu": 2})], "flavors[0].lending_limit['cpu']",
     "above the nominal quota"),
    ([FlavorQuota("a", {"cpu": 1}), FlavorQuota("a", {"cpu": 1})], "flavors[1].name", "duplicate"),
    ([FlavorQuota("A_B", {"cpu": 1})], "flavors[0].name", "RFC 1123"),
])
def test_cluster_queue_errors_name_the_field(flavors: list[FlavorQuota], field: str, rule: str) -> None:
    with pytest.raises(ManifestError) as caught:
        build_cluster_queue("cq", flavors=flavors)
    assert any(f == field and rule in message for f, message in caught.value.problems), caught.value


def test_cluster_queue_checks_strategy_cohort_and_stop_policy() -> None:
    with pytest.raises(ManifestError) as caught:
        build_cluster_queue("cq", flavors=[FlavorQuota("a", {"cpu": 1})], cohort="Bad Cohort",
                            queueing_strategy="LIFO", stop_policy="Pause")
    assert {f for f, _ in caught.value.problems} == {"cohort", "queueing_strategy", "stop_policy"}


def test_admission_fair_sharing_fields_are_built_and_checked() -> None:
    """ClusterQueue ``spec.admissionScope.admissionMode`` and LocalQueue ``spec.fairSharing.weight``
    (admission fair sharing), checked against the CRD as built."""
    flavors = [FlavorQuota("a", {"cpu": 1})]
    cq = build_cluster_queue("cq", flavors=flavors, admission_mode="UsageBasedAdmissionFairSharing")
    assert cq["spec"]["admissionScope"] == {"admissionMode": "UsageBasedAdmissionFairSharing"}
    assert "admissionScope" not in build_cluster_queue("cq", flavors=[FlavorQuota("a", {"cpu": 1})])["spec"]
    assert build_local_queue("lq", "ns", "cq", weight="1.5")["spec"]["fairSharing"] == {"weight": "1500m"}
    assert "fairSharing" not in build_local_queue("lq", "ns", "cq")["spec"]
    with pytest.raises(ManifestError) as caught:
        build_cluster_queue("cq", flavors=[FlavorQuota("a", {"cpu": 1})], admission_mode="UsageBased")
    assert [f for f, _ in caught.value.problems] == ["admission_mode"]
    with pytest.raises(ManifestError, match="weight: must be greater than or equal to 0"):
        build_local_queue("lq", "ns", "cq", weight=-1)


def test_local_queue_default_annotation_and_other_admin_objects() -> None:
    assert "annotations" not in build_local_queue("lq", "ns", "cq")["metadata"]
    assert build_local_queue("lq", "ns", "cq", default=True)["metadata"]["annotations"] == {
        "kueue.x-k8s.io/default-queue": "true"}
    with pytest.raises(ManifestError, match="value: 4294967296 must be a 32-bit integer"):
        build_workload_priority_class("huge", 2**32)
    with pytest.raises(ManifestError, match="name: a lowercase RFC 1123 subdomain must consist"):
        build_resource_flavor("Not_A_Name")


# --- CRD validation ------------------------------------------------------------------------------


def test_validate_against_crd_reports_schema_violations_and_unknown_fields() -> None:
    obj = build_raycluster(ClusterConfiguration("c"), "ns")
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = -1
    obj["spec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] = 2
    obj["spec"]["typo"] = True
    with pytest.raises(ManifestError) as caught:
        validate_against_crd(obj)
    fields = [field for field, _ in caught.value.problems]
    assert "spec.workerGroupSpecs[0].replicas" in fields
    assert "spec.headGroupSpec.rayStartParams.num-cpus" in fields
    assert "spec.typo" in fields
    assert "would drop it" in str(caught.value)


def test_validate_against_crd_checks_metadata_and_kind() -> None:
    with pytest.raises(ManifestError) as caught:
        validate_against_crd({"apiVersion": "ray.io/v1", "kind": "RayCluster",
                              "metadata": {"name": "c", "labels": {"a": "b c"}},
                              "spec": {"headGroupSpec": {"template": {}}}})
    assert dict(caught.value.problems) == {
        "metadata.namespace": "Required value",
        "metadata.labels": 'Invalid value: "b c": a valid label must be an empty string or consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    }
    with pytest.raises(ManifestError, match="no bundled CRD"):
        validate_against_crd({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    with pytest.raises(ManifestError, match=r"metadata\.namespace: Forbidden: not allowed on this type$"):
        validate_against_crd({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                              "metadata": {"name": "f", "namespace": "ns"}, "spec": {}})


# --- property: random valid configurations always build CRD-valid manifests -----------------------

_name = st.from_regex(r"\A[a-z]([-a-z0-9]{0,20}[a-z0-9])?\Z")
_cpu = st.sampled_from([1, 2, 0.5, "250m", "1500m", "4"])
_memory = st.sampled_from([1, 2, "512Mi", "1Gi", "3G"])
_env_name = st.from_regex(r"\A[A-Z_][A-Z0-9_]{0,10}\Z")
_extended = st.dictionaries(st.sampled_from(["nvidia.com/gpu", "google.com/tpu", "example.com/fpga"]),
                            st.integers(0, 8), max_size=2)


@st.composite
def _worker_group(draw: st.DrawFn, autoscaling: bool) -> WorkerGroup:
    replicas = draw(st.integers(0, 5))
    low = draw(st.integers(0, replicas)) if autoscaling else None
    high = draw(st.integers(replicas, 10)) if autoscaling else None
    cpu, memory = draw(_cpu), draw(_memory)
    return WorkerGroup(draw(_name), replicas=replicas, cpu_requests=cpu, cpu_limits=cpu,
                       memory_requests=memory, memory_limits=memory,
                       extended_resource_requests=draw(_extended), min_replicas=low, max_replicas=high)


@st.composite
def _configuration(draw: st.DrawFn) -> ClusterConfiguration:
    autoscaling = draw(st.booleans())
    workers = draw(st.integers(0, 10))
    groups = draw(st.lists(_worker_group(autoscaling), max_size=3, unique_by=lambda g: g.name))
    groups = [g for g in groups if g.name != "default-worker"]
    cpu, memory = draw(_cpu), draw(_memory)
    return ClusterConfiguration(
        draw(_name), num_workers=workers, head_cpu_requests=cpu, head_cpu_limits=cpu,
        head_memory_requests=memory, head_memory_limits=memory, worker_cpu_requests=cpu,
        worker_cpu_limits=draw(st.sampled_from(["4", 8])), worker_memory_requests=memory,
        worker_memory_limits=draw(st.sampled_from(["4Gi", 16])),
        worker_extended_resource_requests=draw(_extended),
        enable_autoscaling=autoscaling,
        min_workers=draw(st.integers(0, workers)) if autoscaling else None,
        max_workers=draw(st.integers(workers, 20)) if autoscaling else None,
        local_queue=draw(st.none() | _name), priority=draw(st.none() | _name),
        labels=draw(st.dictionaries(_name, _name, max_size=2)),
        envs=draw(st.dictionaries(_env_name, st.text(max_size=10), max_size=2)),
        additional_worker_groups=groups, appwrapper=draw(st.booleans()),
    )


@given(_configuration(), _name)
@settings(max_examples=75, deadline=None)
def test_random_configurations_build_crd_valid_manifests(config: ClusterConfiguration, name: str) -> None:
    manifest = build_cluster_manifest(config, "ns")  # validates against the CRD itself
    validate_against_crd(manifest)
    groups = build_raycluster(config, "ns")["spec"]["workerGroupSpecs"]
    pods = 1 + sum(g["replicas"] * g["numOfHosts"] for g in groups)
    if manifest["kind"] == "AppWrapper":
        assert sum(p["replicas"] for p in manifest["spec"]["components"][0]["podSets"]) == pods
    build_rayjob(name, "python main.py", "ns", cluster_config=config)
