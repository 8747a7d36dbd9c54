"""The estimated start in words, from the operator's Workload annotations, in both views."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from codeflare.dashboard.estimates import UNBOUNDED_WORDS, in_words, start_estimate
from codeflare.dashboard.history import History
from codeflare.dashboard.pages import work_view
from codeflare.dashboard.queue_pages import queues_view as queues_html
from codeflare.dashboard.queues import queues_view
from codeflare.dashboard.snapshot import Snapshot
from codeflare.dashboard.work import work_rows
from codeflare.k8s.constants import (
    ESTIMATED_START_ANNOTATION,
    JOB_UID_LABEL,
    QUEUE_NAME_LABEL,
    WAITING_FOR_ANNOTATION,
)
from codeflare.k8s.timestamps import epoch_seconds

NOW = epoch_seconds("2026-01-01T00:00:00Z") or 0.0
UNIT_S = {"s": 1, "min": 60, "h": 3600, "d": 86400}


def workload(name: str, annotations: dict[str, str], uid: str = "") -> dict[str, Any]:
    labels = {JOB_UID_LABEL: uid} if uid else {}
    meta = {"name": name, "namespace": "ns", "annotations": annotations, "labels": labels}
    meta["creationTimestamp"] = "2025-12-31T23:59:00Z"
    return {"kind": "Workload", "metadata": meta, "spec": {"queueName": "lq"}, "status": {}}


@given(st.floats(min_value=10, max_value=3e7))
def test_words_round_the_wait_to_their_unit(seconds: float) -> None:
    words = in_words(seconds)
    match = re.fullmatch(r"in ~(\d+) (s|min|h|d)", words)
    assert match is not None, words
    value, unit = int(match.group(1)), UNIT_S[match.group(2)]
    step = 10 if unit == 1 else unit  # seconds are rounded to tens
    assert abs(value * unit - seconds) <= step / 2 + 1e-6


def test_published_estimates_in_words_or_none() -> None:
    soon = start_estimate(
        workload("a", {ESTIMATED_START_ANNOTATION: "2026-01-01T00:03:00Z", WAITING_FOR_ANNOTATION: "train"}),
        NOW,
    )
    assert (soon.words, soon.waiting_for) == ("in ~3 min", "train")
    assert "2026-01-01T00:03:00Z" in soon.title and "submissions go on as in the last hour" in soon.title
    assert start_estimate(workload("b", {ESTIMATED_START_ANNOTATION: "2025-12-31T23:00:00Z"}), NOW).words == (
        "any moment now"
    )  # overdue: what it waits for ran past its expected end
    unbounded = start_estimate(workload("c", {ESTIMATED_START_ANNOTATION: "unbounded"}), NOW)
    assert unbounded.words == UNBOUNDED_WORDS and unbounded.at == ""
    assert start_estimate(workload("d", {}), NOW).words == ""
    assert start_estimate(workload("e", {ESTIMATED_START_ANNOTATION: "soon"}), NOW).words == ""


def test_both_views_show_the_estimate_and_what_it_waits_for() -> None:
    cq = {"metadata": {"name": "cq"}, "spec": {}, "status": {}}
    lq = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}
    rc = {
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ns", "uid": "uid-rc", "labels": {QUEUE_NAME_LABEL: "lq"}},
        "spec": {"suspend": True},
    }
    annotations = {ESTIMATED_START_ANNOTATION: "2026-01-01T02:00:00Z", WAITING_FOR_ANNOTATION: "big"}
    snapshot = Snapshot(
        {
            "ClusterQueue": [cq],
            "LocalQueue": [lq],
            "RayCluster": [rc],
            "Workload": [workload("wl", annotations, uid="uid-rc"), workload("later", {})],
        },
        now=NOW,
    )
    work = work_view(work_rows(snapshot), NOW)
    assert '<span class="estimate"' in work and "in ~2 h</span>" in work and "after big" in work
    queues = queues_html(queues_view(snapshot), History(), NOW)
    assert "Est. start" in queues and "in ~2 h</span>" in queues
    assert queues.count('class="estimate"') == 1  # "later" has no published estimate: "-"
