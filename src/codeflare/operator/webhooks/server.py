"""The webhook HTTPS endpoint: certificates, the aiohttp server, and its registration.

:class:`WebhookCertificates` makes a self-signed CA and a serving certificate for 127.0.0.1 (and
the names of ``webhook.service`` when set) and replaces both when two thirds of the validity have
passed; the CA bundle announced to the API server keeps the previous CA too, so calls signed
either way are trusted during the switch.
:class:`WebhookServer` answers AdmissionReviews on one path per rule (the rules are pure; the
SubjectAccessReviews of AppWrapper validation are made here). :func:`webhook_configurations`
builds the Mutating/ValidatingWebhookConfiguration ``codeflare-operator`` pointing at the server;
it also answers ConversionReviews on ``/convert`` for the Kueue CRDs we ship, and
:func:`register_conversions` points those CRDs' ``spec.conversion`` at it (only CRDs labelled part
of codeflare: a real Kueue's CRDs are left to Kueue).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import logging
import math
import ssl
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from codeflare.k8s import bulkjson
from codeflare.k8s.constants import MANAGED_BY_LABEL, OPERATOR_NAME
from codeflare.k8s.files import write_private, write_public
from codeflare.k8s.types import Obj
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.kube.discovery import Discovery
from codeflare.kube.kinds import Kind
from codeflare.operator.config import WebhookConfig
from codeflare.operator.webhooks import appwrapper, conversion, kueue, raycluster
from codeflare.operator.webhooks.admission import (
    AccessCheck,
    AdmissionRequest,
    AdmissionSettings,
    Rule,
    Verdict,
    denied,
    response_review,
)
from codeflare.operator.webhooks.clientconfig import client_config

log = logging.getLogger(__name__)

CONFIGURATION_NAME = "codeflare-operator"
CONVERSION_BODY_LIMIT = 512 * 1024 * 1024
PART_OF_LABEL, PART_OF = "app.kubernetes.io/part-of", "codeflare"  # what deploy/crds labels our CRDs with
FIELD_MANAGER = "codeflare-webhooks"
SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False
)
MUTATING = Kind(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingWebhookConfiguration",
    "mutatingwebhookconfigurations",
    False,
)
VALIDATING = Kind(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    False,
)


@dataclass(frozen=True)
class Endpoint:
    """One webhook: its path, rule, what it intercepts, and whether it mutates.

    ``resource`` may name several resources and subresources, comma-separated
    (``workloads,workloads/status``); ``scope`` is the rule's Namespaced or Cluster.
    """

    path: str
    rule: Rule
    webhook_name: str
    group: str
    version: str
    resource: str
    operations: tuple[str, ...]
    mutating: bool
    scope: str = "Namespaced"


def _kueue_endpoint(kind: str, resources: str, scope: str) -> Endpoint:
    """Kueue's validating webhook of ``kind``: its path and name as Kueue registers them."""
    return Endpoint(
        f"/validate-kueue-x-k8s-io-v1beta2-{kind}",
        kueue.validate_kueue_object,
        f"v{kind}.kb.io",
        "kueue.x-k8s.io",
        "v1beta2",
        resources,
        ("CREATE", "UPDATE"),
        False,
        scope,
    )


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "/mutate-ray-io-v1-raycluster",
        raycluster.mutate_raycluster,
        "mraycluster.ray.openshift.ai",
        "ray.io",
        "v1",
        "rayclusters",
        ("CREATE", "UPDATE"),
        True,
    ),
    Endpoint(
        "/validate-ray-io-v1-raycluster",
        raycluster.validate_raycluster,
        "vraycluster.ray.openshift.ai",
        "ray.io",
        "v1",
        "rayclusters",
        ("CREATE", "UPDATE"),
        False,
    ),
    Endpoint(
        "/mutate-ray-io-v1-rayjob",
        raycluster.mutate_rayjob,
        "mrayjob.ray.openshift.ai",
        "ray.io",
        "v1",
        "rayjobs",
        ("CREATE",),
        True,
    ),
    Endpoint(
        "/validate-ray-io-v1-rayjob",
        raycluster.validate_rayjob,
        "vrayjob.ray.openshift.ai",
        "ray.io",
        "v1",
        "rayjobs",
        ("CREATE", "UPDATE"),
        False,
    ),
    Endpoint(
        "/mutate-workload-codeflare-dev-v1beta2-appwrapper",
        appwrapper.mutate_appwrapper,
        "mappwrapper.workload.codeflare.dev",
        "workload.codeflare.dev",
        "v1beta2",
        "appwrappers",
        ("CREATE",),
        True,
    ),
    Endpoint(
        "/validate-workload-codeflare-dev-v1beta2-appwrapper",
        appwrapper.validate_appwrapper,
        "vappwrapper.workload.codeflare.dev",
        "workload.codeflare.dev",
        "v1beta2",
        "appwrappers",
        ("CREATE", "UPDATE"),
        False,
    ),
    # Kueue 0.19 pkg/webhooks/*_webhook.go kubebuilder:webhook markers (validating ones, v1beta2;
    # a v1beta1 write reaches them converted, matchPolicy Equivalent).
    _kueue_endpoint("clusterqueue", "clusterqueues", "Cluster"),
    _kueue_endpoint("resourceflavor", "resourceflavors", "Cluster"),
    _kueue_endpoint("cohort", "cohorts", "Cluster"),
    _kueue_endpoint("workload", "workloads,workloads/status", "Namespaced"),
)


class WebhookCertificates:
    """The CA and serving certificate of the webhook server, kept as files for the SSL context."""

    def __init__(
        self,
        directory: Path,
        validity: datetime.timedelta,
        clock: Callable[[], float],
        hosts: Sequence[str] = (),
    ) -> None:
        self.directory = directory
        self.hosts = ["127.0.0.1", "localhost", *hosts]  # hosts: the Service's names, if any
        self.validity = validity
        self.clock = clock
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca_bundle = b""
        self.issued_at = 0.0
        self._current_ca = b""

    def rotate(self) -> None:
        """New CA and serving certificate; the bundle keeps the previous CA for the switch-over."""
        from codeflare.k8s.certs import issue, new_ca

        days = max(1, math.ceil(self.validity / datetime.timedelta(days=1)))
        ca = new_ca("codeflare-operator-webhook-ca", days=days * 2)
        leaf = issue(ca, "codeflare-operator-webhook", self.hosts, days=days)
        self.directory.mkdir(parents=True, exist_ok=True)
        cert, key = self.directory / "tls.crt", self.directory / "tls.key"
        write_private(key, leaf.key_pem)
        write_public(cert, leaf.cert_pem)
        previous, self._current_ca = self._current_ca, ca.cert_pem
        self.ca_bundle = ca.cert_pem + previous
        write_public(self.directory / "ca.crt", self.ca_bundle)
        self.issued_at = self.clock()
        # New handshakes use the new certificate; the API server trusts it through the bundle.
        self.ssl_context.load_cert_chain(cert, key)

    @property
    def ca_bundle_b64(self) -> str:
        return base64.b64encode(self.ca_bundle).decode()

    def seconds_until_rotation(self) -> float:
        due = self.issued_at + self.validity.total_seconds() * 2 / 3
        return max(0.0, due - self.clock())


def webhook_configurations(
    base_url: str,
    ca_bundle_b64: str,
    failure_policy: str = "Ignore",
    settings: WebhookConfig | None = None,
    namespace: str = "",
) -> tuple[Obj, Obj]:
    """(mutating, validating) configurations naming the server at ``base_url``, or the Service of
    ``settings.service`` when set (in ``namespace`` unless it names its own).

    Every webhook is registered whichever controllers are enabled (their rules are the API's)."""
    settings = settings or WebhookConfig()

    def webhook(endpoint: Endpoint) -> Obj:
        reference = client_config(
            settings, namespace, "webhook", url=base_url + endpoint.path, path=endpoint.path
        )
        return {
            "name": endpoint.webhook_name,
            "clientConfig": {**reference, "caBundle": ca_bundle_b64},
            "rules": [
                {
                    "apiGroups": [endpoint.group],
                    "apiVersions": [endpoint.version],
                    "operations": list(endpoint.operations),
                    "resources": endpoint.resource.split(","),
                    "scope": endpoint.scope,
                }
            ],
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": failure_policy,
            "timeoutSeconds": 10,
        }

    meta = {"name": CONFIGURATION_NAME, "labels": {MANAGED_BY_LABEL: OPERATOR_NAME}}
    mutating = {
        "apiVersion": MUTATING.api_version,
        "kind": MUTATING.kind,
        "metadata": meta,
        "webhooks": [webhook(e) for e in ENDPOINTS if e.mutating],
    }
    validating = {
        "apiVersion": VALIDATING.api_version,
        "kind": VALIDATING.kind,
        "metadata": dict(meta),
        "webhooks": [webhook(e) for e in ENDPOINTS if not e.mutating],
    }
    return mutating, validating


async def register_configurations(
    kube: AsyncKube,
    base_url: str,
    ca_bundle_b64: str,
    failure_policy: str = "Ignore",
    settings: WebhookConfig | None = None,
    namespace: str = "",
) -> bool:
    """Apply both configurations; True when they read back carrying ``ca_bundle_b64``."""
    mutating, validating = webhook_configurations(
        base_url, ca_bundle_b64, failure_policy, settings, namespace
    )
    current = True
    for kind, body in ((MUTATING, mutating), (VALIDATING, validating)):
        await kube.apply(kind, body, field_manager=FIELD_MANAGER)
        stored = await kube.get(kind, CONFIGURATION_NAME)
        current = current and all(
            (w.get("clientConfig") or {}).get("caBundle") == ca_bundle_b64
            for w in stored.get("webhooks") or []
        )
    return current


async def register_conversions(
    kube: AsyncKube,
    base_url: str,
    ca_bundle_b64: str,
    settings: WebhookConfig | None = None,
    namespace: str = "",
) -> bool:
    """Point our Kueue CRDs' conversion at ``base_url``/convert (or at ``settings.service``'s
    /convert); True when each carries the bundle.

    A CRD not installed, or not ours (a real Kueue's), is left alone and counts as current."""
    path = conversion.CONVERT_PATH
    reference = client_config(
        settings or WebhookConfig(), namespace, "webhook", url=base_url + path, path=path
    )
    current = True
    for kind in conversion.CONVERTED_KINDS:
        name = conversion.crd_name(kind)
        crd = await kube.find(kinds.CRD, name)
        if crd is None or (crd["metadata"].get("labels") or {}).get(PART_OF_LABEL) != PART_OF:
            continue
        hook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        config = hook.get("clientConfig") or {}
        named = {key: value for key, value in config.items() if key != "caBundle"}
        if named == reference and config.get("caBundle") == ca_bundle_b64:
            continue
        stored = await kube.patch(kinds.CRD, name, conversion.conversion_patch(reference, ca_bundle_b64))
        hook = ((stored.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        current = current and (hook.get("clientConfig") or {}).get("caBundle") == ca_bundle_b64
    return current


class WebhookServer:
    """aiohttp HTTPS server answering AdmissionReviews with the rules of :data:`ENDPOINTS`."""

    def __init__(
        self,
        kube: AsyncKube,
        settings: AdmissionSettings,
        certificates: WebhookCertificates,
        discovery: Discovery | None = None,
    ) -> None:
        self.kube = kube
        self.discovery = discovery or Discovery(kube)
        self.settings = settings
        self.certificates = certificates
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: any free port); returns the port."""
        # A ConversionReview carries a whole list page (10,000 Workloads are ~8 MB), so the limit
        # is far above an AdmissionReview's few kB.
        app = web.Application(client_max_size=CONVERSION_BODY_LIMIT)
        for endpoint in ENDPOINTS:
            app.router.add_post(endpoint.path, self._handler(endpoint))
        app.router.add_post(conversion.CONVERT_PATH, self._convert)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=self.certificates.ssl_context)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1]) if sockets else port
        log.info("webhooks listening on https://%s:%d", host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _convert(self, request: web.Request) -> web.Response:
        # a review may carry a whole list page (10,000 objects): bulkjson both ways
        try:
            answer = conversion.conversion_response(bulkjson.loads(await request.read()))
        except ValueError as exc:  # orjson.JSONDecodeError and ReviewError are ValueErrors
            return web.json_response({"message": str(exc)}, status=400)
        result = answer["response"]["result"]
        if result["status"] != "Success":
            log.warning("conversion refused: %s", result.get("message"))
        return web.Response(body=bulkjson.dumps(answer), content_type="application/json")

    def _handler(self, endpoint: Endpoint) -> Callable[[web.Request], Any]:
        async def handle(request: web.Request) -> web.Response:
            try:
                review = await request.json()
                admission = AdmissionRequest.from_review(review)
            except (ValueError, json.JSONDecodeError) as exc:
                return web.json_response({"message": str(exc)}, status=400)
            verdict = await self.decide(endpoint, admission)
            log.log(
                logging.DEBUG if verdict.allowed else logging.INFO,
                "%s %s %s/%s: %s%s",
                endpoint.webhook_name,
                admission.operation,
                admission.namespace,
                admission.name,
                "allowed" if verdict.allowed else "denied",
                f" ({verdict.message})" * bool(verdict.message),
            )
            return web.json_response(response_review(admission, verdict))

        return handle

    async def decide(self, endpoint: Endpoint, admission: AdmissionRequest) -> Verdict:
        try:
            if endpoint.rule is appwrapper.validate_appwrapper:
                types = appwrapper.wrapped_types(admission, self.settings)
                served = {t: await self.discovery.kind_for(*t) for t in types}
                checks = appwrapper.access_checks(admission, self.settings, served)
                refusals = await self.refusals(admission, checks)
                return appwrapper.validate_appwrapper(admission, self.settings, refusals)
            return endpoint.rule(admission, self.settings)
        except Exception:
            log.exception(
                "webhook %s failed on %s/%s", endpoint.webhook_name, admission.namespace, admission.name
            )
            return denied(
                f"internal error in the CodeFlare webhook {endpoint.webhook_name}; see the operator log"
            )

    async def refusals(
        self, admission: AdmissionRequest, checks: list[AccessCheck]
    ) -> list[tuple[AccessCheck, str]]:
        """The checks the API's SubjectAccessReviews did not allow, with the reason given."""

        async def ask(check: AccessCheck) -> tuple[AccessCheck, str] | None:
            if not check.resource:
                api_version = f"{check.group}/{check.version}" if check.group else check.version
                return check, f"the API server does not serve {check.kind} in {api_version}"
            body = appwrapper.subject_access_review(admission, check)
            try:
                answer = await self.kube.create(SUBJECT_ACCESS_REVIEW, body)
            except errors.KubeError as exc:
                return check, f"the SubjectAccessReview could not be made ({exc})"
            status = answer.get("status") or {}
            if status.get("allowed") is True:
                return None
            return check, str(status.get("reason") or status.get("evaluationError") or "not allowed")

        answers = await asyncio.gather(*(ask(check) for check in checks))
        return [answer for answer in answers if answer is not None]


def certificate_directory(configured: str) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """The configured directory, or a private temporary one (returned so the caller can remove it)."""
    if configured:
        return Path(configured), None
    holder = tempfile.TemporaryDirectory(prefix="codeflare-webhook-")
    return Path(holder.name), holder
