"""How the operator's HTTPS servers are named to the API server: by URL, or by Service."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path

import pytest
from cryptography import x509
from hypothesis import given
from hypothesis import strategies as st

from codeflare.operator import forecast_api
from codeflare.operator.config import ConfigError, OperatorConfig, WebhookConfig, WebhookService
from codeflare.operator.visibility.controller import api_services, serving_certificate
from codeflare.operator.webhooks.clientconfig import client_config, listen_port, service_hosts
from codeflare.operator.webhooks.server import ENDPOINTS, WebhookCertificates, webhook_configurations

LOCAL = WebhookConfig()
IN_CLUSTER = WebhookConfig.in_cluster("codeflare-system")
SERVICE = {"namespace": "codeflare-system", "name": "codeflare-operator-webhook"}


def test_by_url_the_url_is_named() -> None:
    assert client_config(LOCAL, "ns", "webhook", url="https://127.0.0.1:9443/x", path="/x") == {
        "url": "https://127.0.0.1:9443/x"
    }
    assert service_hosts(LOCAL, "ns") == [] and listen_port(LOCAL, "visibility") == 0


def test_by_service_each_server_has_its_port_and_only_webhooks_a_path() -> None:
    assert client_config(
        IN_CLUSTER, "other", "webhook", url="https://0.0.0.0:9443/convert", path="/convert"
    ) == {"service": {**SERVICE, "port": 443, "path": "/convert"}}
    assert client_config(IN_CLUSTER, "other", "visibility") == {"service": {**SERVICE, "port": 8443}}
    assert client_config(IN_CLUSTER, "other", "forecast") == {"service": {**SERVICE, "port": 8444}}
    assert (listen_port(IN_CLUSTER, "visibility"), listen_port(IN_CLUSTER, "forecast")) == (8443, 8444)


def test_an_empty_service_namespace_is_the_operators() -> None:
    settings = WebhookConfig(bind_address=":9443", service=WebhookService(name="hooks"))
    assert client_config(settings, "team-a", "visibility")["service"]["namespace"] == "team-a"
    assert service_hosts(settings, "team-a") == ["hooks.team-a.svc", "hooks.team-a.svc.cluster.local"]


def test_by_url_without_a_url_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match=r"webhook\.service"):
        client_config(LOCAL, "ns", "visibility")


@given(name=st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True),
       namespace=st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True),
       ports=st.lists(st.integers(1, 65535), min_size=3, max_size=3, unique=True))  # fmt: skip
def test_every_registration_names_the_same_service(name: str, namespace: str, ports: list[int]) -> None:
    bind = next(p for p in range(1, 6) if p not in ports[1:])
    service = WebhookService(name=name, namespace=namespace, port=ports[0], visibility_port=ports[1],
                             forecast_port=ports[2])  # fmt: skip
    settings = WebhookConfig(bind_address=f":{bind}", service=service)
    mutating, validating = webhook_configurations("https://unused", "Q0E=", "Fail", settings, "operator-ns")
    hooks = mutating["webhooks"] + validating["webhooks"]
    assert [h["clientConfig"] for h in hooks] == [
        {
            "service": {"namespace": namespace, "name": name, "port": ports[0], "path": e.path},
            "caBundle": "Q0E=",
        }
        for e in (*[e for e in ENDPOINTS if e.mutating], *[e for e in ENDPOINTS if not e.mutating])
    ]
    refs = [a["spec"]["service"] for a in api_services("operator-ns", b"CA", settings)]
    assert refs and all(r == {"namespace": namespace, "name": name, "port": ports[1]} for r in refs)
    local_service, forecast = forecast_api.registration("operator-ns", 0, b"CA", settings)
    assert local_service is None
    assert forecast["spec"]["service"] == {"namespace": namespace, "name": name, "port": ports[2]}


def test_by_url_the_aggregated_apis_keep_their_loopback_services() -> None:
    assert {a["spec"]["service"]["name"] for a in api_services("ns", b"CA")} == {
        "codeflare-operator-visibility"
    }
    local_service, forecast = forecast_api.registration("ns", 4321, b"CA", LOCAL)
    assert local_service is not None and local_service["spec"]["ports"][0]["targetPort"] == 4321
    assert forecast["spec"]["service"] == {
        "name": "codeflare-operator-forecast",
        "namespace": "ns",
        "port": 443,
    }


def test_the_serving_certificate_names_the_service(tmp_path: Path) -> None:
    hosts = service_hosts(IN_CLUSTER, "ignored")
    certs = WebhookCertificates(tmp_path, datetime.timedelta(hours=3), lambda: 0.0, hosts)
    certs.rotate()
    serving = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == {
        "localhost",
        "codeflare-operator-webhook.codeflare-system.svc",
        "codeflare-operator-webhook.codeflare-system.svc.cluster.local",
    }
    assert base64.b64decode(certs.ca_bundle_b64) == certs.ca_bundle


@pytest.mark.parametrize("settings", [LOCAL, IN_CLUSTER], ids=["url", "service"])
def test_the_aggregated_apis_certificates_name_the_service(settings: WebhookConfig) -> None:
    leaf, ca = serving_certificate(settings, "codeflare-system", "codeflare-operator-visibility")
    serving = x509.load_pem_x509_certificate(leaf.cert_pem)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    by_service = [
        "codeflare-operator-webhook.codeflare-system.svc",
        "codeflare-operator-webhook.codeflare-system.svc.cluster.local",
    ]
    assert sans.get_values_for_type(x509.DNSName) == [
        "localhost",
        "codeflare-operator-visibility.codeflare-system.svc",
        *(by_service if settings.service else []),
    ]
    assert serving.issuer == x509.load_pem_x509_certificate(ca).subject


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("webhook: {service: {name: hooks}}", "webhook.service: needs a fixed port in bindAddress"),
        ('webhook: {bindAddress: ":8443", service: {name: hooks}}', "webhook.service: bindAddress port 8443"),
        (
            'webhook: {bindAddress: ":9443", service: {name: Hooks}}',
            'webhook.service.name: invalid value "Hooks"',
        ),
        ('webhook: {bindAddress: ":9443", service: {name: h, namespace: A_b}}', "webhook.service.namespace"),
        ('webhook: {bindAddress: ":9443", service: {name: h, port: 70000}}', "webhook.service.port: must be"),
        (
            'webhook: {bindAddress: ":9443", service: {name: h, port: 8443}}',
            "webhook.service: port, visibilityPort",
        ),
        ('webhook: {bindAddress: ":9443", service: {port: 443}}', "webhook.service.name"),
    ],
)
def test_a_bad_service_names_the_field(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        OperatorConfig.from_yaml(text)
    assert expected in str(caught.value)


def test_the_in_cluster_settings_round_trip() -> None:
    config = OperatorConfig.default().model_copy(update={"webhook": IN_CLUSTER})
    assert OperatorConfig.from_yaml(config.to_yaml()) == config
    assert IN_CLUSTER.listen == ("0.0.0.0", 9443)
