"""kube-apiserver's rules for built-in kinds, with cases ported as data from its tests.

Each case names its source: kubernetes/kubernetes ``pkg/apis/rbac/validation/validation_test.go``
(RBAC) and ``pkg/apis/core/validation/validation_test.go`` (containers, pods, services); the
expected (error type, field) pairs are theirs. Where we deliberately differ it says so beside the
case. The HTTP behaviour is in tests/apiserver/test_builtin_validation.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.registry import builtin_validation
from codeflare.apiserver.registry.builtin_validation import rbac
from codeflare.k8s.schema.field import ErrorType

REQ, INV, NSUP, DUP = ErrorType.REQUIRED, ErrorType.INVALID, ErrorType.NOT_SUPPORTED, ErrorType.DUPLICATE
GROUP = "rbac.authorization.k8s.io"
ROLE_REF = {"apiGroup": GROUP, "kind": "Role", "name": "valid"}
CLUSTER_REF = {"apiGroup": GROUP, "kind": "ClusterRole", "name": "valid"}


def errors_of(
    key: str, obj: dict[str, Any], old: dict[str, Any] | None = None
) -> list[tuple[ErrorType, str]]:
    builtin_validation.default(key, obj)
    return [(e.type, e.field) for e in builtin_validation.validate(key, obj, old)]


# TestValidateRoleBinding / TestValidateClusterRoleBinding (the metadata cases are the
# ObjectMeta rules, tested in codeflare/k8s/schema/tests).
BINDING_CASES = [
    ("rolebindings", {"roleRef": {**ROLE_REF, "apiGroup": "rbac.GroupName"}}, [(NSUP, "roleRef.apiGroup")]),
    ("rolebindings", {"roleRef": {**ROLE_REF, "kind": "Type"}}, [(NSUP, "roleRef.kind")]),
    ("rolebindings", {"roleRef": {"apiGroup": GROUP, "kind": "Role"}}, [(REQ, "roleRef.name")]),
    ("rolebindings", {"roleRef": ROLE_REF, "subjects": [{"name": "subject"}]}, [(NSUP, "subjects[0].kind")]),
    (
        "rolebindings",
        {"roleRef": ROLE_REF, "subjects": [{"name": "subject:bad", "kind": "ServiceAccount"}]},
        [(INV, "subjects[0].name")],
    ),
    (
        "rolebindings",
        {"roleRef": ROLE_REF, "subjects": [{"kind": "ServiceAccount"}]},
        [(REQ, "subjects[0].name")],
    ),
    (
        "clusterrolebindings",
        {"roleRef": {**CLUSTER_REF, "apiGroup": "rbac.GroupName"}},
        [(NSUP, "roleRef.apiGroup")],
    ),
    ("clusterrolebindings", {"roleRef": {**CLUSTER_REF, "kind": "Type"}}, [(NSUP, "roleRef.kind")]),
    ("clusterrolebindings", {"roleRef": ROLE_REF}, [(NSUP, "roleRef.kind")]),  # "reference role"
    ("clusterrolebindings", {"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole"}}, [(REQ, "roleRef.name")]),
    (
        "clusterrolebindings",
        {"roleRef": CLUSTER_REF, "subjects": [{"name": "good", "kind": "ServiceAccount"}]},
        [(REQ, "subjects[0].namespace")],
    ),
    (
        "clusterrolebindings",
        {"roleRef": CLUSTER_REF, "subjects": [{"namespace": "foo", "kind": "ServiceAccount"}]},
        [(REQ, "subjects[0].name")],
    ),
    # ours: a binding whose roleRef is missing altogether (kube's Go decoder leaves it empty and
    # reports the three fields; we report the object once).
    ("rolebindings", {}, [(REQ, "roleRef")]),
]


@pytest.mark.parametrize(("plural", "obj", "expected"), BINDING_CASES)
def test_binding_rules(plural: str, obj: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of(f"{GROUP}/{plural}", obj) == expected


def test_valid_bindings_pass_and_subjects_get_their_group() -> None:
    # the success cases of TestValidateRoleBinding and TestValidateClusterRoleBinding
    subjects = [
        {"name": "validsaname", "kind": "ServiceAccount", "namespace": "foo"},
        {"name": "valid@username", "kind": "User"},
        {"name": "valid@groupname", "kind": "Group"},
    ]
    binding: dict[str, Any] = {"roleRef": dict(ROLE_REF), "subjects": [dict(s) for s in subjects]}
    assert errors_of(f"{GROUP}/rolebindings", binding) == []
    assert [s.get("apiGroup") for s in binding["subjects"]] == [None, GROUP, GROUP]
    cluster = {"roleRef": dict(CLUSTER_REF), "subjects": [dict(s) for s in subjects]}
    assert errors_of(f"{GROUP}/clusterrolebindings", cluster) == []


def test_role_ref_cannot_change() -> None:
    # TestValidateRoleBindingUpdate "changedRef"
    old = {"roleRef": ROLE_REF}
    new = {"roleRef": {**ROLE_REF, "name": "changed"}}
    assert errors_of(f"{GROUP}/rolebindings", new, old) == [(INV, "roleRef")]
    assert errors_of(f"{GROUP}/rolebindings", {"roleRef": dict(ROLE_REF)}, old) == []


# TestValidateRoleNonResourceURL, ...NamespacedNonResourceURL, ...NonResourceURLNoVerbs,
# ...MixedNonResourceAndResource, ...ValidResource, ...NoAPIGroup, ...NoResources
ROLE_CASES = [
    ("clusterroles", {"verbs": ["get"], "nonResourceURLs": ["/*"]}, []),
    ("roles", {"verbs": ["get"], "nonResourceURLs": ["/*"]}, [(INV, "rules[0].nonResourceURLs")]),
    ("clusterroles", {"verbs": [], "nonResourceURLs": ["/*"]}, [(REQ, "rules[0].verbs")]),
    (
        "roles",
        {"verbs": ["get"], "nonResourceURLs": ["/*"], "apiGroups": ["v1"], "resources": ["pods"]},
        [(INV, "rules[0].nonResourceURLs"), (INV, "rules[0].nonResourceURLs")],
    ),
    ("roles", {"verbs": ["get"], "apiGroups": ["v1"], "resources": ["pods"]}, []),
    ("roles", {"verbs": ["get"], "resources": ["pods"]}, [(REQ, "rules[0].apiGroups")]),
    ("roles", {"verbs": ["get"], "apiGroups": ["v1"]}, [(REQ, "rules[0].resources")]),
]


@pytest.mark.parametrize(("plural", "rule", "expected"), ROLE_CASES)
def test_policy_rules(plural: str, rule: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of(f"{GROUP}/{plural}", {"rules": [rule]}) == expected


def test_rule_messages_are_kube_apiserver_s() -> None:
    errs = builtin_validation.validate(f"{GROUP}/roles", {"rules": [{"resources": ["pods"]}]}, None)
    assert [e.message() for e in errs] == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
    ]


def _pod(**container: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "ctr", "image": "image", **container}]}}


# TestValidatePorts (container ports). Deliberately different: "protocol required" - kube
# defaults an empty protocol to TCP before validating; we store no default and accept it.
PORT_CASES = [
    ({"name": "a" * 16, "containerPort": 80, "protocol": "TCP"}, [(INV, "spec.containers[0].ports[0].name")]),
    ({"name": "a.b.c", "containerPort": 80, "protocol": "TCP"}, [(INV, "spec.containers[0].ports[0].name")]),
    ({"name": "80", "containerPort": 80, "protocol": "TCP"}, [(INV, "spec.containers[0].ports[0].name")]),
    ({"containerPort": 0, "protocol": "TCP"}, [(REQ, "spec.containers[0].ports[0].containerPort")]),
    ({"containerPort": 65536, "protocol": "TCP"}, [(INV, "spec.containers[0].ports[0].containerPort")]),
    (
        {"containerPort": 80, "hostPort": 65536, "protocol": "TCP"},
        [(INV, "spec.containers[0].ports[0].hostPort")],
    ),
    ({"containerPort": 80, "protocol": "tcp"}, [(NSUP, "spec.containers[0].ports[0].protocol")]),
    ({"containerPort": 80, "protocol": "xtcp"}, [(NSUP, "spec.containers[0].ports[0].protocol")]),
    ({"containerPort": 80}, []),
]


@pytest.mark.parametrize(("port", "expected"), PORT_CASES)
def test_container_ports(port: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of("core/pods", _pod(ports=[port])) == expected


def test_container_port_names_are_unique() -> None:
    # TestValidatePorts "name not unique"
    ports = [{"name": "abc", "containerPort": 80}, {"name": "abc", "containerPort": 81}]
    assert errors_of("core/pods", _pod(ports=ports)) == [(DUP, "spec.containers[0].ports[1].name")]


# TestValidatePodSpec / TestValidateContainers / TestValidateRestartPolicy
POD_CASES = [
    ({"spec": {"containers": []}}, [(REQ, "spec.containers")]),
    ({"spec": {}}, [(REQ, "spec.containers")]),
    ({"spec": {"containers": [{"image": "i"}]}}, [(REQ, "spec.containers[0].name")]),
    ({"spec": {"containers": [{"name": "A", "image": "i"}]}}, [(INV, "spec.containers[0].name")]),
    ({"spec": {"containers": [{"name": "c"}]}}, [(REQ, "spec.containers[0].image")]),
    (
        {
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "initContainers": [{"name": "c", "image": "i"}],
            }
        },
        [(DUP, "spec.containers[0].name")],
    ),
    (_pod(imagePullPolicy="Sometimes"), [(NSUP, "spec.containers[0].imagePullPolicy")]),
    ({"spec": {**_pod()["spec"], "restartPolicy": "Sometimes"}}, [(NSUP, "spec.restartPolicy")]),
    ({"spec": {**_pod()["spec"], "dnsPolicy": "Nope"}}, [(NSUP, "spec.dnsPolicy")]),
    (_pod(), []),
]


@pytest.mark.parametrize(("pod", "expected"), POD_CASES)
def test_pod_specs(pod: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of("core/pods", pod) == expected


def test_restart_policy_message() -> None:
    pod = {"spec": {**_pod()["spec"], "restartPolicy": "Sometimes"}}
    (err,) = builtin_validation.validate("core/pods", pod, None)
    assert err.message() == (
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
    )


# apps/batch ValidateDeploymentSpec, ValidateStatefulSetSpec, ValidateJobSpec: the template's
# restart policy; a template may leave the image to a controller.
TEMPLATE_CASES = [
    ("apps/deployments", "Never", [(NSUP, "spec.template.spec.restartPolicy")]),
    ("apps/statefulsets", "OnFailure", [(NSUP, "spec.template.spec.restartPolicy")]),
    ("batch/jobs", "Always", [(NSUP, "spec.template.spec.restartPolicy")]),
    ("batch/jobs", "Never", []),
    ("apps/deployments", "Always", []),
]


@pytest.mark.parametrize(("key", "policy", "expected"), TEMPLATE_CASES)
def test_workload_templates(key: str, policy: str, expected: list[tuple[ErrorType, str]]) -> None:
    spec = {"containers": [{"name": "c"}], "restartPolicy": policy}
    assert errors_of(key, {"spec": {"template": {"spec": spec}}}) == expected


# TestValidateServiceCreate: "missing ports", "empty port[1] name", "invalid port name",
# "dup port name", "invalid port", "invalid protocol", "invalid targetport int/name", "invalid type"
SERVICE_CASES = [
    ({}, [(REQ, "spec.ports")]),
    ({"type": "ExternalName", "externalName": "x.example.com"}, []),
    ({"clusterIP": "None"}, []),
    ({"ports": [{"name": "p", "port": 80}, {"port": 81}]}, [(REQ, "spec.ports[1].name")]),
    ({"ports": [{"name": "INVALID", "port": 80}]}, [(INV, "spec.ports[0].name")]),
    ({"ports": [{"name": "p", "port": 80}, {"name": "p", "port": 81}]}, [(DUP, "spec.ports[1].name")]),
    ({"ports": [{"port": 65536}]}, [(INV, "spec.ports[0].port")]),
    ({"ports": [{"port": 0}]}, [(INV, "spec.ports[0].port")]),
    ({"ports": [{"port": 80, "protocol": "INVALID"}]}, [(NSUP, "spec.ports[0].protocol")]),
    ({"ports": [{"port": 80, "targetPort": 65536}]}, [(INV, "spec.ports[0].targetPort")]),
    ({"ports": [{"port": 80, "targetPort": "in--valid"}]}, [(INV, "spec.ports[0].targetPort")]),
    ({"type": "Nope", "ports": [{"port": 80}]}, [(NSUP, "spec.type")]),
    ({"ports": [{"name": "80-8080", "port": 80, "targetPort": "http"}]}, []),  # kubectl's generated names
]


@pytest.mark.parametrize(("spec", "expected"), SERVICE_CASES)
def test_services(spec: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of("core/services", {"spec": spec}) == expected


# TestValidateConfigMap "invalid key", "leading .. key", "duplicate key" (data and binaryData)
CONFIG_CASES = [
    ({"data": {"key.name": "v", "KEY_NAME": "v", "key-name": "v"}}, []),
    ({"data": {"a b": "v"}}, [(INV, "data[a b]")]),
    ({"data": {"..x": "v"}}, [(INV, "data[..x]")]),
    ({"data": {"k": "v"}, "binaryData": {"k": "dg=="}}, [(INV, "binaryData[k]")]),
]


@pytest.mark.parametrize(("cm", "expected"), CONFIG_CASES)
def test_config_map_keys(cm: dict[str, Any], expected: list[tuple[ErrorType, str]]) -> None:
    assert errors_of("core/configmaps", cm) == expected


def test_secret_keys() -> None:
    assert errors_of("core/secrets", {"data": {"bad/key": "dg=="}}) == [(INV, "data[bad/key]")]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = sorted(builtin_validation._RULES)
FIELDS = ("spec", "rules", "roleRef", "subjects", "data", "binaryData", "template", "containers", "ports")


@settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(KEYS), obj=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4), old=JSON)
def test_rules_never_crash_on_mistyped_values(key: str, obj: dict[str, Any], old: Any) -> None:
    # Whatever the types, the rules answer with errors (the schema reports the types), never raise.
    builtin_validation.default(key, obj)
    errs = builtin_validation.validate(key, obj, old if isinstance(old, dict) else None)
    assert all(e.field for e in errs)


def test_rbac_defaults_only_user_and_group_subjects() -> None:
    obj = {"subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s"}, "junk"]}
    rbac.default_subjects(obj)
    assert obj["subjects"] == [
        {"kind": "User", "name": "u", "apiGroup": GROUP},
        {"kind": "ServiceAccount", "name": "s"},
        "junk",
    ]


def test_events_api_creation_rules() -> None:
    # ValidateEventCreate (pkg/apis/core/validation/events.go) for events.k8s.io/v1
    assert errors_of("events.k8s.io/events", {"type": "Info"}) == [
        (REQ, "eventTime"),
        (REQ, "reportingController"),
        (REQ, "reportingInstance"),
        (REQ, "action"),
        (REQ, "reason"),
        (INV, "type"),
    ]
    full = {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "c",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "type": "Normal",
    }
    assert errors_of("events.k8s.io/events", full) == []
    assert errors_of("events.k8s.io/events", {}, old=full) == []  # updates are not checked
