"""Unit tests for the protobuf request decoder: bodies built with a tiny encoder, and real kubectl bytes.

Every decoded object must equal what a JSON client would send for the same Go object (omitempty
fields left out, pointers kept, bytes as base64); malformed bodies are 400, kinds or fields the
decoder does not know how to express are 415, and nothing else ever escapes.
"""

from __future__ import annotations

import base64
import random
from typing import Any

import pytest

from codeflare.apiserver import errors
from codeflare.apiserver.endpoints import protowire

# -- a minimal protobuf encoder -------------------------------------------------------------------


def varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int32/int64 negatives: ten-byte two's complement
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def f(number: int, value: int | bool | str | bytes) -> bytes:
    """One field: integers and booleans as varints, text and bytes (messages) length-delimited."""
    if isinstance(value, bool | int):
        return varint(number << 3) + varint(int(value))
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def msg(*fields: bytes) -> bytes:
    return b"".join(fields)


def entries(number: int, mapping: dict[str, Any]) -> bytes:
    """A protobuf map: one (key = 1, value = 2) entry message per item."""
    return msg(*(f(number, msg(f(1, k), f(2, v))) for k, v in mapping.items()))


def quantities(number: int, mapping: dict[str, str]) -> bytes:
    return entries(number, {k: msg(f(1, v)) for k, v in mapping.items()})


def envelope(api_version: str, kind: str, body: bytes, *extra: bytes) -> bytes:
    """``k8s\\0`` + runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""} as kubectl sends."""
    type_meta = msg(f(1, api_version), f(2, kind))
    return protowire.MAGIC + msg(f(1, type_meta), f(2, body), f(3, ""), f(4, ""), *extra)


def meta(name: str, *extra: bytes) -> bytes:
    """ObjectMeta as Go's marshaller writes it: every non-pointer scalar present, even when empty."""
    return msg(f(1, name), f(2, ""), f(3, ""), f(4, ""), f(5, ""), f(6, ""), f(7, 0), f(8, b""), *extra)


def decode(api_version: str, kind: str, body: bytes) -> dict[str, Any]:
    return protowire.decode_request(envelope(api_version, kind, body), kind, api_version)


def error_of(raw: bytes, kind: str, api_version: str | None = None) -> errors.ApiError:
    with pytest.raises(errors.ApiError) as info:
        protowire.decode_request(raw, kind, api_version)
    return info.value


# -- the kinds ------------------------------------------------------------------------------------


def test_configmap_maps_labels_annotations_and_binary_data() -> None:
    body = msg(
        f(1, meta("cm", entries(11, {"app": "x", "empty": ""}), entries(12, {"note": "a b"}))),
        entries(2, {"k": "v", "file.txt": "line1\nline2\n", "blank": ""}),
        entries(3, {"bin": b"\x00\xff\xfe"}),
        f(4, True),
    )
    assert decode("v1", "ConfigMap", body) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app": "x", "empty": ""}, "annotations": {"note": "a b"}},
        "data": {"k": "v", "file.txt": "line1\nline2\n", "blank": ""},
        "binaryData": {"bin": base64.b64encode(b"\x00\xff\xfe").decode()},
        "immutable": True,
    }


def test_pointer_booleans_keep_false_and_omitempty_scalars_are_left_out() -> None:
    cm = decode("v1", "ConfigMap", msg(f(1, meta("cm")), f(4, False)))
    assert cm == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "immutable": False}


def test_secret_data_is_base64_and_string_data_stays_text() -> None:
    body = msg(
        f(1, meta("s", f(3, "team"))),
        entries(2, {"pw": b"s3cr3t", "raw": b"\x80\x81"}),
        f(3, "kubernetes.io/basic-auth"),
        entries(4, {"user": "alice"}),
    )
    assert decode("v1", "Secret", body) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "team"},
        "data": {"pw": "czNjcjN0", "raw": "gIE="},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"user": "alice"},
    }


def test_an_empty_secret_type_is_left_out() -> None:
    assert "type" not in decode("v1", "Secret", msg(f(1, meta("s")), f(3, "")))


def test_namespace_and_service_account() -> None:
    ns = decode("v1", "Namespace", msg(f(1, meta("x1")), f(2, b""), f(3, msg(f(1, "")))))
    assert ns == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x1"}, "spec": {}}
    sa = decode(
        "v1",
        "ServiceAccount",
        msg(f(1, meta("sa")), f(2, msg(f(3, "tok"), f(1, "Secret"))), f(3, msg(f(1, "pull"))), f(4, False)),
    )
    assert sa == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "sa"},
        "secrets": [{"kind": "Secret", "name": "tok"}],
        "imagePullSecrets": [{"name": "pull"}],
        "automountServiceAccountToken": False,
    }


def test_roles_keep_the_empty_core_api_group() -> None:
    rule = msg(f(1, "get"), f(1, "list"), f(2, ""), f(2, "apps"), f(3, "pods"), f(4, "a"))
    role = decode("rbac.authorization.k8s.io/v1", "Role", msg(f(1, meta("r")), f(2, rule)))
    assert role["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": ["", "apps"], "resources": ["pods"], "resourceNames": ["a"]}
    ]
    selector = msg(entries(1, {"rbac.example.com/aggregate": "true"}))
    cluster = decode(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        msg(f(1, meta("cr")), f(2, msg(f(1, "get"), f(5, "/logs/*"))), f(3, msg(f(1, selector)))),
    )
    assert cluster["rules"] == [{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]
    assert cluster["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]
    }


@pytest.mark.parametrize("kind", ["RoleBinding", "ClusterRoleBinding"])
def test_bindings_have_subjects_and_a_role_ref(kind: str) -> None:
    group = "rbac.authorization.k8s.io"
    body = msg(
        f(1, meta("b")),
        f(2, msg(f(1, "User"), f(2, group), f(3, "alice"), f(4, ""))),
        f(2, msg(f(1, "ServiceAccount"), f(2, ""), f(3, "sa1"), f(4, "default"))),
        f(3, msg(f(1, group), f(2, "ClusterRole"), f(3, "view"))),
    )
    obj = decode(f"{group}/v1", kind, body)
    assert obj["subjects"] == [
        {"kind": "User", "apiGroup": group, "name": "alice"},
        {"kind": "ServiceAccount", "name": "sa1", "namespace": "default"},
    ]
    assert obj["roleRef"] == {"apiGroup": group, "kind": "ClusterRole", "name": "view"}


def test_resource_quota_quantities_and_scopes() -> None:
    requirement = msg(f(1, "PriorityClass"), f(2, "In"), f(3, "high"), f(3, "low"))
    spec = msg(quantities(1, {"cpu": "1", "memory": "1Gi"}), f(2, "BestEffort"), f(3, msg(f(1, requirement))))
    quota = decode("v1", "ResourceQuota", msg(f(1, meta("q")), f(2, spec), f(3, b"")))
    assert quota["spec"] == {
        "hard": {"cpu": "1", "memory": "1Gi"},
        "scopes": ["BestEffort"],
        "scopeSelector": {
            "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high", "low"]}]
        },
    }
    assert "status" not in quota


@pytest.mark.parametrize(("value", "expected"), [(1000, 1000), (0, 0), (-5, -5), (-(2**31), -(2**31))])
def test_priority_class_value_is_kept_even_when_zero_or_negative(value: int, expected: int) -> None:
    body = msg(f(1, meta("pc")), f(2, value), f(3, False), f(4, ""), f(5, "Never"))
    assert decode("scheduling.k8s.io/v1", "PriorityClass", body) == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "pc"},
        "value": expected,
        "preemptionPolicy": "Never",
    }


def test_service_ports_with_int_and_string_target_ports() -> None:
    port = msg(f(1, "80-8080"), f(2, "TCP"), f(3, 80), f(4, msg(f(1, 0), f(2, 8080), f(3, ""))), f(5, 30080))
    named = msg(f(1, "web"), f(2, "TCP"), f(3, 443), f(4, msg(f(1, 1), f(2, 0), f(3, "https"))), f(5, 0))
    spec = msg(f(1, port), f(1, named), entries(2, {"app": "web"}), f(3, "None"), f(4, "NodePort"))
    svc = decode("v1", "Service", msg(f(1, meta("svc")), f(2, spec), f(3, msg(f(1, b"")))))
    assert svc["spec"] == {
        "ports": [
            {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080, "nodePort": 30080},
            {"name": "web", "protocol": "TCP", "port": 443, "targetPort": "https"},
        ],
        "selector": {"app": "web"},
        "clusterIP": "None",
        "type": "NodePort",
    }


def container(*extra: bytes) -> bytes:
    limits = quantities(1, {"cpu": "500m", "memory": "128Mi"})
    requests = quantities(2, {"cpu": "250m"})
    port = msg(f(1, ""), f(2, 0), f(3, 80), f(4, "TCP"), f(5, ""))
    return msg(
        f(1, "app"),
        f(2, "nginx:1.27"),
        f(3, "sleep"),
        f(4, "10"),
        f(4, ""),
        f(5, ""),
        f(6, port),
        f(7, msg(f(1, "MODE"), f(2, "fast"))),
        f(8, msg(limits, requests)),
        f(13, ""),
        f(14, "IfNotPresent"),
        f(16, False),
        f(17, False),
        f(18, False),
        f(20, ""),
        *extra,
    )


CONTAINER = {
    "name": "app",
    "image": "nginx:1.27",
    "command": ["sleep"],
    "args": ["10", ""],
    "ports": [{"containerPort": 80, "protocol": "TCP"}],
    "env": [{"name": "MODE", "value": "fast"}],
    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m"}},
    "imagePullPolicy": "IfNotPresent",
}


def pod_template(restart: str, *extra: bytes) -> bytes:
    pod_spec = msg(f(2, container()), f(3, restart), f(6, ""), f(8, ""), f(11, False), *extra)
    return msg(f(1, meta("", entries(11, {"app": "d"}))), f(2, pod_spec))


def test_deployment_with_replicas_zero_selector_template_and_strategy() -> None:
    strategy = msg(f(1, "RollingUpdate"), f(2, msg(f(1, msg(f(1, 1), f(3, "25%"))), f(2, msg(f(2, 2))))))
    spec = msg(
        f(1, 0),
        f(2, msg(entries(1, {"app": "d"}))),
        f(3, pod_template("Always", f(4, 0))),
        f(4, strategy),
        f(5, 0),
        f(7, False),
    )
    deploy = decode("apps/v1", "Deployment", msg(f(1, meta("d", entries(11, {"app": "d"}))), f(2, spec)))
    assert deploy == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "d"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {
                    "containers": [CONTAINER],
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 0,
                },
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
        },
    }


def test_job_keeps_pointer_integers() -> None:
    spec = msg(f(1, 2), f(2, 4), f(7, 0), f(6, pod_template("Never")), f(10, False))
    job = decode("batch/v1", "Job", msg(f(1, meta("j")), f(2, spec), f(3, msg(f(4, 0)))))
    assert job["spec"] == {
        "parallelism": 2,
        "completions": 4,
        "backoffLimit": 0,
        "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [CONTAINER], "restartPolicy": "Never"},
        },
        "suspend": False,
    }
    assert "status" not in job


def test_reviews_and_token_requests_still_decode() -> None:
    attrs = msg(
        f(1, "team-a"), f(2, "create"), f(3, "ray.io"), f(4, ""), f(5, "rayclusters"), f(6, ""), f(7, "")
    )
    review = decode(
        "authorization.k8s.io/v1", "SelfSubjectAccessReview", msg(f(1, meta("")), f(2, msg(f(1, attrs))))
    )
    assert review["spec"] == {
        "resourceAttributes": {
            "namespace": "team-a",
            "verb": "create",
            "group": "ray.io",
            "resource": "rayclusters",
        }
    }
    token = protowire.decode_request(
        envelope("authentication.k8s.io/v1", "TokenRequest", msg(f(2, msg(f(1, "api"), f(4, 600))))),
        "TokenRequest",
    )
    assert token["spec"] == {"audiences": ["api"], "expirationSeconds": 600}


def test_unknown_fields_are_skipped_at_every_level() -> None:
    fixed64 = varint(90 << 3 | 1) + b"\x01" * 8
    fixed32 = varint(91 << 3 | 5) + b"\x02" * 4
    body = msg(
        f(1, meta("cm", f(99, "x"), f(17, msg(f(1, "kubectl"))))),
        f(77, 5),
        fixed64,
        fixed32,
        f(2, msg(f(1, "k"), f(2, "v"), f(9, 1))),
        f(88, msg(f(1, "nested"))),
    )
    raw = envelope("v1", "ConfigMap", body, f(55, "future envelope field"))
    assert protowire.decode_request(raw, "ConfigMap") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
        "data": {"k": "v"},
    }


def test_an_empty_unsupported_message_means_nothing() -> None:
    pod_spec = msg(f(2, msg(f(1, "c"), f(2, "i"), f(15, b""))), f(14, b""))
    job = decode("batch/v1", "Job", msg(f(1, meta("j")), f(2, msg(f(6, msg(f(2, pod_spec)))))))
    assert job["spec"]["template"]["spec"] == {"containers": [{"name": "c", "image": "i"}]}


def test_the_api_version_of_the_envelope_wins_and_defaults_to_the_known_one() -> None:
    raw = protowire.MAGIC + msg(f(1, msg(f(2, "ConfigMap"))), f(2, msg(f(1, meta("cm")))))
    assert protowire.decode_request(raw, "ConfigMap")["apiVersion"] == "v1"
    other = envelope("v2", "ConfigMap", msg(f(1, meta("cm"))))
    assert protowire.decode_request(other, "ConfigMap")["apiVersion"] == "v2"  # the store rejects it: 400


# -- real bytes from kubectl v1.32 ----------------------------------------------------------------

# kubectl create configmap c1 --from-literal=k=v --from-file=f.txt (f.txt: "file-content\nline2\n")
KUBECTL_CONFIGMAP = bytes.fromhex(
    "6b3873000a0f0a0276311209436f6e6669674d6170123a0a120a02633112001a0022002a00320038004200121c0a0566"
    "2e747874121366696c652d636f6e74656e740a6c696e65320a12060a016b1201761a002200"
)
# kubectl create deployment d1 --image=nginx
KUBECTL_DEPLOYMENT = bytes.fromhex(
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412a7010a1d0a02643112001a0022002a0032003800"
    "42005a090a036170701202643112780801120b0a090a03617070120264311a5f0a1b0a0012001a0022002a0032003800"
    "42005a090a0361707012026431124012220a056e67696e7812056e67696e782a0042006a007200800100880100900100"
    "a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c08001000180020"
    "00280038001a002200"
)


def test_real_kubectl_configmap_bytes() -> None:
    assert protowire.decode_request(KUBECTL_CONFIGMAP, "ConfigMap", "v1") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c1"},
        "data": {"f.txt": "file-content\nline2\n", "k": "v"},
    }


def test_real_kubectl_deployment_bytes() -> None:
    assert protowire.decode_request(KUBECTL_DEPLOYMENT, "Deployment", "apps/v1") == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d1", "labels": {"app": "d1"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d1"}},
            "template": {
                "metadata": {"labels": {"app": "d1"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
            },
            "strategy": {},
        },
    }


# -- what is refused ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "api_version"),
    [
        ("Ingress", "networking.k8s.io/v1"),
        ("Pod", "v1"),
        ("RayCluster", "ray.io/v1"),
        ("ConfigMap", "example.com/v1"),  # a custom resource sharing a built-in kind
        ("Deployment", "apps/v1beta2"),
    ],
)
def test_kinds_outside_the_table_are_415(kind: str, api_version: str) -> None:
    err = error_of(envelope(api_version, kind, msg(f(1, meta("x")))), kind, api_version)
    assert (err.code, err.reason) == (415, "UnsupportedMediaType")
    assert "application/json, application/yaml" in err.message


def test_fields_without_a_json_mapping_are_415_naming_the_field() -> None:
    volume = msg(f(1, "data"))
    spec = msg(f(3, msg(f(2, msg(f(1, "volumes-here"), f(1, volume))))))
    err = error_of(envelope("apps/v1", "Deployment", msg(f(1, meta("d")), f(2, spec))), "Deployment")
    assert err.code == 415
    assert "spec.template.spec.volumes" in err.message
    probe = msg(f(2, msg(f(2, msg(f(1, "c"), f(10, msg(f(4, 5))))))))
    err = error_of(envelope("batch/v1", "Job", msg(f(1, meta("j")), f(2, msg(f(6, probe))))), "Job")
    assert err.code == 415
    assert "spec.template.spec.containers[0].livenessProbe" in err.message


def test_a_compressed_envelope_is_415() -> None:
    raw = protowire.MAGIC + msg(f(1, msg(f(1, "v1"), f(2, "ConfigMap"))), f(2, b"\x1f\x8b"), f(3, "gzip"))
    assert error_of(raw, "ConfigMap").code == 415


def cm(body: bytes) -> bytes:
    return envelope("v1", "ConfigMap", body)


@pytest.mark.parametrize(
    ("kind", "raw", "fragment"),
    [
        ("ConfigMap", b"", "envelope"),
        ("ConfigMap", b'{"kind": "ConfigMap"}', "envelope"),
        ("ConfigMap", protowire.MAGIC, "kind"),
        ("ConfigMap", protowire.MAGIC + b"\x0a", "truncated"),
        ("ConfigMap", protowire.MAGIC + b"\x0a\x05ab", "truncated"),
        ("ConfigMap", protowire.MAGIC + b"\x08" + b"\xff" * 11, "overlong varint"),
        ("ConfigMap", protowire.MAGIC + b"\x0b", "wire type 3"),
        ("ConfigMap", protowire.MAGIC + b"\x00\x00", "field number 0"),
        ("ConfigMap", protowire.MAGIC + f(1, 7), "typeMeta: expected a length-delimited field"),
        ("ConfigMap", envelope("v1", "Secret", msg(f(1, meta("s")))), "(Secret) does not match ConfigMap"),
        ("ConfigMap", cm(f(1, meta("cm"))[:-1]), "truncated field"),
        ("ConfigMap", cm(msg(f(1, meta("cm")), f(4, "yes"))), "immutable: expected a varint"),
        ("ConfigMap", cm(msg(f(1, f(1, 5)))), "metadata.name: expected a length-delimited field"),
        (
            "ConfigMap",
            cm(f(1, meta("\udcff".encode("utf-8", "surrogatepass")))),
            "metadata.name: invalid UTF-8",
        ),
        ("ConfigMap", cm(f(2, msg(f(1, 3)))), "data: unexpected wire type 0"),
        ("ConfigMap", cm(f(2, msg(f(1, "k"), f(2, b"\xff")))), "data[k]: invalid UTF-8"),
        ("ResourceQuota", envelope("v1", "ResourceQuota", f(2, quantities(1, {"cpu": "1"})[:-1])), "spec:"),
        (
            "Service",
            envelope("v1", "Service", f(2, f(1, f(4, f(2, "80"))))),
            "spec.ports[0].targetPort: unexpected wire type 2",
        ),
    ],
)
def test_malformed_bodies_are_400(kind: str, raw: bytes, fragment: str) -> None:
    err = error_of(raw, kind)
    assert (err.code, err.reason) == (400, "BadRequest")
    assert fragment in err.message, err.message


@pytest.mark.parametrize("sample", [KUBECTL_CONFIGMAP, KUBECTL_DEPLOYMENT])
def test_truncated_and_mutated_kubectl_bodies_never_escape_as_anything_but_400_or_415(sample: bytes) -> None:
    kind = "ConfigMap" if sample is KUBECTL_CONFIGMAP else "Deployment"
    rng = random.Random(1234)
    candidates = [sample[:cut] for cut in range(len(sample))]
    for _ in range(400):
        mutated = bytearray(sample)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(4, len(mutated))] = rng.randrange(256)
        candidates.append(bytes(mutated))
    for raw in candidates:
        try:
            obj = protowire.decode_request(raw, kind)
        except errors.ApiError as exc:
            assert exc.code in (400, 415), (raw, exc)
        else:
            assert obj["kind"] == kind
