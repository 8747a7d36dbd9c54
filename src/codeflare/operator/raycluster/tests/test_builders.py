"""Children builders of the RayCluster controller (pure)."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509

from codeflare.api.mtls import ca_from_secret, client_certificate
from codeflare.operator.raycluster import ingress, mtls, networkpolicy, oauth

RC: dict[str, Any] = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "rc", "namespace": "ns", "uid": "u1"},
}


def test_ingress_host_and_route_targets() -> None:
    assert (
        ingress.dashboard_ingress(RC, "apps.example.com")["spec"]["rules"][0]["host"]
        == "rc-ns.apps.example.com"
    )
    assert ingress.dashboard_route(RC, oauth=False)["spec"]["to"]["name"] == "rc-head-svc"
    assert ingress.dashboard_route(RC, oauth=True)["spec"]["port"] == {"targetPort": "oauth-proxy"}


def test_head_policy_opens_the_oauth_port_only_with_oauth() -> None:
    def public(policy: dict[str, Any]) -> list[int]:
        return [p["port"] for p in policy["spec"]["ingress"][1]["ports"]]

    assert public(networkpolicy.head_policy(RC)) == [8265, 10001]
    assert public(networkpolicy.head_policy(RC, oauth=True)) == [8265, 10001, 8443]


def test_ca_secret_mints_client_certificates_chained_to_it() -> None:
    secret = mtls.ca_secret(RC)
    # where codeflare-sdk 0.40's generate_cert.get_secret_name finds it: this label, and a name
    # containing "<cluster>-ca-secret-" (src/codeflare_sdk/common/utils/generate_cert.py)
    assert secret["metadata"]["name"] == "rc-ca-secret-mtls"
    assert secret["metadata"]["labels"]["ray.openshift.ai/cluster-name"] == "rc"
    ca_pem, _ = ca_from_secret(secret)
    material = client_certificate(secret)
    ca = x509.load_pem_x509_certificate(ca_pem)
    leaf = x509.load_pem_x509_certificate(material.cert_pem)
    leaf.verify_directly_issued_by(ca)
    # Ray presents one certificate as server and as client (RAY_TLS_SERVER_CERT), so both usages
    usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {u._name for u in usages} == {"serverAuth", "clientAuth"}
    assert material.ca_pem == ca_pem
    assert base64.b64decode(secret["data"]["ca.key"]).startswith(b"-----BEGIN PRIVATE KEY")


def test_cluster_role_binding_is_cluster_scoped_and_unowned() -> None:
    binding = oauth.cluster_role_binding(RC)
    assert "namespace" not in binding["metadata"] and "ownerReferences" not in binding["metadata"]
    assert binding["roleRef"]["name"] == "system:auth-delegator"
