"""The operator's own identity: its ServiceAccount, deploy/'s RBAC, and a kubeconfig carrying its token.

Local mode runs the operator as ServiceAccount ``codeflare-system/codeflare-operator``, bound to the
ClusterRole and Role shipped in deploy/ (the packaged copy in :mod:`codeflare.operator.manifests`),
so it holds exactly the rights a cluster install gives it, never admin's. :func:`install_rbac`
server-side applies those objects with an admin client (idempotent); :func:`write_operator_kubeconfig`
asks the API server for a token of the ServiceAccount (TokenRequest) and writes a kubeconfig that
carries it. Nothing here starts or stops processes.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import yaml

from codeflare.k8s.files import write_private
from codeflare.k8s.types import Obj
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.kube.kinds import Kind
from codeflare.operator import manifests

RBAC_GROUP = "rbac.authorization.k8s.io"
_RBAC_KINDS = {
    "ClusterRole": Kind(RBAC_GROUP, "v1", "ClusterRole", "clusterroles", False),
    "ClusterRoleBinding": Kind(RBAC_GROUP, "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    "Role": Kind(RBAC_GROUP, "v1", "Role", "roles"),
    "RoleBinding": Kind(RBAC_GROUP, "v1", "RoleBinding", "rolebindings"),
}
# A year: local mode re-issues the token at every ``up`` that starts the operator.
TOKEN_LIFETIME_SECONDS = 365 * 24 * 3600


def kind_for(obj: Obj) -> Kind:
    """The Kind of an identity or RBAC manifest (or any kind :mod:`codeflare.kube.kinds` knows)."""
    kind = kinds.kind_of(obj) or _RBAC_KINDS.get(str(obj.get("kind", "")))
    if kind is None:
        raise ValueError(f"no known kind for {obj.get('apiVersion')}/{obj.get('kind')}")
    return kind


def install_rbac(kube: Kube, objects: list[Obj] | None = None) -> None:
    """Apply the operator's Namespace, ServiceAccount, roles and bindings (the packaged ones by default).

    ``kube`` must be allowed to grant them (admin): the API server refuses RBAC a writer does not hold.
    """
    for obj in objects if objects is not None else manifests.rbac_objects():
        kube.apply(kind_for(obj), obj)


def write_operator_kubeconfig(
    admin_kubeconfig: Path,
    target: Path,
    *,
    namespace: str = manifests.NAMESPACE,
    service_account: str = manifests.SERVICE_ACCOUNT,
    expiration_seconds: int = TOKEN_LIFETIME_SECONDS,
) -> Path:
    """Issue a token of ``namespace/service_account`` with the admin kubeconfig's credentials and
    write ``target`` (mode 0600): the same server and CA, the ServiceAccount's token."""
    from codeflare.apiserver.kubeconfig import render
    from codeflare.kube.tokens import issue_service_account_token

    doc = yaml.safe_load(admin_kubeconfig.read_text())
    context_name = doc.get("current-context")
    context = next(c["context"] for c in doc["contexts"] if c["name"] == context_name)
    cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in doc["users"] if u["name"] == context["user"])
    ca_pem: bytes | None = None
    if cluster.get("certificate-authority-data"):
        ca_pem = base64.b64decode(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        ca_pem = Path(cluster["certificate-authority"]).read_bytes()
    with tempfile.TemporaryDirectory(prefix="codeflare-ca-") as tmp:
        ca_file: Path | None = None
        if ca_pem is not None:
            ca_file = Path(tmp) / "ca.crt"
            ca_file.write_bytes(ca_pem)
        token = issue_service_account_token(
            cluster["server"],
            user["token"],
            namespace,
            service_account,
            ca_file=ca_file,
            expiration_seconds=expiration_seconds,
        )
    text = render(
        cluster["server"], token, ca_pem, namespace=namespace, user=f"{namespace}:{service_account}"
    )
    return write_private(target, text)
