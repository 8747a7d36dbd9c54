"""A pending Workload's estimated start in words, read from the annotations the operator writes.

The operator's forecast (``codeflare.dev/estimated-start``: RFC 3339 or ``unbounded``, and
``codeflare.dev/waiting-for``) is the only source: the dashboard asks no endpoint and computes no
estimate of its own. What the estimate promises is the forecast's basis: the work that exists now,
run times as declared or observed, and submissions going on as in the last hour (the expected
start, not the earliest). Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeflare.dashboard.snapshot import meta
from codeflare.k8s.constants import ESTIMATE_UNBOUNDED, ESTIMATED_START_ANNOTATION, WAITING_FOR_ANNOTATION
from codeflare.k8s.timestamps import epoch_seconds
from codeflare.k8s.types import Obj

UNBOUNDED_WORDS = "no estimate: waits behind work of unknown length"
BASIS = "if submissions go on as in the last hour and run times hold"


@dataclass(frozen=True)
class StartEstimate:
    """``words``: "in ~3 min", "any moment now", :data:`UNBOUNDED_WORDS` or "" (none published);
    ``at``: the RFC 3339 time it stands for ("" when unbounded); ``waiting_for``: who must finish."""

    words: str = ""
    at: str = ""
    waiting_for: str = ""

    @property
    def title(self) -> str:
        """The hover text: the exact time and the basis of the estimate."""
        if not self.words:
            return ""
        after = f"; after {self.waiting_for}" if self.waiting_for else ""
        if not self.at:
            return f"its admission depends on work of unknown run time{after}"
        return f"estimated admission {self.at}, {BASIS}{after}"


def in_words(seconds: float) -> str:
    """A wait as a person says it: "any moment now", "in ~40 s", "in ~3 min", "in ~2 h", "in ~3 d"."""
    if seconds < 10:
        return "any moment now"
    if seconds < 60:
        return f"in ~{round(seconds / 10) * 10:.0f} s"
    if seconds < 90 * 60:
        return f"in ~{max(1, round(seconds / 60))} min"
    if seconds < 48 * 3600:
        return f"in ~{round(seconds / 3600)} h"
    return f"in ~{round(seconds / 86400)} d"


def start_estimate(workload: Obj, now: float) -> StartEstimate:
    """The published estimate of one pending Workload at ``now`` (empty when there is none, or it
    cannot be read)."""
    annotations = meta(workload).get("annotations") or {}
    start = annotations.get(ESTIMATED_START_ANNOTATION)
    after = str(annotations.get(WAITING_FOR_ANNOTATION) or "")
    if start == ESTIMATE_UNBOUNDED:
        return StartEstimate(UNBOUNDED_WORDS, "", after)
    at = epoch_seconds(start) if isinstance(start, str) else None
    if at is None:
        return StartEstimate()
    return StartEstimate(in_words(at - now), str(start), after)
