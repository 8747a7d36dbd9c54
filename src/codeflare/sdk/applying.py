"""Server-side apply that never takes an admission back.

A queued object is created with ``spec.suspend: true`` and the queueing controller flips it to
false when it admits the object. Re-applying the same manifest must not suspend it again, even
when the admission lands between our read and our write: the apply that still carries
``suspend`` is sent unforced, so the controller's newer write shows up as a conflict and we
re-read instead of overwriting it.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from codeflare.errors import CodeFlareError

if TYPE_CHECKING:
    from codeflare.kube.client import Kube
    from codeflare.kube.kinds import Kind

log = logging.getLogger(__name__)

ATTEMPTS = 5


def apply_keeping_admission(kube: Kube, kind: Kind, manifest: dict[str, Any]) -> dict[str, Any]:
    """Apply ``manifest``; ``spec.suspend`` is only sent while the live object is (or would be) suspended."""
    from codeflare.kube.errors import Conflict

    meta = manifest["metadata"]
    wants_suspend = "suspend" in (manifest.get("spec") or {})
    for _ in range(ATTEMPTS):
        body = copy.deepcopy(manifest)
        current = kube.find(kind, meta["name"], meta.get("namespace"))
        running = current is not None and not (current.get("spec") or {}).get("suspend")
        if running or not wants_suspend:
            # keep the admission: a running object is never re-suspended through apply
            body["spec"].pop("suspend", None)
            return kube.apply(kind, body)
        try:
            return kube.apply(kind, body, force=False)
        except Conflict as err:
            if "suspend" not in str(err):
                log.debug("apply of %s conflicts on fields other managers own; forcing", meta["name"])
                return kube.apply(kind, body)
            log.debug("%s was admitted while we applied; re-reading", meta["name"])
    raise CodeFlareError(f"could not apply {meta['name']}: its spec.suspend kept changing under us")
