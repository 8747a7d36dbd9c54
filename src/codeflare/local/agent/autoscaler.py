"""Ray's KubeRay autoscaler for a local RayCluster with ``enableInTreeAutoscaling: true``.

KubeRay runs Ray's autoscaler as the head's sidecar, with a ServiceAccount that may read the
RayCluster and its Pods and patch the RayCluster. Locally, :class:`AutoscalerSidecar` does the
same beside the head's process: it applies the cluster's ServiceAccount (named after the cluster,
as KubeRay names it), a Role allowing ``get``/``patch`` on that one RayCluster and ``list`` on
Pods, and their RoleBinding (all owned by the RayCluster, so they go with it), issues a token
through the TokenRequest API, and starts :mod:`autoscaler_launch` with the variables Ray reads
to find the API server. The autoscaler then changes ``replicas`` and ``workersToDelete``, and the
agent's ordinary scaling carries them out. Decisions here are pure (:func:`identity_objects`,
:func:`autoscaler_env`, :func:`head_template`); the class only applies, issues and starts.

Deliberate differences from KubeRay: Ray's autoscaler v2 always runs (v1 tells nodes apart by
IP, and every local node is 127.0.0.1; v2 by the cloud instance id the agent gives each node,
see ``cluster_runner``), whatever ``autoscalerOptions.version`` says; the Role is narrower
than KubeRay's (no watch, no other RayCluster). It never stops a process it did not start.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import logging
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from codeflare.k8s.files import write_private, write_public
from codeflare.k8s.ownerrefs import owner_reference
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.kinds import Kind
from codeflare.local.agent import processes
from codeflare.local.agent.cluster_runner import LocalRayCluster, NodeTemplate
from codeflare.local.agent.ray_node import NodeTLS

log = logging.getLogger(__name__)

ROLE = Kind("rbac.authorization.k8s.io", "v1", "Role", "roles")
ROLE_BINDING = Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings")
#: How long an autoscaler token lives; a new one is issued at every start of the autoscaler.
TOKEN_LIFETIME_SECONDS = 7 * 24 * 3600
#: A dead autoscaler is restarted, but not sooner than this after its last start.
RESTART_BACKOFF_S = 10.0


def wants_autoscaler(rc: Obj) -> bool:
    return bool((rc.get("spec") or {}).get("enableInTreeAutoscaling"))


def service_account_name(rc: Obj) -> str:
    """KubeRay's: the head template's serviceAccountName, else the cluster's name."""
    head = ((rc.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
    return str((head.get("spec") or {}).get("serviceAccountName") or rc["metadata"]["name"])


def role_name(rc: Obj) -> str:
    return f"{rc['metadata']['name']}-autoscaler"


def identity_objects(rc: Obj) -> list[tuple[Kind, Obj]]:
    """The ServiceAccount, Role and RoleBinding of the cluster's autoscaler, owned by the cluster."""
    meta = rc["metadata"]
    namespace, cluster = meta.get("namespace", "default"), meta["name"]
    owner = [owner_reference(rc, api_version=rc.get("apiVersion") or "ray.io/v1", kind="RayCluster")]

    def metadata(name: str) -> Obj:
        return {"name": name, "namespace": namespace, "ownerReferences": owner}

    account = service_account_name(rc)
    rules = [
        # what Ray's KubeRay node provider reads and writes (ray/autoscaler/_private/kuberay/
        # node_provider.py and v2's cloud_providers/kuberay/cloud_provider.py): its RayCluster...
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "resourceNames": [cluster],
         "verbs": ["get", "patch"]},
        # ...and the cluster's pods, listed by the ray.io/cluster label
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]
    return [
        (kinds.SERVICE_ACCOUNT,
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(account)}),
        (ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": metadata(role_name(rc)), "rules": rules}),
        (ROLE_BINDING, {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": metadata(role_name(rc)),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name(rc)},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }),
    ]


def head_template(rc: Obj, template: NodeTemplate) -> NodeTemplate:
    """The head as KubeRay starts it for an autoscaled cluster: no monitor of its own
    (``--no-monitor``: the sidecar is the autoscaler) and the v2 autoscaler switched on."""
    if not wants_autoscaler(rc):
        return template
    return dataclasses.replace(
        template,
        ray_start_params={**template.ray_start_params, "no-monitor": "true"},
        env={**template.env, "RAY_enable_autoscaler_v2": "1"},
    )


def scale_strategy_patch(rc: Obj) -> list[Obj]:
    """A JSON patch giving every worker group an empty ``scaleStrategy`` where it has none.

    Ray's provider scales down with a JSON-patch ``replace`` of
    ``/spec/workerGroupSpecs/<i>/scaleStrategy``, and a ``replace`` of a missing member fails
    (RFC 6902, 4.3): with no ``scaleStrategy`` in the group, every scale-down is refused (422).
    Guarded by the resourceVersion read, so nothing another writer changed is overwritten."""
    groups = (rc.get("spec") or {}).get("workerGroupSpecs") or []
    adds = [
        {"op": "add", "path": f"/spec/workerGroupSpecs/{i}/scaleStrategy", "value": {"workersToDelete": []}}
        for i, group in enumerate(groups)
        if not isinstance(group.get("scaleStrategy"), dict)
    ]
    if not adds:
        return []
    version = rc["metadata"].get("resourceVersion")
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": version}, *adds]


@dataclasses.dataclass(frozen=True)
class ApiServerAccess:
    """Where the autoscaler finds the API server and what it authenticates with (files)."""

    server: str  # https://host:port
    ca_file: str
    token_file: str


def autoscaler_env(
    base_env: Mapping[str, str],
    access: ApiServerAccess,
    *,
    metrics_port: int | None,
    auth_token: str | None,
    tls: NodeTLS | None,
) -> dict[str, str]:
    """The autoscaler process's environment: the variables Ray's KubeRay provider reads for the
    API server (a bare host: Ray adds the port, and the https scheme it insists on), the
    cluster's Ray token and TLS files, and a Prometheus port of its own (loopback)."""
    url = urllib.parse.urlsplit(access.server)
    if url.scheme != "https" or not url.hostname:
        raise ValueError(f"API server {access.server!r}: Ray's autoscaler needs an https URL")
    env = {k: v for k, v in base_env.items() if not k.startswith(("RAY_AUTH", "RAY_TLS", "RAY_USE_TLS"))}
    env.update(
        KUBERNETES_SERVICE_HOST=url.hostname,
        KUBERNETES_SERVICE_PORT_HTTPS=str(url.port or 443),
        RAY_KUBERAY_CA_CERT_PATH=access.ca_file,
        KUBERAY_CRD_VER="v1",
        RAY_USAGE_STATS_ENABLED="0",
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
        RAY_enable_autoscaler_v2="1",
    )
    if metrics_port is not None:
        env["AUTOSCALER_METRIC_PORT"] = str(metrics_port)
    if auth_token:
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=auth_token)
    if tls is not None:
        env.update(tls.env())
    return env


def autoscaler_argv(rc: Obj, gcs_address: str, token_file: str, python: str) -> list[str]:
    meta = rc["metadata"]
    return [
        python, "-m", "codeflare.local.agent.autoscaler_launch",
        f"--cluster={meta['name']}", f"--namespace={meta.get('namespace', 'default')}",
        f"--gcs-address={gcs_address}", f"--token-file={token_file}",
    ]


class AutoscalerSidecar:
    """Keeps Ray's autoscaler running beside the head of every autoscaled cluster."""

    def __init__(self, kube: AsyncKube, home: Path, base_env: Mapping[str, str], python: str) -> None:
        self.kube = kube
        self.home = home
        self.base_env = dict(base_env)
        self.python = python
        self._started: dict[str, float] = {}  # cluster uid -> monotonic time of the last start

    async def ensure(self, rc: Obj, runtime: LocalRayCluster) -> None:
        """Start the autoscaler when the cluster wants one and none runs; stop it when it does not."""
        uid = str(rc["metadata"].get("uid"))
        if not wants_autoscaler(rc) or runtime.head is None:
            if runtime.sidecar is not None:
                await asyncio.to_thread(runtime.stop_sidecar, 2.0)
            return
        if runtime.sidecar is not None and await asyncio.to_thread(processes.is_alive, runtime.sidecar):
            return
        if time.monotonic() - self._started.get(uid, -RESTART_BACKOFF_S) < RESTART_BACKOFF_S:
            return
        if runtime.sidecar is not None:
            log.warning("RayCluster %s: its autoscaler exited; restarting it", rc["metadata"]["name"])
            await asyncio.to_thread(runtime.stop_sidecar, 0.0)
        self._started[uid] = time.monotonic()
        access = await self._access(rc)
        head = runtime.head
        assert head is not None
        env = autoscaler_env(
            self.base_env,
            access,
            metrics_port=head.ports.autoscaler_metrics,
            auth_token=runtime.auth_token,
            tls=await asyncio.to_thread(runtime.client_tls, "autoscaler"),
        )
        argv = autoscaler_argv(rc, runtime.endpoints.gcs_address, access.token_file, self.python)
        runtime.sidecar = await asyncio.to_thread(
            processes.start_process,
            argv,
            env,
            runtime.log_dir / "autoscaler.log",
            extra={"cluster": runtime.name, "node": "autoscaler"},
        )
        name = rc["metadata"]["name"]
        log.info("RayCluster %s: started Ray's autoscaler (pid %d)", name, runtime.sidecar.pid)

    def forget(self, uid: str) -> None:
        self._started.pop(uid, None)

    async def _access(self, rc: Obj) -> ApiServerAccess:
        """Apply the identity objects, issue a token, and write it and the API server's CA."""
        from codeflare.kube.tokens import request_token

        meta = rc["metadata"]
        namespace = meta.get("namespace", "default")
        for kind, obj in identity_objects(rc):
            await self.kube.apply(kind, obj)
        patch = scale_strategy_patch(rc)
        if patch:  # a 409/422 (changed meanwhile) fails this start; the next reconcile retries
            await self.kube.patch(kinds.RAYCLUSTER, meta["name"], patch, namespace, patch_type="json")
        token = await asyncio.to_thread(
            request_token,
            self.kube.connection,
            namespace,
            service_account_name(rc),
            expiration_seconds=TOKEN_LIFETIME_SECONDS,
        )
        where = self.home / "autoscalers" / str(meta.get("uid"))
        cluster = self.kube.connection.config.cluster
        ca_file = where / "ca.crt"
        if cluster.certificate_auth_data:
            write_public(ca_file, base64.b64decode(cluster.certificate_auth_data))
        elif cluster.certificate_auth:
            write_public(ca_file, Path(cluster.certificate_auth).read_bytes())
        else:
            raise ValueError("the agent's kubeconfig names no CA: Ray's autoscaler verifies the API server")
        token_file = write_private(where / "token", token)
        return ApiServerAccess(str(cluster.server), str(ca_file), str(token_file))
