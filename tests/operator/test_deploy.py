"""The kustomize base in deploy/: renders, every object is accepted by an API server, RBAC is exact.

``kubectl kustomize deploy`` output is applied with server-side dry-run against a real embedded
API server (the server validates each object; nothing is stored). Structural checks: the
Deployment probes ``/healthz`` and ``/readyz`` on the health port and exposes the metrics port
the default configuration binds; the shipped ConfigMap is ``OperatorConfig.default()``; and the
RBAC rules grant every (resource, verb) the operator's code uses - derived from the queueing
controller's informers and from the API calls in the operator's source - and nothing broader.
"""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.kube import kinds
from codeflare.kube.kinds import Kind
from codeflare.operator import configuration, events, leader
from codeflare.operator.appwrapper import controller as appwrapper_controller
from codeflare.operator.config import CONFIGMAP_NAME, OperatorConfig, config_map
from codeflare.operator.queueing import controller as queueing_controller
from codeflare.operator.queueing import jobs
from tests.support.apiserver import ServerProcess

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "codeflare-system"
KUBECTL = shutil.which("kubectl")
Obj = dict[str, Any]
Need = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)

# What each client method asks of RBAC: (verb, on the subresource when called with status=True).
CLIENT_VERBS: dict[str, tuple[tuple[str, bool], ...]] = {
    "get": (("get", False),),
    "find": (("get", False),),
    "list": (("list", False),),
    "list_with_version": (("list", False),),
    "watch": (("watch", False),),
    "create": (("create", False),),
    "replace": (("update", True),),
    "replace_status": (("update", True),),
    "update": (("get", False), ("update", True)),  # read the object, write it (or its status)
    "patch": (("patch", True),),
    "apply": (("patch", True),),
    "delete": (("delete", False),),
}
# Kinds the operator only touches in its own namespace: granted by a Role, not the ClusterRole.
OWN_NAMESPACE_ONLY = {kinds.CONFIGMAP, kinds.LEASE}

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture(scope="module")
def rendered() -> list[Obj]:
    assert KUBECTL is not None
    out = subprocess.run(
        [KUBECTL, "kustomize", str(REPO / "deploy")], capture_output=True, text=True, check=True
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def one(objs: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


# -- what the code needs ------------------------------------------------------------------------


def _resource(kind: Kind, status: bool) -> tuple[str, str]:
    return kind.group, kind.plural + ("/status" if status else "")


def _is_kube_call(func: ast.expr) -> str | None:
    """The client method name for ``kube.m(...)``, ``self.kube.m(...)``, ``self.ctx.kube.m(...)``."""
    if not isinstance(func, ast.Attribute) or func.attr not in CLIENT_VERBS:
        return None
    owner = func.value
    if (isinstance(owner, ast.Name) and owner.id == "kube") or (
        isinstance(owner, ast.Attribute) and owner.attr == "kube"
    ):
        return func.attr
    return None


def _kinds_of(arg: ast.expr, function: str, tree: ast.Module, variable_kinds: tuple[Kind, ...]) -> list[Kind]:
    """The Kinds a call's first argument can be: ``kinds.X``, or a parameter resolved at call sites."""
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "kinds":
        return [getattr(kinds, arg.attr)]
    sites = [
        call.args[0]
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == function
        and call.args
    ]
    named = [
        getattr(kinds, a.attr)
        for a in sites
        if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "kinds"
    ]
    variable = not sites or len(named) < len(sites)  # some caller passes a kind it got from elsewhere
    return named + (list(variable_kinds) if variable else [])


def needs_of_source(module: Any, variable_kinds: tuple[Kind, ...] = ()) -> set[Need]:
    """(group, resource, verb) for every client call in ``module``'s source."""
    tree = ast.parse(inspect.getsource(module))
    needs: set[Need] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for call in ast.walk(function):
            if not isinstance(call, ast.Call) or not call.args:
                continue
            method = _is_kube_call(call.func)
            if method is None:
                continue
            status = method == "replace_status" or any(
                kw.arg == "status" and isinstance(kw.value, ast.Constant) and kw.value.value is True
                for kw in call.keywords
            )
            for kind in _kinds_of(call.args[0], function.name, tree, variable_kinds):
                for verb, on_status in CLIENT_VERBS[method]:
                    group, resource = _resource(kind, status and on_status)
                    needs.add((group, resource, verb))
    return needs


def queueing_needs() -> set[Need]:
    """The queueing controller: list+watch on every informer kind, plus every write in its source."""
    ctx = type("Ctx", (), {"config": OperatorConfig.default(), "kube": None})()
    controller = queueing_controller.QueueingController(ctx)
    needs = {(k.group, k.plural, verb) for k in controller.informers for verb in ("list", "watch")}
    needs |= needs_of_source(queueing_controller, jobs.QUEUED_KINDS)
    assert "events.record" in inspect.getsource(queueing_controller)
    return needs


def operator_needs() -> set[Need]:
    return (
        queueing_needs()
        | needs_of_source(configuration)
        | needs_of_source(leader)
        | needs_of_source(events)
        | needs_of_source(appwrapper_controller, appwrapper_controller.WATCHED_CHILDREN)
        # kopf watches the AppWrappers and the labelled children it has handlers for
        | {
            (k.group, k.plural, v)
            for k in (kinds.APPWRAPPER, *appwrapper_controller.WATCHED_CHILDREN)
            for v in ("list", "watch")
        }
    )


def granted(rules: list[Obj]) -> set[Need]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule.get("verbs", [])
    }


# -- tests --------------------------------------------------------------------------------------


def test_every_rendered_object_passes_server_side_dry_run(
    rendered: list[Obj], fresh_apiserver: ServerProcess
) -> None:
    assert KUBECTL is not None
    env = {"KUBECONFIG": str(fresh_apiserver.kubeconfig), "PATH": "/usr/bin:/bin"}
    # the namespace must exist for the namespaced objects' dry-run; create it for real first
    namespace = yaml.safe_dump(one(rendered, "Namespace"))
    subprocess.run(
        [KUBECTL, "apply", "-f", "-"], input=namespace, text=True, env=env, check=True, capture_output=True
    )
    result = subprocess.run(
        [KUBECTL, "apply", "--dry-run=server", "--validate=strict", "-f", "-"],
        input=yaml.safe_dump_all(rendered),
        text=True,
        env=env,
        capture_output=True,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == len(rendered), result.stdout
    assert all("(server dry run)" in line for line in lines), result.stdout
    # dry run: nothing but the namespace was stored
    listed = subprocess.run(
        [KUBECTL, "get", "deployments,configmaps", "-n", NAMESPACE, "-o", "name"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "codeflare-operator" not in listed.stdout.replace("kube-root-ca.crt", "")


def test_shipped_config_map_is_the_default_configuration(rendered: list[Obj]) -> None:
    shipped = one(rendered, "ConfigMap", CONFIGMAP_NAME)
    expected = config_map(NAMESPACE, OperatorConfig.default())
    shipped["metadata"]["labels"].pop("app.kubernetes.io/part-of", None)
    expected["metadata"]["labels"].pop("app.kubernetes.io/part-of", None)
    assert shipped == expected
    assert OperatorConfig.from_config_map(shipped) == OperatorConfig.default()
    generated = subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "python"),
            str(REPO / "deploy" / "operator" / "generate.py"),
            "--check",
        ],
        capture_output=True,
        text=True,
    )
    assert generated.returncode == 0, generated.stderr


def test_deployment_probes_ports_and_security(rendered: list[Obj]) -> None:
    deployment = one(rendered, "Deployment", "codeflare-operator")
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    defaults = OperatorConfig.default()
    assert defaults.health.listen is not None and defaults.metrics.listen is not None
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"health": defaults.health.listen[1], "metrics": defaults.metrics.listen[1]}
    liveness, readiness = container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"]
    assert (liveness["path"], ports[liveness["port"]]) == (f"/{defaults.health.liveness_endpoint_name}", 8081)
    assert (readiness["path"], ports[readiness["port"]]) == (
        f"/{defaults.health.readiness_endpoint_name}",
        8081,
    )
    assert container["command"] == ["codeflare", "operator"]
    assert container["image"].startswith("quay.io/project-codeflare/codeflare-operator-py:")
    assert {"requests", "limits"} <= set(container["resources"])
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["serviceAccountName"] == one(rendered, "ServiceAccount")["metadata"]["name"]
    service = one(rendered, "Service", "codeflare-operator-metrics")
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    assert (
        service["spec"]["selector"].items()
        <= pod.get("labels", deployment["spec"]["template"]["metadata"]["labels"]).items()
    )


def test_rbac_grants_exactly_what_the_operator_uses(rendered: list[Obj]) -> None:
    cluster_role = one(rendered, "ClusterRole", "codeflare-operator")
    role = one(rendered, "Role", "codeflare-operator")
    assert role["metadata"]["namespace"] == NAMESPACE
    sa = one(rendered, "ServiceAccount")["metadata"]
    for binding_kind, bound in (("ClusterRoleBinding", cluster_role), ("RoleBinding", role)):
        binding = one(rendered, binding_kind)
        assert binding["roleRef"]["name"] == bound["metadata"]["name"]
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}
        ]

    cluster_grants, namespace_grants = granted(cluster_role["rules"]), granted(role["rules"])
    needs = operator_needs()
    own = {(k.group, k.plural) for k in OWN_NAMESPACE_ONLY}
    missing = sorted(
        n for n in needs if n not in cluster_grants and not ((n[0], n[1]) in own and n in namespace_grants)
    )
    assert missing == [], f"RBAC lacks: {missing}"
    # least privilege: no wildcards, no secrets, own-namespace kinds only through the Role, nothing unused
    assert not any("*" in n for grant in (cluster_grants, namespace_grants) for n in grant)
    assert not any(r == "secrets" for _, r, _ in cluster_grants | namespace_grants)
    assert not any((g, r) in own for g, r, _ in cluster_grants)
    kopf_discovery = {
        ("apiextensions.k8s.io", "customresourcedefinitions", v) for v in ("get", "list", "watch")
    }
    unused = sorted((cluster_grants | namespace_grants) - needs - kopf_discovery)
    assert unused == [], f"RBAC grants what no code uses: {unused}"
