"""The operator's estimated start of a pending Workload, in words, read from its annotations.

The forecast loop of the operator writes ``codeflare.dev/estimated-start`` (RFC 3339 or
``unbounded``) and ``codeflare.dev/waiting-for`` on pending Workloads; ``why_pending()`` (and so
``codeflare cluster status``) appends them to the reason. Reads one object already fetched; no
I/O, no estimate of its own.
"""

from __future__ import annotations

from typing import Any

from codeflare.k8s.constants import ESTIMATE_UNBOUNDED, ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.k8s.timestamps import epoch_seconds


def estimate_words(workload: dict[str, Any]) -> str:
    """``"; estimated start <time>, after <who>"``, ``"; no estimated start (...)"`` or ``""``."""
    annotations = (workload.get("metadata") or {}).get("annotations") or {}
    start = annotations.get(ESTIMATED_START_ANNOTATION)
    after = annotations.get(WAITING_FOR_ANNOTATION) or ""
    if start == ESTIMATE_UNBOUNDED:
        behind = f" behind {after}" if after else ""
        return f"; no estimated start: it waits{behind}, of unknown run time"
    if epoch_seconds(start) is None:
        return ""
    return f"; estimated start {start}" + (f", after {after}" if after else "")
