"""The bundled CRDs: well-formed, structural, in sync with deploy/, and covering real objects."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from codeflare.api.crds import crd_for, load_crds
from codeflare.api.kueue_conversion import to_v1beta1
from codeflare.api.tests.crd_examples import (
    CLUSTER_QUEUE,
    EXAMPLES,
    POD_TEMPLATE,
    RAY_CLUSTER,
    RAY_CLUSTER_SPEC,
    WORKLOAD,
)
from codeflare.k8s import schema as schema_engine

REPO = Path(__file__).resolve().parents[4]
DEPLOY = REPO / "deploy" / "crds"
PACKAGE = Path(__file__).resolve().parents[1] / "crds"

EXPECTED = {
    "appwrappers.workload.codeflare.dev": ("AppWrapper", "v1beta2", "Namespaced", ["aw"]),
    "rayclusters.ray.io": ("RayCluster", "v1", "Namespaced", []),
    "rayjobs.ray.io": ("RayJob", "v1", "Namespaced", []),
    "resourceflavors.kueue.x-k8s.io": ("ResourceFlavor", "v1beta2", "Cluster", ["flavor", "flavors", "rf"]),
    "clusterqueues.kueue.x-k8s.io": ("ClusterQueue", "v1beta2", "Cluster", ["cq"]),
    "localqueues.kueue.x-k8s.io": ("LocalQueue", "v1beta2", "Namespaced", ["queue", "queues", "lq"]),
    "workloads.kueue.x-k8s.io": ("Workload", "v1beta2", "Namespaced", ["wl"]),
    "workloadpriorityclasses.kueue.x-k8s.io": ("WorkloadPriorityClass", "v1beta2", "Cluster", []),
    "cohorts.kueue.x-k8s.io": ("Cohort", "v1beta2", "Cluster", ["co"]),
}

# Kueue 0.19's CRDs serve v1beta1 (deprecated) and v1beta2 (stored), in that order.
KUEUE_SERVED = ["v1beta1", "v1beta2"]


# --- helpers --------------------------------------------------------------------------------


def stored(definition: dict[str, Any]) -> dict[str, Any]:
    """The storage version's entry of a CRD."""
    (entry,) = [v for v in definition["spec"]["versions"] if v["storage"]]
    return entry  # type: ignore[no-any-return]


def schema_of(obj: dict[str, Any]) -> dict[str, Any]:
    group, version = obj["apiVersion"].split("/")
    for definition in load_crds():
        if definition["spec"]["group"] == group and definition["spec"]["names"]["kind"] == obj["kind"]:
            (served,) = [v for v in definition["spec"]["versions"] if v["name"] == version]
            return served["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]
    raise AssertionError(f"no CRD for {obj['apiVersion']} {obj['kind']}")


def structural_problems(node: dict[str, Any], path: str = "") -> list[str]:
    """Nodes without a type (unless int-or-string or preserve-unknown) and other non-structural bits."""
    problems = []
    free = node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string")
    if "type" not in node and not free:
        problems.append(f"{path or '<root>'}: no type")
    if "$ref" in node:
        problems.append(f"{path}: $ref")
    if "properties" in node and isinstance(node.get("additionalProperties"), dict):
        problems.append(f"{path}: both properties and additionalProperties")
    if node.get("x-kubernetes-list-type") == "map":
        items = node["items"]
        for key in node["x-kubernetes-list-map-keys"]:
            if key not in items.get("required", []) and "default" not in items["properties"][key]:
                problems.append(f"{path}: list-map key {key} neither required nor defaulted")
    for key, child in node.get("properties", {}).items():
        problems += structural_problems(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        problems += structural_problems(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        problems += structural_problems(node["additionalProperties"], f"{path}{{}}")
    return problems


def undeclared_fields(value: Any, node: dict[str, Any], path: str = "") -> list[str]:
    """Paths of ``value`` that the schema does not declare (and a server would prune)."""
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string"):
        return []
    if path == ".metadata":
        return []  # ObjectMeta is the server's, not the CRD's
    found = []
    if isinstance(value, dict):
        properties, extra = node.get("properties", {}), node.get("additionalProperties")
        for key, child in value.items():
            if key in properties:
                found += undeclared_fields(child, properties[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                found += undeclared_fields(child, extra, f"{path}.{key}")
            else:
                found.append(f"{path}.{key}")
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            found += undeclared_fields(item, node["items"], f"{path}[{index}]")
    return found


def resolves(schema: dict[str, Any], json_path: str) -> bool:
    """Does a printer-column path such as .status.conditions[?(@.type=="X")].status name declared fields?"""
    node = schema
    for part in re.sub(r"\[\?\(.*?\)\]", ".[]", json_path).strip(".").split("."):
        if part == "[]":
            node = node.get("items", {})
            continue
        if part not in node.get("properties", {}):
            return part == "creationTimestamp" and node.get("type") == "object" and not node.get("properties")
        node = node["properties"][part]
    return True


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crd_generator", DEPLOY / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


needs_repo = pytest.mark.skipif(not DEPLOY.is_dir(), reason="runs from a repository checkout only")


# --- the CRDs themselves --------------------------------------------------------------------


def test_every_expected_crd_is_bundled() -> None:
    assert sorted(definition["metadata"]["name"] for definition in load_crds()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_crd_envelope(name: str) -> None:
    kind, version, scope, short_names = EXPECTED[name]
    plural, _, group = name.partition(".")
    definition = crd_for(group, plural)
    spec = definition["spec"]
    assert definition["apiVersion"] == "apiextensions.k8s.io/v1"
    assert definition["kind"] == "CustomResourceDefinition"
    assert f"{spec['names']['plural']}.{spec['group']}" == definition["metadata"]["name"] == name
    assert spec["names"]["kind"] == kind
    assert spec["names"]["singular"] == kind.lower()
    assert spec["names"]["listKind"] == f"{kind}List"
    assert spec["names"].get("shortNames", []) == short_names
    assert spec["scope"] == scope
    served = KUEUE_SERVED if group == "kueue.x-k8s.io" else [version]
    assert [v["name"] for v in spec["versions"]] == served
    assert [v["name"] for v in spec["versions"] if v["storage"]] == [version]
    assert all(v["served"] for v in spec["versions"])


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".kueue.x-k8s.io")))
def test_kueue_crds_deprecate_v1beta1_and_convert_by_the_operators_webhook(name: str) -> None:
    plural, _, group = name.partition(".")
    spec = crd_for(group, plural)["spec"]
    v1beta1 = spec["versions"][0]
    # Kueue 0.19 config/components/crd/bases: the warning kubectl prints for v1beta1
    assert (v1beta1["deprecated"], v1beta1["deprecationWarning"]) == (
        True,
        "This version is deprecated. Use v1beta2 instead.",
    )
    assert not spec["versions"][1].get("deprecated")
    if plural == "cohorts":
        # we differ: Kueue converts Cohorts by webhook too, but both versions have one schema, so
        # the server's own conversion (apiVersion only, strategy None) is exact
        assert "conversion" not in spec
        return
    conversion = spec["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
    assert conversion["webhook"]["clientConfig"]["service"]["path"] == "/convert"


def test_v1beta2_schemas_carry_v1beta2_field_names() -> None:
    def props(plural: str, version: str, part: str) -> dict[str, Any]:
        (entry,) = [v for v in crd_for("kueue.x-k8s.io", plural)["spec"]["versions"] if v["name"] == version]
        return entry["schema"]["openAPIV3Schema"]["properties"][part]["properties"]  # type: ignore[no-any-return]

    renamed = [  # (plural, part, v1beta1 name, v1beta2 name)
        ("clusterqueues", "spec", "cohort", "cohortName"),
        ("localqueues", "status", "flavorUsage", "flavorsUsage"),
        ("workloads", "spec", "priorityClassName", "priorityClassRef"),
    ]
    for plural, part, old, new in renamed:
        assert old in props(plural, "v1beta1", part) and new not in props(plural, "v1beta1", part)
        assert new in props(plural, "v1beta2", part) and old not in props(plural, "v1beta2", part)
    assert "priorityClassSource" not in props("workloads", "v1beta2", "spec")
    assert "admissionChecks" not in props("clusterqueues", "v1beta2", "spec")
    fungibility = props("clusterqueues", "v1beta2", "spec")["flavorFungibility"]["properties"]
    assert fungibility["whenCanBorrow"]["enum"] == ["MayStopSearch", "TryNextFlavor"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schema_is_structural(name: str) -> None:
    plural, _, group = name.partition(".")
    for served in crd_for(group, plural)["spec"]["versions"]:
        schema = served["schema"]["openAPIV3Schema"]
        assert schema["type"] == "object"
        assert structural_problems(schema) == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_status_subresource_whenever_there_is_a_status(name: str) -> None:
    plural, _, group = name.partition(".")
    served = stored(crd_for(group, plural))
    has_status = "status" in served["schema"]["openAPIV3Schema"]["properties"]
    assert ("status" in served.get("subresources", {})) == has_status


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_printer_columns_name_declared_fields(name: str) -> None:
    plural, _, group = name.partition(".")
    served = stored(crd_for(group, plural))
    schema = served["schema"]["openAPIV3Schema"]
    columns = served["additionalPrinterColumns"]
    assert columns[-1] == {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    for column in columns:
        assert resolves(schema, column["jsonPath"]), column


def test_printer_columns_users_look_for() -> None:
    def names(group: str, plural: str) -> list[str]:
        served = stored(crd_for(group, plural))
        return [c["name"] for c in served["additionalPrinterColumns"] if not c.get("priority")]

    assert names("ray.io", "rayclusters")[:2] == ["Desired Workers", "Available Workers"]
    assert "Status" in names("ray.io", "rayclusters")
    assert names("workload.codeflare.dev", "appwrappers") == [
        "Status", "Quota Reserved", "Resources Deployed", "Unhealthy", "Age",
    ]  # fmt: skip
    assert names("kueue.x-k8s.io", "workloads") == ["Queue", "Reserved in", "Admitted", "Age"]
    assert names("kueue.x-k8s.io", "clusterqueues")[:4] == [
        "Cohort", "Strategy", "Pending Workloads", "Admitted Workloads",
    ]  # fmt: skip
    assert names("kueue.x-k8s.io", "localqueues")[:3] == [
        "ClusterQueue",
        "Pending Workloads",
        "Admitted Workloads",
    ]


def test_documented_enums_and_defaults() -> None:
    def spec_props(group: str, plural: str) -> dict[str, Any]:
        served = stored(crd_for(group, plural))
        return served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]  # type: ignore[no-any-return]

    cq = spec_props("kueue.x-k8s.io", "clusterqueues")
    assert cq["queueingStrategy"]["enum"] == ["BestEffortFIFO", "StrictFIFO"]
    assert cq["queueingStrategy"]["default"] == "BestEffortFIFO"
    assert cq["stopPolicy"]["default"] == "None"
    preemption = cq["preemption"]["properties"]
    assert preemption["withinClusterQueue"]["enum"] == ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
    assert preemption["reclaimWithinCohort"]["enum"] == ["Never", "LowerPriority", "Any"]
    assert preemption["borrowWithinCohort"]["properties"]["policy"]["default"] == "Never"
    fungibility = cq["flavorFungibility"]["properties"]
    assert (fungibility["whenCanBorrow"]["default"], fungibility["whenCanPreempt"]["default"]) == (
        "MayStopSearch",
        "TryNextFlavor",
    )
    quota = cq["resourceGroups"]["items"]["properties"]["flavors"]["items"]["properties"]["resources"][
        "items"
    ]
    assert quota["properties"]["nominalQuota"]["x-kubernetes-int-or-string"] is True
    assert re.match(quota["properties"]["nominalQuota"]["pattern"], "256Gi")
    assert not re.match(quota["properties"]["nominalQuota"]["pattern"], "lots")
    assert cq["fairSharing"]["properties"]["weight"]["default"] == 1  # Kueue's +kubebuilder:default=1

    job = spec_props("ray.io", "rayjobs")
    assert job["submissionMode"]["default"] == "K8sJobMode"
    assert job["backoffLimit"]["default"] == 0
    served = stored(crd_for("ray.io", "rayclusters"))
    assert job["rayClusterSpec"] == served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    workers = spec_props("ray.io", "rayclusters")["workerGroupSpecs"]["items"]["properties"]
    assert workers["numOfHosts"]["default"] == 1
    pod_set = spec_props("kueue.x-k8s.io", "workloads")["podSets"]["items"]["properties"]
    assert pod_set["name"]["default"] == "main"
    assert pod_set["count"]["minimum"] == 0
    workload = spec_props("kueue.x-k8s.io", "workloads")
    assert workload["maximumExecutionTimeSeconds"]["minimum"] == 1
    messages = [
        rule["message"]
        for served in crd_for("kueue.x-k8s.io", "workloads")["spec"]["versions"]
        for rule in served["schema"]["openAPIV3Schema"]["x-kubernetes-validations"]
        if "maximumExecutionTimeSeconds" in rule["rule"]
    ]  # Kueue v0.14.8's message at v1beta1, v0.19.2's at v1beta2
    assert messages == [
        "maximumExecutionTimeSeconds is immutable while admitted",
        "maximumExecutionTimeSeconds is immutable while workload quota reserved",
    ]


def test_appwrapper_phases_include_the_empty_phase() -> None:
    served = stored(crd_for("workload.codeflare.dev", "appwrappers"))
    phase = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["phase"]
    assert phase["enum"] == [
        "", "Suspended", "Resuming", "Running", "Resetting",
        "Suspending", "Succeeded", "Failed", "Terminating",
    ]  # fmt: skip


def test_crd_for_unknown_resource_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"rayclusters\.ray\.io"):
        crd_for("ray.io", "rayservices")


def test_loaded_crds_are_copies() -> None:
    load_crds()[0]["spec"]["group"] = "mutated"
    assert load_crds()[0]["spec"]["group"] != "mutated"


# --- deploy/ and the package stay in step ---------------------------------------------------


@needs_repo
def test_package_data_is_identical_to_deploy() -> None:
    packaged = {path.name: path.read_bytes() for path in PACKAGE.glob("*.yaml")}
    deployed = {
        path.name: path.read_bytes() for path in DEPLOY.glob("*.yaml") if path.name != "kustomization.yaml"
    }
    assert packaged == deployed


@needs_repo
def test_generated_files_are_up_to_date() -> None:
    generator = load_generator()
    assert {path.name: path.read_text() for path in PACKAGE.glob("*.yaml")} == generator.render()


@needs_repo
def test_kustomization_lists_every_crd() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kustomization["resources"] == sorted(path.name for path in PACKAGE.glob("*.yaml"))


# --- example objects ------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda obj: obj["kind"])
def test_examples_use_only_declared_fields(example: dict[str, Any]) -> None:
    assert undeclared_fields(example, schema_of(example)) == []


def test_the_declared_field_check_catches_typos() -> None:
    typo = {**RAY_CLUSTER, "spec": {**RAY_CLUSTER_SPEC, "workerGroupSpec": []}}
    assert undeclared_fields(typo, schema_of(typo)) == [".spec.workerGroupSpec"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda obj: obj["kind"])
def test_examples_pass_the_api_server_validator(example: dict[str, Any]) -> None:
    assert schema_engine.validate(example, schema_of(example)) == []


def test_api_server_validator_rejects_bad_enum_and_negative_count() -> None:
    bad_queue = {**CLUSTER_QUEUE, "spec": {**CLUSTER_QUEUE["spec"], "queueingStrategy": "LIFO"}}
    assert schema_engine.validate(bad_queue, schema_of(bad_queue)) != []
    pod_sets = [{"name": "main", "count": -1, "template": POD_TEMPLATE}]
    bad_workload = {**WORKLOAD, "spec": {**WORKLOAD["spec"], "podSets": pod_sets}}
    assert schema_engine.validate(bad_workload, schema_of(bad_workload)) != []


def test_admission_mode_is_an_enum_in_v1beta2_only() -> None:
    # Kueue: v1beta1 AdmissionMode has no Enum marker (an unknown mode means "off"); v1beta2 has one
    scope = {"admissionMode": "UsageBasedFairSharing"}  # the misspelling of Kueue's concept doc
    queue = {**CLUSTER_QUEUE, "spec": {**CLUSTER_QUEUE["spec"], "admissionScope": scope}}
    assert schema_engine.validate(queue, schema_of(queue)) != []
    old = to_v1beta1(queue)
    assert schema_engine.validate(old, schema_of(old)) == []
    without_mode = {**CLUSTER_QUEUE, "spec": {**CLUSTER_QUEUE["spec"], "admissionScope": {}}}
    for version in (without_mode, to_v1beta1(without_mode)):
        assert schema_engine.validate(version, schema_of(version)) != []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_api_server_accepts_the_schema_as_structural(name: str) -> None:
    plural, _, group = name.partition(".")
    for served in crd_for(group, plural)["spec"]["versions"]:
        assert schema_engine.check_structural(served["schema"]["openAPIV3Schema"]) == []


def test_api_server_applies_the_documented_defaults() -> None:
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c"},
        "spec": {"headGroupSpec": {"template": {}}, "workerGroupSpecs": [{"groupName": "g", "template": {}}]},
    }
    schema_engine.apply_defaults(cluster, schema_of(cluster))
    worker = cluster["spec"]["workerGroupSpecs"][0]  # type: ignore[index]
    assert (worker["numOfHosts"], worker["replicas"], worker["minReplicas"]) == (1, 0, 0)
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {},
    }
    schema_engine.apply_defaults(queue, schema_of(queue))
    spec = queue["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"  # type: ignore[index]
    # Kueue's defaults (clusterqueue_test.go "All defaults"): borrowWithinCohort defaults to {}.
    assert spec["preemption"] == {  # type: ignore[index]
        "withinClusterQueue": "Never",
        "reclaimWithinCohort": "Never",
        "borrowWithinCohort": {"policy": "Never"},
    }
    assert spec["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}  # type: ignore[index]
