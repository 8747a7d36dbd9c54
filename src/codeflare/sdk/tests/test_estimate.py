"""The published estimate in words (what why_pending() appends)."""

from __future__ import annotations

from codeflare.k8s.constants import ESTIMATE_UNBOUNDED, ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.sdk.estimate import estimate_words


def annotated(**values: str) -> dict:  # type: ignore[type-arg]
    return {"metadata": {"annotations": values}}


def test_estimate_words() -> None:
    at = {ESTIMATED_START_ANNOTATION: "2026-12-02T06:30:00Z", WAITING_FOR_ANNOTATION: "job-1"}
    assert estimate_words(annotated(**at)) == "; estimated start 2026-12-02T06:30:00Z, after job-1"
    unbounded = {ESTIMATED_START_ANNOTATION: ESTIMATE_UNBOUNDED, WAITING_FOR_ANNOTATION: "forever"}
    assert (
        estimate_words(annotated(**unbounded))
        == "; no estimated start: it waits behind forever, of unknown run time"
    )
    assert estimate_words(annotated(**{ESTIMATED_START_ANNOTATION: "soon"})) == ""
    assert estimate_words({"metadata": {}}) == ""
