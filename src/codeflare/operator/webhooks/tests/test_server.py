"""Webhook certificates and configurations, without a network."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path

from cryptography import x509

from codeflare.operator.webhooks.server import ENDPOINTS, WebhookCertificates, webhook_configurations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rotation_is_due_after_two_thirds_and_the_bundle_keeps_the_previous_ca(tmp_path: Path) -> None:
    clock = Clock()
    certs = WebhookCertificates(tmp_path, datetime.timedelta(hours=3), clock)
    certs.rotate()
    first = certs.ca_bundle
    assert certs.seconds_until_rotation() == 2 * 3600
    clock.now += 2 * 3600
    assert certs.seconds_until_rotation() == 0
    certs.rotate()
    assert certs.ca_bundle.endswith(first) and len(certs.ca_bundle) > len(first)
    serving = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    assert (tmp_path / "tls.key").stat().st_mode & 0o077 == 0
    # A third rotation drops the oldest CA: the bundle holds at most two.
    certs.rotate()
    assert first not in certs.ca_bundle


def test_configurations_name_every_endpoint_with_url_and_bundle() -> None:
    mutating, validating = webhook_configurations("https://127.0.0.1:9443", base64.b64encode(b"CA").decode())
    hooks = mutating["webhooks"] + validating["webhooks"]
    assert len(hooks) == len(ENDPOINTS)
    assert {h["clientConfig"]["url"] for h in hooks} == {"https://127.0.0.1:9443" + e.path for e in ENDPOINTS}
    assert all(h["clientConfig"]["caBundle"] == "Q0E=" and h["sideEffects"] == "None" for h in hooks)
    assert mutating["metadata"]["name"] == validating["metadata"]["name"] == "codeflare-operator"
