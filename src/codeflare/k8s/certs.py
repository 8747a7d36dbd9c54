"""TLS material for the embedded API server: a CA of its own and a serving certificate.

Both are created at first start in the state directory and reused afterwards, so kubeconfigs
written earlier stay valid across restarts. Keys are written with mode 0600. Elliptic-curve keys
keep generation fast. The same CA helper signs webhook and client certificates elsewhere.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from codeflare.k8s.files import write_private, write_public


@dataclass(frozen=True)
class CertPair:
    cert_pem: bytes
    key_pem: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _certificate(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, days: int, *, ca: bool
) -> x509.CertificateBuilder:
    """A certificate of ``key`` for ``subject``, valid from five minutes ago (clock skew) for ``days``."""
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )


def new_ca(common_name: str, days: int = 3650) -> CertPair:
    """A self-signed certificate authority."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _certificate(name, name, key, days, ca=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue(
    ca: CertPair,
    common_name: str,
    hosts: list[str] | None = None,
    *,
    client: bool = False,
    peer: bool = False,
    organizations: list[str] | None = None,
    days: int = 825,
) -> CertPair:
    """A leaf certificate signed by ``ca``: serving (with SANs), client (with organizations as
    groups), or with ``peer`` both (mutual TLS where each side serves, as Ray's nodes and drivers do)."""
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    attrs += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations or []]
    builder = (
        _certificate(x509.Name(attrs), ca_cert.subject, key, days, ca=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                if peer
                else [ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]
            ),
            critical=False,
        )
    )
    if hosts:
        sans: list[x509.GeneralName] = []
        for host in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                sans.append(x509.DNSName(host))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return CertPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def load_or_create_serving(state_dir: Path, hosts: list[str]) -> tuple[Path, Path, Path]:
    """Paths of (ca.crt, server.crt, server.key); the serving cert is reissued when hosts change."""
    ca_crt, ca_key = state_dir / "ca.crt", state_dir / "ca.key"
    srv_crt, srv_key = state_dir / "server.crt", state_dir / "server.key"
    hosts_file = state_dir / "server.hosts"
    if ca_crt.exists() and ca_key.exists():
        ca = CertPair(ca_crt.read_bytes(), ca_key.read_bytes())
    else:
        ca = new_ca("codeflare-apiserver-ca")
        write_private(ca_key, ca.key_pem)
        write_public(ca_crt, ca.cert_pem)
    wanted = ",".join(sorted(set(hosts)))
    current = hosts_file.read_text() if hosts_file.exists() else ""
    if not (srv_crt.exists() and srv_key.exists()) or current != wanted:
        leaf = issue(ca, "codeflare-apiserver", sorted(set(hosts)))
        write_private(srv_key, leaf.key_pem)
        write_public(srv_crt, leaf.cert_pem)
        hosts_file.write_text(wanted)
    return ca_crt, srv_crt, srv_key
