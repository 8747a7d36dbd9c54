"""kubectl's generator commands against a real server process.

``kubectl create configmap|secret|namespace|serviceaccount|role|rolebinding|clusterrole|
clusterrolebinding|quota|priorityclass|service|deployment|job`` build typed objects and post them as
``application/vnd.kubernetes.protobuf``; each object is read back with ``kubectl get -o json`` and
checked field by field. Kinds the server cannot decode from protobuf (Ingress) still get a 415.
Skipped when no kubectl binary is installed.
"""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.apiserver import ServerProcess
from tests.support.kubectl import NEEDS_KUBECTL, Kubectl

NS = "generators"
RBAC = "rbac.authorization.k8s.io"

pytestmark = NEEDS_KUBECTL


@pytest.fixture(scope="module")
def kubectl(apiserver: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    k = Kubectl(apiserver, tmp_path_factory.mktemp("kubectl-generators"))
    assert k.run("create", "namespace", NS).stdout.strip() == f"namespace/{NS} created"
    return k


def b64(data: str) -> str:
    return base64.b64decode(data).decode()


def test_create_namespace(kubectl: Kubectl) -> None:
    ns = kubectl.get("namespace", NS)
    assert (ns["apiVersion"], ns["kind"], ns["metadata"]["name"]) == ("v1", "Namespace", NS)
    assert "namespace" not in ns["metadata"]
    assert ns["metadata"]["uid"] and ns["metadata"]["creationTimestamp"]


def test_create_configmap_from_literals_and_files(kubectl: Kubectl) -> None:
    text = kubectl.file("app.properties", b"color=blue\nsize=2\n")
    blob = kubectl.file("blob.bin", b"\x00\x01\xfe\xff")
    out = kubectl.run(
        "create",
        "configmap",
        "cm-gen",
        "-n",
        NS,
        "--from-literal=greeting=hello world",
        "--from-literal=eq=a=b",
        "--from-literal=empty=",
        f"--from-file={text}",
        f"--from-file=renamed.txt={text}",
        f"--from-file={blob}",
    )
    assert out.stdout.strip() == "configmap/cm-gen created"
    cm = kubectl.get("configmap", "cm-gen", "-n", NS)
    assert (cm["apiVersion"], cm["kind"]) == ("v1", "ConfigMap")
    assert (cm["metadata"]["name"], cm["metadata"]["namespace"]) == ("cm-gen", NS)
    assert cm["data"] == {
        "greeting": "hello world",
        "eq": "a=b",
        "empty": "",
        "app.properties": "color=blue\nsize=2\n",
        "renamed.txt": "color=blue\nsize=2\n",
    }
    assert cm["binaryData"] == {"blob.bin": base64.b64encode(b"\x00\x01\xfe\xff").decode()}
    assert "immutable" not in cm


def test_create_secret_generic_values_read_back_decoded(kubectl: Kubectl) -> None:
    key = kubectl.file("id_rsa", b"-----BEGIN KEY-----\nabc\n")
    kubectl.run(
        "create",
        "secret",
        "generic",
        "sec-gen",
        "-n",
        NS,
        "--from-literal=password=s3cr3t!",
        f"--from-file={key}",
    )
    secret = kubectl.get("secret", "sec-gen", "-n", NS)
    assert (secret["kind"], secret["metadata"]["name"], secret["metadata"]["namespace"]) == (
        "Secret",
        "sec-gen",
        NS,
    )
    assert {k: b64(v) for k, v in secret["data"].items()} == {
        "password": "s3cr3t!",
        "id_rsa": "-----BEGIN KEY-----\nabc\n",
    }
    assert secret.get("type", "Opaque") == "Opaque"
    jsonpath = kubectl.run("get", "secret", "sec-gen", "-n", NS, "-o", "jsonpath={.data.password}").stdout
    assert b64(jsonpath) == "s3cr3t!"

    kubectl.run(
        "create", "secret", "generic", "sec-typed", "-n", NS, "--type=example.com/token", "--from-literal=t=1"
    )
    assert kubectl.get("secret", "sec-typed", "-n", NS)["type"] == "example.com/token"


def test_create_secret_docker_registry(kubectl: Kubectl) -> None:
    kubectl.run(
        "create",
        "secret",
        "docker-registry",
        "pull",
        "-n",
        NS,
        "--docker-server=registry.example.com",
        "--docker-username=bob",
        "--docker-password=pw",
    )
    secret = kubectl.get("secret", "pull", "-n", NS)
    assert secret["type"] == "kubernetes.io/dockerconfigjson"
    config = json.loads(b64(secret["data"][".dockerconfigjson"]))
    assert config["auths"]["registry.example.com"]["username"] == "bob"
    assert config["auths"]["registry.example.com"]["password"] == "pw"


def test_create_serviceaccount(kubectl: Kubectl) -> None:
    assert (
        kubectl.run("create", "serviceaccount", "robot", "-n", NS).stdout.strip()
        == "serviceaccount/robot created"
    )
    sa = kubectl.get("serviceaccount", "robot", "-n", NS)
    assert (sa["apiVersion"], sa["kind"]) == ("v1", "ServiceAccount")
    assert (sa["metadata"]["name"], sa["metadata"]["namespace"]) == ("robot", NS)


def test_create_role_and_rolebinding_grant_what_they_say(kubectl: Kubectl) -> None:
    kubectl.run("create", "serviceaccount", "reader", "-n", NS)
    kubectl.run(
        "create",
        "role",
        "pod-reader",
        "-n",
        NS,
        "--verb=get,list,watch",
        "--resource=pods,deployments.apps",
        "--resource-name=only-this",
    )
    role = kubectl.get("role", "pod-reader", "-n", NS)
    assert (role["apiVersion"], role["kind"]) == (f"{RBAC}/v1", "Role")
    assert role["rules"] == [
        {
            "verbs": ["get", "list", "watch"],
            "apiGroups": [""],
            "resources": ["pods"],
            "resourceNames": ["only-this"],
        },
        {
            "verbs": ["get", "list", "watch"],
            "apiGroups": ["apps"],
            "resources": ["deployments"],
            "resourceNames": ["only-this"],
        },
    ]
    kubectl.run("create", "role", "cm-lister", "-n", NS, "--verb=list", "--resource=configmaps")
    kubectl.run(
        "create",
        "rolebinding",
        "readers",
        "-n",
        NS,
        "--role=cm-lister",
        "--user=alice",
        "--group=devs",
        f"--serviceaccount={NS}:reader",
    )
    binding = kubectl.get("rolebinding", "readers", "-n", NS)
    assert binding["roleRef"] == {"apiGroup": RBAC, "kind": "Role", "name": "cm-lister"}
    assert binding["subjects"] == [
        {"kind": "User", "apiGroup": RBAC, "name": "alice"},
        {"kind": "Group", "apiGroup": RBAC, "name": "devs"},
        {"kind": "ServiceAccount", "name": "reader", "namespace": NS},
    ]

    token = kubectl.run("create", "token", "reader", "-n", NS).stdout.strip()
    allowed = kubectl.run("--token", token, "auth", "can-i", "list", "configmaps", "-n", NS, check=False)
    assert allowed.stdout.strip() == "yes", allowed.stderr
    denied = kubectl.run("--token", token, "auth", "can-i", "delete", "configmaps", "-n", NS, check=False)
    assert denied.stdout.strip() == "no", denied.stderr


def test_create_clusterrole_and_clusterrolebinding(kubectl: Kubectl) -> None:
    kubectl.run("create", "clusterrole", "log-reader", "--verb=get", "--non-resource-url=/logs/*")
    kubectl.run("create", "clusterrole", "node-viewer", "--verb=get,list", "--resource=nodes")
    kubectl.run("create", "clusterrole", "aggregated", "--aggregation-rule=example.com/aggregate=true")
    logs = kubectl.get("clusterrole", "log-reader")
    assert (logs["apiVersion"], logs["kind"]) == (f"{RBAC}/v1", "ClusterRole")
    assert "namespace" not in logs["metadata"]
    assert logs["rules"] == [{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]
    assert kubectl.get("clusterrole", "node-viewer")["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["nodes"]}
    ]
    aggregated = kubectl.get("clusterrole", "aggregated")
    assert aggregated["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "true"}}]
    }

    kubectl.run(
        "create",
        "clusterrolebinding",
        "node-viewers",
        "--clusterrole=node-viewer",
        "--user=bob",
        f"--serviceaccount={NS}:robot",
    )
    binding = kubectl.get("clusterrolebinding", "node-viewers")
    assert binding["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": "node-viewer"}
    assert binding["subjects"] == [
        {"kind": "User", "apiGroup": RBAC, "name": "bob"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": NS},
    ]


def test_create_quota(kubectl: Kubectl) -> None:
    kubectl.run(
        "create", "quota", "compute", "-n", NS, "--hard=cpu=2,memory=1Gi,pods=10", "--scopes=NotBestEffort"
    )
    quota = kubectl.get("resourcequota", "compute", "-n", NS)
    assert (quota["apiVersion"], quota["kind"], quota["metadata"]["namespace"]) == ("v1", "ResourceQuota", NS)
    assert quota["spec"] == {"hard": {"cpu": "2", "memory": "1Gi", "pods": "10"}, "scopes": ["NotBestEffort"]}


def test_create_priorityclass(kubectl: Kubectl) -> None:
    kubectl.run(
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=important work",
        "--preemption-policy=Never",
    )
    high = kubectl.get("priorityclass", "high")
    assert (high["apiVersion"], high["kind"]) == ("scheduling.k8s.io/v1", "PriorityClass")
    assert (high["value"], high["description"], high["preemptionPolicy"]) == (1000, "important work", "Never")
    assert not high.get("globalDefault", False)

    kubectl.run("create", "priorityclass", "zero", "--value=0")
    zero = kubectl.get("priorityclass", "zero")
    assert (zero["value"], zero["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "description" not in zero


def test_create_service(kubectl: Kubectl) -> None:
    kubectl.run("create", "service", "clusterip", "web", "-n", NS, "--tcp=80:8080", "--tcp=443:https")
    web = kubectl.get("service", "web", "-n", NS)
    assert web["metadata"]["labels"] == {"app": "web"}
    assert web["spec"]["selector"] == {"app": "web"}
    assert web["spec"]["type"] == "ClusterIP"
    assert web["spec"]["ports"] == [
        {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080},
        {"name": "443-https", "protocol": "TCP", "port": 443, "targetPort": "https"},
    ]

    kubectl.run("create", "service", "nodeport", "np", "-n", NS, "--tcp=80:8080", "--node-port=30080")
    np = kubectl.get("service", "np", "-n", NS)
    assert np["spec"]["type"] == "NodePort"
    assert np["spec"]["ports"][0]["nodePort"] == 30080

    kubectl.run("create", "service", "externalname", "ext", "-n", NS, "--external-name=db.example.com")
    ext = kubectl.get("service", "ext", "-n", NS)
    assert (ext["spec"]["type"], ext["spec"]["externalName"]) == ("ExternalName", "db.example.com")


def test_create_deployment(kubectl: Kubectl) -> None:
    kubectl.run(
        "create",
        "deployment",
        "web",
        "-n",
        NS,
        "--image=nginx:1.27",
        "--replicas=3",
        "--port=80",
        "--",
        "nginx",
        "-g",
    )
    deploy = kubectl.get("deployment", "web", "-n", NS)
    assert (deploy["apiVersion"], deploy["kind"]) == ("apps/v1", "Deployment")
    assert deploy["metadata"]["labels"] == {"app": "web"}
    spec = deploy["spec"]
    assert spec["replicas"] == 3
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    [container] = spec["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nginx", "nginx:1.27")
    assert container["command"] == ["nginx", "-g"]
    assert [p["containerPort"] for p in container["ports"]] == [80]

    kubectl.run("create", "deployment", "idle", "-n", NS, "--image=busybox", "--image=nginx", "--replicas=0")
    idle = kubectl.get("deployment", "idle", "-n", NS)
    assert idle["spec"]["replicas"] == 0
    assert [(c["name"], c["image"]) for c in idle["spec"]["template"]["spec"]["containers"]] == [
        ("busybox", "busybox"),
        ("nginx", "nginx"),
    ]


def test_create_job(kubectl: Kubectl) -> None:
    kubectl.run("create", "job", "once", "-n", NS, "--image=busybox", "--", "echo", "hello world")
    job = kubectl.get("job", "once", "-n", NS)
    assert (job["apiVersion"], job["kind"], job["metadata"]["name"]) == ("batch/v1", "Job", "once")
    template = job["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "Never"
    [container] = template["containers"]
    assert (container["name"], container["image"]) == ("once", "busybox")
    assert container["command"] == ["echo", "hello world"]


def test_dry_run_server_returns_the_object_without_storing_it(kubectl: Kubectl) -> None:
    out = kubectl.run(
        "create", "configmap", "dry", "-n", NS, "--from-literal=a=b", "--dry-run=server", "-o", "json"
    )
    assert json.loads(out.stdout)["data"] == {"a": "b"}
    missing = kubectl.run("get", "configmap", "dry", "-n", NS, check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_duplicate_is_already_exists(kubectl: Kubectl) -> None:
    kubectl.run("create", "configmap", "twice", "-n", NS)
    again = kubectl.run("create", "configmap", "twice", "-n", NS, check=False)
    assert again.returncode != 0 and 'configmaps "twice" already exists' in again.stderr


def test_kinds_without_protobuf_support_are_still_415(kubectl: Kubectl) -> None:
    kubectl.run("create", "service", "clusterip", "ingress-backend", "-n", NS, "--tcp=80:80")
    ingress = kubectl.run(
        "create", "ingress", "site", "-n", NS, "--rule=example.com/=ingress-backend:80", check=False
    )
    assert ingress.returncode != 0
    assert "unknown format" in ingress.stderr and "application/json" in ingress.stderr
