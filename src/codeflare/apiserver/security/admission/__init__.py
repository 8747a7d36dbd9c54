"""Admission: the built-in RBAC escalation check and the Mutating then Validating webhooks.

Every write the HTTP layer admits passes :class:`Admission` (:mod:`.chain`), which matches the
stored webhook configurations against it and calls the matching webhooks (:mod:`.webhooks`).
Validation of the configurations themselves is the registry's
(:mod:`codeflare.apiserver.registry.webhook_configurations`).
"""

from __future__ import annotations

from codeflare.apiserver.security.admission.chain import Admission
from codeflare.apiserver.security.admission.webhooks import AdmissionRequest

__all__ = ["Admission", "AdmissionRequest"]
