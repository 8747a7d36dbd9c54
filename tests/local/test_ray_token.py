"""A local cluster's Ray token: one per cluster, kept in a Secret only those who may read Secrets get.

Against a real API server with deploy/'s RBAC (no Ray needed): the agent's credentials unit creates
``<name>-ray-token`` owned by the RayCluster, returns the same token on every later call (a
restarted agent gives re-adopted nodes the same one), and a different one for another cluster.
The admin reads it; the operator's ServiceAccount, which may manage RayClusters but not read
Secrets, is refused (403), and the SDK's lookup then finds no token rather than failing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from codeflare.api.ray_auth import token_from_secret, token_secret_name
from codeflare.kube import config, errors, kinds
from codeflare.kube.client import AsyncKube, Kube
from codeflare.local.agent.credentials import ClusterCredentials
from codeflare.local.mode.operator_identity import install_rbac, write_operator_kubeconfig
from codeflare.sdk.client import Client
from codeflare.sdk.raylink import ray_token
from tests.support import local_agent as la
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, install_crds


def test_one_token_per_cluster_readable_only_with_secret_access(
    fresh_apiserver: ServerProcess, tmp_path: Path
) -> None:
    admin = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    install_crds(admin)
    ensure_namespace(admin, "default")
    install_rbac(admin)
    first = admin.create(kinds.RAYCLUSTER, la.raycluster("first", suspend=True))
    second = admin.create(kinds.RAYCLUSTER, la.raycluster("second", suspend=True))

    async def tokens() -> tuple[str, str, str]:
        async with AsyncKube(config.from_kubeconfig(fresh_apiserver.kubeconfig)) as kube:
            credentials = ClusterCredentials(kube)
            return (
                await credentials.token(first),
                await credentials.token(first),
                await credentials.token(second),
            )

    once, again, other = asyncio.run(tokens())
    assert once == again and len(once) == 64 and other != once

    secret = admin.get(kinds.SECRET, token_secret_name("first"), "default")
    assert token_from_secret(secret) == once
    assert [o["uid"] for o in secret["metadata"]["ownerReferences"]] == [first["metadata"]["uid"]]

    operator_kubeconfig = write_operator_kubeconfig(
        fresh_apiserver.kubeconfig, tmp_path / "operator.kubeconfig"
    )
    with Kube(config.from_kubeconfig(operator_kubeconfig)) as operator:
        assert operator.get(kinds.RAYCLUSTER, "first", "default")  # it may see the cluster...
        try:
            operator.get(kinds.SECRET, token_secret_name("first"), "default")
            raise AssertionError("the operator's ServiceAccount read the token Secret")
        except errors.Forbidden:
            pass  # ... but not its token
    with Client(config.from_kubeconfig(operator_kubeconfig)) as sdk_as_operator:
        assert ray_token(sdk_as_operator, first) is None
    with Client(config.from_kubeconfig(fresh_apiserver.kubeconfig)) as sdk_as_admin:
        assert ray_token(sdk_as_admin, first) == once
    admin.close()
