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
import importlib
import inspect
import pkgutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from codeflare.kube import kinds
from codeflare.kube.informer import SharedInformers
from codeflare.kube.kinds import Kind
from codeflare.operator import forecast_api, manifests
from codeflare.operator.appwrapper import controller as appwrapper_controller
from codeflare.operator.config import CONFIGMAP_NAME, OperatorConfig, WebhookConfig, config_map
from codeflare.operator.metrics import OperatorMetrics
from codeflare.operator.queueing import controller as queueing_controller
from codeflare.operator.queueing import jobs
from codeflare.operator.queueing import jobsync as queueing_jobsync
from codeflare.operator.raycluster import controller as raycluster_controller
from codeflare.operator.raycluster import oauth
from codeflare.operator.scaleout import controller as scaleout_controller
from codeflare.operator.scaleout import groups as scaleout_groups
from codeflare.operator.visibility import controller as visibility_controller
from codeflare.operator.webhooks import server as webhook_server
from codeflare.operator.webhooks.clientconfig import listen_port
from tests.support.apiserver import ServerProcess
from tests.support.kubectl import KUBECTL, NEEDS_KUBECTL

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "codeflare-system"
Obj = dict[str, Any]
Need = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)
PROVIDER_KINDS = tuple(p.kind for p in scaleout_groups.PROVIDERS.values())
VariableKinds = tuple[Kind, ...] | dict[str, tuple[Kind, ...]]  # for every client method, or per method

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
    "apply": (("patch", True), ("create", False)),  # server-side apply creates what is missing
    "delete": (("delete", False),),
}
# The only access to Secrets: create the per-RayCluster CA Secret (mTLS) and the OAuth proxy's cookie
# Secret (raycluster controller, created once, never read back).
SECRET_GRANTS = {("", "secrets", "create")}
# Kinds the operator only touches in its own namespace: granted by a Role, not the ClusterRole.
OWN_NAMESPACE_ONLY = {kinds.CONFIGMAP, kinds.LEASE}

# What deploy/operator/config.yaml holds (deploy/operator/generate.py): the defaults, and the
# webhook section a pod needs.
DEPLOYED = OperatorConfig.default().model_copy(update={"webhook": WebhookConfig.in_cluster(NAMESPACE)})
SERVICE_CALLERS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService"}

pytestmark = NEEDS_KUBECTL


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


def _constant_kind(arg: ast.expr, module: Any) -> Kind | None:
    """``kinds.X``, or a module-level Kind constant such as ``CLUSTER_ROLE_BINDING``."""
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "kinds":
        return getattr(kinds, arg.attr)
    if isinstance(arg, ast.Name) and isinstance(getattr(module, arg.id, None), Kind):
        return getattr(module, arg.id)
    return None


def _kinds_of(arg: ast.expr, function: str, tree: ast.Module, module: Any) -> tuple[list[Kind], bool]:
    """The Kinds a call's first argument can be, and whether some are only known at run time:
    a constant, or a parameter resolved at the enclosing function's call sites."""
    constant = _constant_kind(arg, module)
    if constant is not None:
        return [constant], False
    sites = [
        call.args[0]
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == function
        and call.args
    ]
    named = [k for k in (_constant_kind(a, module) for a in sites) if k is not None]
    return named, not sites or len(named) < len(sites)  # some caller passes a kind it got elsewhere


def needs_of_source(module: Any, variable_kinds: VariableKinds = ()) -> set[Need]:
    """(group, resource, verb) for every client call in ``module``'s source.

    A call whose kind is only known at run time takes ``variable_kinds`` (for every method, or
    per client method); a module with such a call and nothing given fails the scan."""
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
            found, variable = _kinds_of(call.args[0], function.name, tree, module)
            if variable:
                extra = variable_kinds.get(method, ()) if isinstance(variable_kinds, dict) else variable_kinds
                assert extra, (
                    f"{module.__name__}.{function.name}: kube.{method} on a kind known only at run "
                    f"time (line {call.lineno}); name its kinds in operator_needs()"
                )
                found = [*found, *extra]
            for kind in found:
                for verb, on_status in CLIENT_VERBS[method]:
                    if status and verb == "create" and method == "apply":
                        continue  # applying a status never creates the object
                    group, resource = _resource(kind, status and on_status)
                    needs.add((group, resource, verb))
    return needs


def operator_modules() -> list[Any]:
    """Every module of the operator package except tests."""
    import codeflare.operator as package

    names = [
        info.name
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if ".tests" not in info.name
    ]
    return [importlib.import_module(name) for name in sorted(names)]


def list_watch(*watched: Kind) -> set[Need]:
    return {(k.group, k.plural, verb) for k in watched for verb in ("list", "watch")}


def raycluster_children_kinds() -> tuple[tuple[Kind, ...], tuple[Kind, ...]]:
    """(applied, created once) child kinds over every configuration: OpenShift or not, all features on."""
    kuberay = {"ingressDomain": "apps.example.com", "rayDashboardOAuthEnabled": True, "mTLSEnabled": True}
    config = OperatorConfig.from_dict({"kuberay": kuberay})
    ctx = type("Ctx", (), {"config": config, "kube": None})()
    children = raycluster_controller.RayClusterChildren(ctx)
    rc = {"kind": "RayCluster", "metadata": {"name": "c", "namespace": "n", "uid": "u"}}
    applied: set[Kind] = set()
    once: set[Kind] = set()
    for openshift in (False, True):
        a, o = children.desired(rc, openshift)
        applied |= {raycluster_controller._KIND_OF[c["kind"]] for c in a}
        once |= {raycluster_controller._KIND_OF[c["kind"]] for c in o}
    return tuple(applied), tuple(once)


def variable_kinds_by_module() -> dict[str, VariableKinds]:
    """Kinds that calls decide at run time, per module (each derived from the code, not listed)."""
    providers = scaleout_groups.PROVIDERS.values()
    applied, once = raycluster_children_kinds()
    configurations = (webhook_server.MUTATING, webhook_server.VALIDATING)
    return {
        queueing_jobsync.__name__: jobs.QUEUED_KINDS,
        appwrapper_controller.__name__: appwrapper_controller.WATCHED_CHILDREN,
        scaleout_controller.__name__: {
            "update": tuple(p.kind for p in providers),
            "patch": tuple(p.machine_kind for p in providers),
        },
        webhook_server.__name__: {"apply": configurations, "get": configurations},
        raycluster_controller.__name__: {"apply": applied, "create": once},
    }


def informer_needs() -> set[Need]:
    """The queueing, AppWrapper and RayCluster controllers: list+watch on every shared informer."""
    informers = SharedInformers(None)  # type: ignore[arg-type]  # nothing runs: only the kinds count
    shared = {"config": OperatorConfig.default(), "kube": None, "informers": informers, "clock": time.time}
    ctx = type("Ctx", (), {**shared, "metrics": OperatorMetrics()})()
    queueing_controller.QueueingController(ctx)
    appwrapper_controller.AppWrapperController(ctx)
    raycluster_controller.RayClusterController(ctx)
    assert "events.record" in inspect.getsource(queueing_jobsync)
    return list_watch(*informers.informers)


def operator_needs() -> set[Need]:
    """Every client call in every operator module, the shared informers, and the role bound."""
    variable = variable_kinds_by_module()
    needs = set().union(*(needs_of_source(m, variable.get(m.__name__, ())) for m in operator_modules()))
    return (
        needs
        | informer_needs()
        # scale-out informers: its own kinds plus every provider's node groups
        | list_watch(*scaleout_controller.WATCHED_KINDS, *PROVIDER_KINDS)
        # the OAuth proxy's ClusterRoleBinding binds a role the operator does not fully hold
        | {(raycluster_controller.CLUSTER_ROLE_BINDING.group, "clusterroles", "bind")}
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
    """The defaults, but for the webhook section: in a pod, reached through a Service."""
    shipped = one(rendered, "ConfigMap", CONFIGMAP_NAME)
    expected = config_map(NAMESPACE, DEPLOYED)
    shipped["metadata"]["labels"].pop("app.kubernetes.io/part-of", None)
    expected["metadata"]["labels"].pop("app.kubernetes.io/part-of", None)
    assert shipped == expected
    assert OperatorConfig.from_config_map(shipped) == DEPLOYED
    assert DEPLOYED.model_copy(update={"webhook": WebhookConfig()}) == OperatorConfig.default()
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
    assert ports == {
        "health": defaults.health.listen[1],
        "metrics": defaults.metrics.listen[1],
        **listened_by_operator(DEPLOYED),
    }
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


def listened_by_operator(config: OperatorConfig) -> dict[str, int]:
    """The in-pod ports of the operator's HTTPS servers, by the name its Service targets."""
    service = config.webhook.service
    assert service is not None
    return {
        "webhook": config.webhook.listen[1],
        "visibility": listen_port(config.webhook, "visibility"),
        "forecast": listen_port(config.webhook, "forecast"),
    }


def service_references(rendered: list[Obj]) -> list[tuple[str, Obj, int]]:
    """(what, service reference, in-pod port it must reach) for every Service that deploy/ makes
    the API server call: the CRDs' conversion, and what the operator registers from the shipped
    configuration (webhook configurations, APIServices), plus any of those shipped as objects."""
    webhook = DEPLOYED.webhook
    ports = listened_by_operator(DEPLOYED)
    found: list[tuple[str, Obj, int]] = []
    for crd in (o for o in rendered if o["kind"] == "CustomResourceDefinition"):
        hook = (crd["spec"].get("conversion") or {}).get("webhook")
        if hook is not None:
            found.append(
                (f"CRD {crd['metadata']['name']}", hook["clientConfig"]["service"], ports["webhook"])
            )
    mutating, validating = webhook_server.webhook_configurations("", "", "Ignore", webhook, NAMESPACE)
    local_service, forecast = forecast_api.registration(NAMESPACE, 0, b"", webhook)
    assert local_service is None  # deploy/ ships the Service; the operator applies none
    registered = [
        mutating,
        validating,
        *visibility_controller.api_services(NAMESPACE, b"", webhook),
        forecast,
    ]
    shipped = [o for o in rendered if o["kind"] in SERVICE_CALLERS]
    for obj in registered + shipped:
        what = f"{obj['kind']} {obj['metadata']['name']}"
        if obj["kind"] == "APIService":
            server = "forecast" if obj["spec"]["group"] == forecast_api.GROUP else "visibility"
            found.append((what, obj["spec"]["service"], ports[server]))
        else:
            found += [(what, h["clientConfig"]["service"], ports["webhook"]) for h in obj["webhooks"]]
    return found


def test_every_service_the_api_server_calls_is_shipped_and_reaches_the_operator(rendered: list[Obj]) -> None:
    deployment = one(rendered, "Deployment", "codeflare-operator")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    container_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    references = service_references(rendered)
    callers = {what for what, _, _ in references}
    # the 5 Kueue CRDs converted by webhook, both configurations, visibility v1beta1/v1beta2, forecast
    assert len(callers) == 5 + 2 + 3, sorted(callers)
    for what, reference, in_pod in references:
        service = one(rendered, "Service", reference["name"])
        assert service["metadata"]["namespace"] == reference["namespace"], what
        assert service["spec"]["selector"].items() <= pod_labels.items(), what
        # a Service port left out is 443 for webhooks, CRD conversion and APIServices alike
        [port] = [p for p in service["spec"]["ports"] if p["port"] == reference.get("port", 443)]
        target = port["targetPort"]
        assert (container_ports.get(target) if isinstance(target, str) else target) == in_pod, what
    # kube-apiserver comes from outside the pod: the servers listen on its interfaces
    assert DEPLOYED.webhook.listen[0] == "0.0.0.0"


def test_rbac_grants_exactly_what_the_operator_uses(rendered: list[Obj]) -> None:
    cluster_role = one(rendered, "ClusterRole", "codeflare-operator")
    role = one(rendered, "Role", "codeflare-operator")
    assert role["metadata"]["namespace"] == NAMESPACE
    sa = one(rendered, "ServiceAccount")["metadata"]
    for binding_kind, bound in (("ClusterRoleBinding", cluster_role), ("RoleBinding", role)):
        binding = one(rendered, binding_kind, bound["metadata"]["name"])
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
    # least privilege: no wildcards, own-namespace kinds only through the Role, nothing unused
    assert not any("*" in n for grant in (cluster_grants, namespace_grants) for n in grant)
    assert not any((g, r) in own for g, r, _ in cluster_grants)
    # Secrets: only what SECRET_GRANTS documents (create the per-cluster CA and OAuth cookie);
    # never get/list/watch, so the operator cannot read any Secret
    secret_grants = {n for n in cluster_grants | namespace_grants if n[1].startswith("secrets")}
    assert secret_grants == SECRET_GRANTS
    # bind: only on the role the OAuth proxy's ClusterRoleBinding refers to
    [bind] = [r for r in cluster_role["rules"] if "bind" in r["verbs"]]
    role_ref = oauth.cluster_role_binding({"metadata": {"name": "c", "namespace": "n"}})["roleRef"]
    assert (bind["verbs"], bind["resources"]) == (["bind"], ["clusterroles"])
    assert bind["resourceNames"] == [role_ref["name"]]
    unused = sorted((cluster_grants | namespace_grants) - needs)
    assert unused == [], f"RBAC grants what no code uses: {unused}"


def test_packaged_rbac_is_deploys(rendered: list[Obj]) -> None:
    """Local mode installs src/codeflare/operator/manifests/rbac.yaml: the same objects as deploy/."""
    packaged = manifests.rbac_objects()
    assert [o["kind"] for o in packaged] == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        # the visibility API's (deploy/visibility): front-proxy trust in kube-system, viewer roles
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRole",
    ]
    for obj in packaged:
        deployed = one(rendered, obj["kind"], obj["metadata"]["name"])
        deployed["metadata"]["labels"].pop("app.kubernetes.io/part-of", None)  # added by kustomize
        assert deployed == obj
    sa = one(packaged, "ServiceAccount")["metadata"]
    assert (sa["namespace"], sa["name"]) == (manifests.NAMESPACE, manifests.SERVICE_ACCOUNT)
