"""The CRD conversion webhook of the kueue.x-k8s.io kinds we own: ConversionReview in, review out.

The API server posts one ``apiextensions.k8s.io`` ConversionReview (v1, or v1beta1 for older
servers) per object or list page; :func:`conversion_response` converts every object with
:mod:`codeflare.api.kueue_conversion` and answers ``Success``, or ``Failed`` with the reason when
any object cannot be converted (nothing is half-converted). :func:`conversion_patch` is the
``spec.conversion`` that points a CRD at this webhook, as cert managers patch it. Serving and
registering are :mod:`codeflare.operator.webhooks.server`'s.
"""

from __future__ import annotations

from typing import Any

from codeflare.api.kueue_conversion import ConversionError, convert
from codeflare.k8s.types import Obj
from codeflare.kube import kinds

CONVERT_PATH = "/convert"
# The kinds whose CRDs (ours, labelled part-of codeflare) convert through this webhook.
CONVERTED_KINDS = kinds.KUEUE_KINDS


class ReviewError(ValueError):
    """The body is not a ConversionReview request (answered with 400)."""


def conversion_response(review: Any) -> Obj:
    """The ConversionReview answering ``review``: every object at ``desiredAPIVersion``, or Failed."""
    if not isinstance(review, dict) or review.get("kind") != "ConversionReview":
        raise ReviewError("the body is not a ConversionReview")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("objects"), list):
        raise ReviewError("the ConversionReview has no request.objects")
    desired = str(request.get("desiredAPIVersion", ""))
    response: Obj = {"uid": request.get("uid", "")}
    try:
        # the objects were parsed for this review alone: converted in place, no copies
        converted = [convert(_object(obj), desired, in_place=True) for obj in request["objects"]]
    except ConversionError as exc:
        response["result"] = {"status": "Failed", "message": str(exc)}
    else:
        response["convertedObjects"] = converted
        response["result"] = {"status": "Success"}
    return {
        "apiVersion": review.get("apiVersion", "apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": response,
    }


def conversion_patch(reference: Obj, ca_bundle_b64: str) -> Obj:
    """A merge patch of a CRD: strategy Webhook, calling ``reference`` (``{"url": ...}`` or
    ``{"service": ...}``, see :mod:`~codeflare.operator.webhooks.clientconfig`) with
    ``ca_bundle_b64`` trusted; the other way of naming it is cleared."""
    client_config: Obj = {"url": None, "service": None, **reference, "caBundle": ca_bundle_b64}
    webhook = {"clientConfig": client_config, "conversionReviewVersions": ["v1"]}
    return {"spec": {"conversion": {"strategy": "Webhook", "webhook": webhook}}}


def crd_name(kind: kinds.Kind) -> str:
    return f"{kind.plural}.{kind.group}"


def _object(obj: Any) -> Obj:
    if not isinstance(obj, dict):
        raise ConversionError("an object to convert is not a JSON object")
    return obj
