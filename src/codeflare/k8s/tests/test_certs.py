"""Certificates: a CA that signs, serving and client leaves with what TLS checks, reused on disk."""

from __future__ import annotations

import datetime
import ipaddress
import stat
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from codeflare.k8s.certs import issue, load_or_create_serving, new_ca


def load(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


def usages(cert: x509.Certificate) -> list[x509.ObjectIdentifier]:
    return list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def signed_by(leaf: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError):
        return False
    return True


def test_a_ca_is_self_signed_and_may_sign_certificates() -> None:
    ca = load(new_ca("test-ca").cert_pem)

    assert ca.subject == ca.issuer and signed_by(ca, ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign


def test_a_serving_certificate_names_its_hosts_and_is_valid_now() -> None:
    ca = new_ca("test-ca")
    leaf = load(issue(ca, "server", ["127.0.0.1", "api.example.com"], days=30).cert_pem)

    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert sans.get_values_for_type(x509.DNSName) == ["api.example.com"]
    assert usages(leaf) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert signed_by(leaf, load(ca.cert_pem))
    now = datetime.datetime.now(datetime.UTC)
    assert leaf.not_valid_before_utc < now < leaf.not_valid_after_utc
    assert leaf.not_valid_after_utc - now < datetime.timedelta(days=30, minutes=1)


def test_a_client_certificate_carries_its_groups_as_organizations() -> None:
    ca = new_ca("test-ca")
    leaf = load(issue(ca, "alice", client=True, organizations=["ml", "devs"]).cert_pem)

    organizations = [a.value for a in leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert organizations == ["ml", "devs"]
    assert usages(leaf) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert signed_by(leaf, load(ca.cert_pem))


def test_serving_material_is_reused_and_reissued_only_when_the_hosts_change(tmp_path: Path) -> None:
    ca_crt, srv_crt, srv_key = load_or_create_serving(tmp_path, ["127.0.0.1"])
    first_ca, first_leaf = ca_crt.read_bytes(), srv_crt.read_bytes()

    load_or_create_serving(tmp_path, ["127.0.0.1"])
    assert (ca_crt.read_bytes(), srv_crt.read_bytes()) == (first_ca, first_leaf)

    load_or_create_serving(tmp_path, ["127.0.0.1", "localhost"])
    assert ca_crt.read_bytes() == first_ca and srv_crt.read_bytes() != first_leaf
    assert signed_by(load(srv_crt.read_bytes()), load(first_ca))
    assert stat.S_IMODE(srv_key.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "ca.key").stat().st_mode) == 0o600
