"""A small conversion webhook for the tests: ``spec.size`` (v1) <-> ``spec.dimension`` (v2).

It serves HTTPS on 127.0.0.1 with a certificate of its own CA (for 127.0.0.1 and
``conv-webhook.conv-system.svc``), counts reviews and objects, and misbehaves on request
(``mode``) the ways kube-apiserver must catch: a failed result, a wrong uid, a renamed object, a
changed uid, a wrong apiVersion, a missing object, not JSON. In mode ``metadata`` it also adds a
label and changes fields of metadata it may not change (generation), to check what survives.
"""

from __future__ import annotations

import base64
import ssl
from pathlib import Path
from typing import Any

from aiohttp import web

from codeflare.k8s import certs
from tests.support.tls_app import ThreadedTLSApp

GROUP = "conv.example.com"
SERVICE_NAME, SERVICE_NS = "conv-webhook", "conv-system"


def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """The field mapping between the versions: v1 ``size`` is v2 ``dimension``."""
    out = dict(obj, apiVersion=desired)
    spec = dict(obj.get("spec") or {})
    if desired.endswith("/v2") and "size" in spec:
        spec["dimension"] = spec.pop("size")
    if desired.endswith("/v1") and "dimension" in spec:
        spec["size"] = spec.pop("dimension")
    out["spec"] = spec
    return out


class ConversionWebhook(ThreadedTLSApp):
    """The webhook server, in a thread with its own event loop."""

    def __init__(self, workdir: Path) -> None:
        self.ca = certs.new_ca("conversion-test-ca")
        leaf = certs.issue(self.ca, "conv-webhook", ["127.0.0.1", f"{SERVICE_NAME}.{SERVICE_NS}.svc"])
        self.cert, self.key = workdir / "tls.crt", workdir / "tls.key"
        self.cert.write_bytes(leaf.cert_pem)
        self.key.write_bytes(leaf.key_pem)
        super().__init__()
        self.mode = "ok"
        self.reviews: list[dict[str, Any]] = []

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem).decode()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/convert"

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        desired = req["desiredAPIVersion"]
        converted = [convert(o, desired) for o in req["objects"]]
        response: dict[str, Any] = {"uid": req["uid"], "result": {"status": "Success"}}
        mode = self.mode
        if mode == "failed":
            response["result"] = {"status": "Failure", "message": "size must be even"}
        elif mode == "wronguid":
            response["uid"] = "not-the-uid"
        elif mode == "rename" and converted:
            converted[0]["metadata"] = dict(converted[0]["metadata"], name="renamed")
        elif mode == "newuid" and converted:
            converted[0]["metadata"] = dict(converted[0]["metadata"], uid="another-uid")
        elif mode == "wrongversion" and converted:
            converted[0]["apiVersion"] = f"{GROUP}/v9"
        elif mode == "missing":
            converted = converted[1:]
        elif mode == "metadata":
            for obj in converted:
                labels = dict(obj["metadata"].get("labels") or {}, converted="yes")
                obj["metadata"] = dict(obj["metadata"], labels=labels, generation=99)
        response["convertedObjects"] = converted
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}

    async def _handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review["request"])
        if self.mode == "notjson":
            return web.Response(text="nope", content_type="text/plain")
        return web.json_response(self.answer(review["request"]))

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/convert", self._handle)
        return app

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert), str(self.key))
        return ctx


def widget_crd(
    plural: str,
    client_config: dict[str, Any] | None,
    *,
    storage: str = "v2",
    warning: str | None = None,
    served: tuple[str, ...] = ("v1", "v2"),
) -> dict[str, Any]:
    """A Widget CRD with v1 (deprecated, ``size``) and v2 (``dimension``); Webhook strategy when
    ``client_config`` is given, else None."""
    kind = plural[:-1].capitalize()

    def version(name: str, field: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": name,
            "served": name in served,
            "storage": name == storage,
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {field: {"type": "integer"}}}},
                }
            },
        }
        if name == "v1":
            entry["deprecated"] = True
            if warning is not None:
                entry["deprecationWarning"] = warning
        return entry

    spec: dict[str, Any] = {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": plural, "singular": plural[:-1], "kind": kind, "listKind": f"{kind}List"},
        "versions": [version("v1", "size"), version("v2", "dimension")],
    }
    if client_config is not None:
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {"clientConfig": client_config, "conversionReviewVersions": ["v1"]},
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": spec,
    }
