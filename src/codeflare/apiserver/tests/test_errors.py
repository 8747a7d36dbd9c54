"""API errors rendered as Kubernetes Status bodies and field-error messages."""

from codeflare.apiserver import errors
from codeflare.k8s.schema.field import ErrorType, FieldError


def test_invalid_status_names_each_field() -> None:
    err = errors.invalid(
        "RayCluster",
        "demo",
        [
            FieldError(ErrorType.REQUIRED, "spec.headGroupSpec"),
            FieldError(ErrorType.INVALID, "spec.workerGroupSpecs[0].replicas", "must be >= 0", -1),
        ],
        group="ray.io",
    )
    status = err.status()
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert fields == ["spec.headGroupSpec", "spec.workerGroupSpecs[0].replicas"]
    assert "spec.workerGroupSpecs[0].replicas: Invalid value: -1: must be >= 0" in status["message"]


def test_not_found_message_matches_kubernetes() -> None:
    status = errors.not_found("pods", "web").status()
    assert status["message"] == 'pods "web" not found'
    assert status["details"] == {"kind": "pods", "name": "web"}
