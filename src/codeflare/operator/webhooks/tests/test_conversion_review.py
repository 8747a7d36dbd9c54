"""The operator's ConversionReview answers (what kube-apiserver's webhook converter checks)."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.operator.webhooks.conversion import ReviewError, conversion_patch, conversion_response

V1, V2 = "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"


def review(
    desired: str, *objects: dict[str, Any], api_version: str = "apiextensions.k8s.io/v1"
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ConversionReview",
        "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": list(objects)},
    }


def queue(name: str, cohort: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {"cohort": cohort}}


def test_every_object_is_converted_in_order_and_the_uid_echoed() -> None:
    answer = conversion_response(review(V2, queue("a", "x"), queue("b", "y")))
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1" and answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "u-1" and response["result"] == {"status": "Success"}
    assert [(o["apiVersion"], o["metadata"]["name"], o["spec"]) for o in response["convertedObjects"]] == [
        (V2, "a", {"cohortName": "x"}),
        (V2, "b", {"cohortName": "y"}),
    ]


def test_a_v1beta1_review_is_answered_in_its_own_version() -> None:
    answer = conversion_response(review(V2, queue("a", "x"), api_version="apiextensions.k8s.io/v1beta1"))
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1beta1"


def test_one_object_that_cannot_convert_fails_the_whole_review() -> None:
    alien = {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "ClusterQueue", "metadata": {"name": "c"}}
    response = conversion_response(review(V2, queue("a", "x"), alien))["response"]
    assert response["result"]["status"] == "Failed" and "v1alpha1" in response["result"]["message"]
    assert "convertedObjects" not in response
    response = conversion_response(review("kueue.x-k8s.io/v1", queue("a", "x")))["response"]
    assert response["result"]["status"] == "Failed"


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"kind": "AdmissionReview"},
        {"kind": "ConversionReview"},
        {"kind": "ConversionReview", "request": {}},
    ],
)
def test_what_is_not_a_conversion_review_is_refused(body: Any) -> None:
    with pytest.raises(ReviewError):
        conversion_response(body)


def test_the_crd_patch_names_the_url_and_drops_the_service() -> None:
    hook = conversion_patch({"url": "https://127.0.0.1:9443/convert"}, "Q0E=")["spec"]["conversion"]
    assert hook["strategy"] == "Webhook"
    assert hook["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/convert",
        "caBundle": "Q0E=",
        "service": None,
    }
    assert hook["webhook"]["conversionReviewVersions"] == ["v1"]


def test_the_crd_patch_names_the_service_and_drops_the_url() -> None:
    service = {"namespace": "ns", "name": "codeflare-operator-webhook", "port": 443, "path": "/convert"}
    hook = conversion_patch({"service": service}, "Q0E=")["spec"]["conversion"]
    assert hook["webhook"]["clientConfig"] == {"url": None, "service": service, "caBundle": "Q0E="}
