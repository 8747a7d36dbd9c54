"""Admission rules for Kueue's kinds: the validating webhooks Kueue itself registers.

Kueue validates ClusterQueues, ResourceFlavors and Workloads (spec and status) in webhooks as
well as in its CRDs; the CRD rules are in our bundled CRDs, the webhook rules in
:mod:`codeflare.api.kueue_validation`, and this module turns their field errors into a refusal
worded as controller-runtime words Kueue's (one error as is, several as ``[a, b]``). Kueue's
mutating webhooks (the ``resource-in-use`` finalizer, dropping ``minCount`` without partial
admission) are not here.
"""

from __future__ import annotations

from codeflare.api.kueue_validation import VALIDATORS
from codeflare.operator.webhooks.admission import (
    AdmissionRequest,
    AdmissionSettings,
    Verdict,
    allowed,
    denied,
)


def validate_kueue_object(request: AdmissionRequest, settings: AdmissionSettings) -> Verdict:
    """Refuse what Kueue's webhook for the object's kind refuses; other kinds are allowed."""
    check = VALIDATORS.get(str(request.obj.get("kind", "")))
    if check is None or request.operation not in ("CREATE", "UPDATE"):
        return allowed()
    old = request.old if request.operation == "UPDATE" else None
    messages = [error.message() for error in check(request.obj, old)]
    if not messages:
        return allowed()
    return denied(messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]")
