"""Each admission rule with an accepted and a refused case; messages asserted."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.operator.webhooks import appwrapper, raycluster
from codeflare.operator.webhooks.admission import (
    AccessCheck,
    AdmissionRequest,
    AdmissionSettings,
    Verdict,
    json_patch,
    response_review,
)

PLAIN = AdmissionSettings(operator_version="1.2.3", mtls_enabled=False, oauth_enabled=False)


def request(
    obj: Obj, operation: str = "CREATE", old: Obj | None = None, user: str = "alice"
) -> AdmissionRequest:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "operation": operation,
            "namespace": "team",
            "name": obj["metadata"]["name"],
            "object": obj,
            "oldObject": old,
            "userInfo": {"username": user, "uid": "1234", "groups": ["devs", "system:authenticated"]},
        },
    }
    return AdmissionRequest.from_review(review)


def raycluster_obj(queue: str | None = "team-queue", workers: int = 1) -> Obj:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    container = {"name": "ray-head", "image": "rayproject/ray:2.9"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "team", "labels": labels},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": f"g{i}",
                    "replicas": 1,
                    "rayStartParams": {},
                    "template": {
                        "spec": {"containers": [{"name": "ray-worker", "image": "rayproject/ray:2.9"}]}
                    },
                }
                for i in range(workers)
            ],
        },
    }


def patched(review_request: AdmissionRequest, verdict: Verdict) -> Obj:
    """The object after applying the response's JSONPatch (a tiny RFC 6902 applier)."""
    answer = response_review(review_request, verdict)["response"]
    obj = copy.deepcopy(review_request.obj)
    if "patch" not in answer:
        return obj
    assert answer["patchType"] == "JSONPatch"
    for op in json.loads(base64.b64decode(answer["patch"])):
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: Any = int(last) if isinstance(node, list) else last
        if op["op"] == "remove":
            del node[key]
        else:
            node[key] = op["value"]
    return obj


# --- RayCluster mutation ------------------------------------------------------------------------


def test_queued_raycluster_is_created_suspended_with_the_version_annotation() -> None:
    req = request(raycluster_obj())
    out = patched(req, raycluster.mutate_raycluster(req, PLAIN))
    assert out["spec"]["suspend"] is True
    assert out["metadata"]["annotations"]["ray.openshift.ai/version"] == "1.2.3"


def test_unqueued_raycluster_and_children_of_queued_jobs_are_not_suspended() -> None:
    req = request(raycluster_obj(queue=None))
    assert "suspend" not in patched(req, raycluster.mutate_raycluster(req, PLAIN))["spec"]
    child = raycluster_obj()
    child["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "workload.codeflare.dev/v1beta2",
            "kind": "AppWrapper",
            "name": "aw",
            "uid": "x",
            "controller": True,
        }
    ]
    req = request(child)
    assert "suspend" not in patched(req, raycluster.mutate_raycluster(req, PLAIN))["spec"]


def test_update_never_suspends() -> None:
    rc = raycluster_obj()
    rc["spec"]["suspend"] = False
    req = request(rc, "UPDATE", old=rc)
    assert patched(req, raycluster.mutate_raycluster(req, PLAIN))["spec"]["suspend"] is False


def test_mtls_injects_init_container_volumes_and_ray_tls_env_in_every_pod_template() -> None:
    req = request(raycluster_obj(workers=2))
    out = patched(req, raycluster.mutate_raycluster(req, AdmissionSettings(mtls_enabled=True)))
    templates = [out["spec"]["headGroupSpec"]["template"]] + [
        g["template"] for g in out["spec"]["workerGroupSpecs"]
    ]
    for template in templates:
        pod = template["spec"]
        assert [c["name"] for c in pod["initContainers"]] == ["create-cert"]
        assert pod["initContainers"][0]["image"] == "rayproject/ray:2.9"
        assert {v["name"]: v for v in pod["volumes"]}["ca-vol"]["secret"]["secretName"] == "rc-ca-secret-mtls"
        env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
        assert env["RAY_USE_TLS"] == "1" and env["RAY_TLS_CA_CERT"].endswith("/ca.crt")
    assert "serviceAccountName" not in out["spec"]["headGroupSpec"]["template"]["spec"]


def test_mutation_is_idempotent() -> None:
    settings = AdmissionSettings(mtls_enabled=True, oauth_enabled=True)
    first = request(raycluster_obj())
    once = patched(first, raycluster.mutate_raycluster(first, settings))
    again = request(once, "UPDATE", old=once)
    assert (
        response_review(again, raycluster.mutate_raycluster(again, settings))["response"].get("patch") is None
    )


def test_oauth_injects_the_proxy_sidecar_volume_and_service_account_into_the_head_only() -> None:
    req = request(raycluster_obj())
    out = patched(
        req, raycluster.mutate_raycluster(req, AdmissionSettings(mtls_enabled=False, oauth_enabled=True))
    )
    head = out["spec"]["headGroupSpec"]["template"]["spec"]
    assert [c["name"] for c in head["containers"]] == ["ray-head", "oauth-proxy"]
    assert head["serviceAccountName"] == "rc-oauth-proxy"
    assert head["volumes"] == [{"name": "proxy-tls-secret", "secret": {"secretName": "rc-proxy-tls-secret"}}]
    worker = out["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert [c["name"] for c in worker["containers"]] == ["ray-worker"]


# --- RayCluster validation ----------------------------------------------------------------------


def test_enable_ingress_is_refused_and_false_is_accepted() -> None:
    rc = raycluster_obj()
    rc["spec"]["headGroupSpec"]["enableIngress"] = False
    assert raycluster.validate_raycluster(request(rc), PLAIN).allowed
    rc["spec"]["headGroupSpec"]["enableIngress"] = True
    verdict = raycluster.validate_raycluster(request(rc), PLAIN)
    assert not verdict.allowed
    assert verdict.message.startswith(
        "spec.headGroupSpec.enableIngress: must not be true; the CodeFlare operator"
    )
    status = response_review(request(rc), verdict)["response"]["status"]
    assert status["code"] == 403 and status["message"] == verdict.message


def injected_cluster() -> Obj:
    req = request(raycluster_obj())
    return patched(
        req, raycluster.mutate_raycluster(req, AdmissionSettings(mtls_enabled=True, oauth_enabled=True))
    )


def test_update_keeping_injected_items_is_accepted() -> None:
    old = injected_cluster()
    new = copy.deepcopy(old)
    new["spec"]["workerGroupSpecs"][0]["replicas"] = 3
    assert raycluster.validate_raycluster(request(new, "UPDATE", old=old), PLAIN).allowed


def test_changing_the_injected_sidecar_is_refused() -> None:
    old = injected_cluster()
    new = copy.deepcopy(old)
    new["spec"]["headGroupSpec"]["template"]["spec"]["containers"][1]["image"] = "evil:latest"
    verdict = raycluster.validate_raycluster(request(new, "UPDATE", old=old), PLAIN)
    assert verdict.message == (
        "spec.headGroupSpec.template.spec.containers[name=oauth-proxy]: injected by the CodeFlare operator; "
        "it cannot be changed or removed"
    )


def test_removing_injected_volumes_and_init_container_is_refused() -> None:
    old = injected_cluster()
    new = copy.deepcopy(old)
    worker = new["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    worker["volumes"] = [v for v in worker["volumes"] if v["name"] != "ca-vol"]
    del worker["initContainers"]
    verdict = raycluster.validate_raycluster(request(new, "UPDATE", old=old), PLAIN)
    assert not verdict.allowed
    assert (
        "spec.workerGroupSpecs[0].template.spec.initContainers[name=create-cert]: injected" in verdict.message
    )
    assert "spec.workerGroupSpecs[0].template.spec.volumes[name=ca-vol]: injected" in verdict.message


def test_changing_the_injected_service_account_is_refused() -> None:
    old = injected_cluster()
    new = copy.deepcopy(old)
    new["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "admin"
    verdict = raycluster.validate_raycluster(request(new, "UPDATE", old=old), PLAIN)
    assert verdict.message == (
        "spec.headGroupSpec.template.spec.serviceAccountName: 'rc-oauth-proxy' is set by the CodeFlare "
        "operator for the OAuth proxy; it cannot be changed"
    )


# --- RayJob -------------------------------------------------------------------------------------


def test_queued_rayjob_is_created_suspended_unqueued_is_not() -> None:
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "job", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"entrypoint": "x"},
    }
    req = request(job)
    assert patched(req, raycluster.mutate_rayjob(req, PLAIN))["spec"]["suspend"] is True
    job["metadata"]["labels"] = {}
    req = request(job)
    assert response_review(req, raycluster.mutate_rayjob(req, PLAIN))["response"].get("patch") is None


# --- AppWrapper mutation ------------------------------------------------------------------------


def pod(name: str = "p", namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}


def aw_obj(*templates: Obj, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "team", "labels": labels or {}},
        "spec": {"components": [{"template": t} for t in templates or (pod(),)]},
    }


def test_appwrapper_gets_default_queue_user_labels_and_is_suspended() -> None:
    req = request(aw_obj(), user="system:serviceaccount:team:runner")
    out = patched(req, appwrapper.mutate_appwrapper(req, AdmissionSettings(default_queue_name="default")))
    labels = out["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "default"
    assert labels["workload.codeflare.dev/user"] == "system_serviceaccount_team_runner"
    assert labels["workload.codeflare.dev/userid"] == "1234"
    assert out["spec"]["suspend"] is True


def test_explicit_queue_is_kept_and_no_queue_means_not_suspended() -> None:
    req = request(aw_obj(labels={"kueue.x-k8s.io/queue-name": "mine"}))
    out = patched(req, appwrapper.mutate_appwrapper(req, AdmissionSettings(default_queue_name="default")))
    assert out["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "mine"
    req = request(aw_obj())
    out = patched(req, appwrapper.mutate_appwrapper(req, PLAIN))
    assert "kueue.x-k8s.io/queue-name" not in out["metadata"]["labels"] and "suspend" not in out["spec"]


def test_label_values_are_sanitised_and_bounded() -> None:
    assert appwrapper.label_value("a" * 80 + "@x") == "a" * 63
    assert appwrapper.label_value("bob@example.com") == "bob_example.com"


# --- AppWrapper validation ----------------------------------------------------------------------


def test_valid_appwrapper_is_accepted() -> None:
    assert appwrapper.validate_appwrapper(request(aw_obj(pod("a"), pod("b", "team"))), PLAIN).allowed


def test_nested_appwrapper_is_refused() -> None:
    inner = aw_obj()
    inner["metadata"] = {"name": "inner"}
    outer = aw_obj(inner)
    outer["spec"]["components"][0]["podSets"] = [
        {"path": "template.spec.components[0].template", "replicas": 1}
    ]
    verdict = appwrapper.validate_appwrapper(request(outer), PLAIN)
    assert verdict.message == "spec.components[0].template: AppWrappers cannot be nested"


def test_component_in_another_namespace_is_refused() -> None:
    verdict = appwrapper.validate_appwrapper(request(aw_obj(pod("a", "other"))), PLAIN)
    assert verdict.message == (
        "spec.components[0].template.metadata.namespace: "
        "must be the AppWrapper's namespace 'team', got 'other'"
    )


def test_unresolvable_pod_set_path_is_refused_and_resolvable_one_accepted() -> None:
    aw = aw_obj(
        {
            "apiVersion": "example.com/v1",
            "kind": "Thing",
            "metadata": {"name": "t"},
            "spec": {"template": {"spec": {}}},
        }
    )
    aw["spec"]["components"][0]["podSets"] = [{"path": "template.spec.template", "replicas": 2}]
    assert appwrapper.validate_appwrapper(request(aw), PLAIN).allowed
    aw["spec"]["components"][0]["podSets"] = [{"path": "template.spec.missing", "replicas": 2}]
    verdict = appwrapper.validate_appwrapper(request(aw), PLAIN)
    assert (
        verdict.message
        == "spec.components[0].podSets[0].path: pod set path 'template.spec.missing': no field 'missing'"
    )


@pytest.mark.parametrize(("pods", "ok"), [(1, True), (8, True), (9, False)])
def test_one_to_eight_pod_sets(pods: int, ok: bool) -> None:
    verdict = appwrapper.validate_appwrapper(request(aw_obj(*(pod(f"p{i}") for i in range(pods)))), PLAIN)
    assert verdict.allowed is ok
    if not ok:
        assert verdict.message == "spec.components: must have between 1 and 8 pod sets in all, found 9"


def test_component_without_pod_sets_alone_is_refused() -> None:
    verdict = appwrapper.validate_appwrapper(
        request(aw_obj({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})), PLAIN
    )
    assert verdict.message == "spec.components: must have between 1 and 8 pod sets in all, found 0"


def test_no_components_is_refused() -> None:
    aw = aw_obj()
    aw["spec"]["components"] = []
    assert appwrapper.validate_appwrapper(request(aw), PLAIN).message == (
        "spec.components: must list at least one component"
    )


def test_templates_are_immutable_but_pod_set_infos_may_change() -> None:
    old = aw_obj(pod("a"))
    new = copy.deepcopy(old)
    new["spec"]["components"][0]["podSetInfos"] = [{"nodeSelector": {"zone": "a"}}]
    new["spec"]["suspend"] = False
    assert appwrapper.validate_appwrapper(request(new, "UPDATE", old=old), PLAIN).allowed
    new["spec"]["components"][0]["template"]["spec"]["containers"][0]["image"] = "other"
    verdict = appwrapper.validate_appwrapper(request(new, "UPDATE", old=old), PLAIN)
    assert verdict.message == "spec.components[0].template: cannot be changed after creation"
    new = aw_obj(pod("a"), pod("b"))
    verdict = appwrapper.validate_appwrapper(request(new, "UPDATE", old=old), PLAIN)
    assert verdict.message == "spec.components: cannot add or remove components after creation (1 -> 2)"


def test_access_checks_one_per_component_only_on_create_with_the_check_on() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "n"}}
    req = request(aw_obj(pod("a"), deployment, policy))
    assert appwrapper.wrapped_types(req, AdmissionSettings()) == [
        ("apps/v1", "Deployment"), ("networking.k8s.io/v1", "IngressClass"), ("v1", "Pod")]
    served = {("v1", "Pod"): kinds.POD, ("apps/v1", "Deployment"): kinds.DEPLOYMENT,
              ("networking.k8s.io/v1", "IngressClass"): Kind(
                  "networking.k8s.io", "v1", "IngressClass", "ingressclasses", False)}
    checks = appwrapper.access_checks(req, AdmissionSettings(), served)
    assert [(c.group, c.resource, c.name, c.namespace, c.verb) for c in checks] == [
        ("", "pods", "a", "team", "create"),
        ("apps", "deployments", "d", "team", "create"),
        ("networking.k8s.io", "ingressclasses", "n", "team", "create"),  # the plural discovery found
    ]
    off = AdmissionSettings(user_rbac_admission_check=False)
    assert appwrapper.wrapped_types(req, off) == [] and appwrapper.access_checks(req, off, served) == []
    update = request(aw_obj(), "UPDATE", old=aw_obj())
    assert appwrapper.access_checks(update, AdmissionSettings(), served) == []
    review = appwrapper.subject_access_review(req, checks[1])
    assert review["spec"]["user"] == "alice" and review["spec"]["groups"] == ["devs", "system:authenticated"]
    assert review["spec"]["resourceAttributes"]["resource"] == "deployments"


def test_a_kind_the_api_does_not_serve_gets_a_check_without_resource() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    req = request(aw_obj(widget))
    [check] = appwrapper.access_checks(req, AdmissionSettings(), {("example.com/v1", "Widget"): None})
    assert check.resource == "" and check.describe() == "create Widget.example.com in namespace team"


def test_refused_access_check_denies_with_the_user_and_the_resource() -> None:
    req = request(aw_obj(pod("a")))
    check = AccessCheck(0, "", "v1", "pods", "team", "a")
    verdict = appwrapper.validate_appwrapper(req, AdmissionSettings(), [(check, "no RBAC rule")])
    assert (
        verdict.message
        == "spec.components[0]: user 'alice' may not create pods in namespace team: no RBAC rule"
    )


# --- plumbing -----------------------------------------------------------------------------------


def test_json_patch_escapes_keys_and_replaces_resized_lists() -> None:
    before = {"metadata": {"labels": {"a/b": "1"}}, "l": [1, 2]}
    after = {"metadata": {"labels": {"a/b": "2", "c~d": "3"}}, "l": [1, 2, 3]}
    assert json_patch(before, after) == [
        {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
        {"op": "add", "path": "/metadata/labels/c~0d", "value": "3"},
        {"op": "replace", "path": "/l", "value": [1, 2, 3]},
    ]


def test_not_a_review_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="AdmissionReview"):
        AdmissionRequest.from_review({"kind": "Pod"})
