"""Estimated starts in a real browser: the real operator's forecast, published on the Workloads,
shown by the dashboard in My work and on the Queues page (no endpoint of its own)."""

from __future__ import annotations

import re
from typing import Any

from codeflare.kube import kinds
from tests.dashboard.conftest import Plane, screenshot
from tests.support import queue_objects as qo
from tests.support.polling import wait_for

WAIT_MS = 30_000
RUN_S = 600  # the admitted workload declares ten minutes


def test_pending_work_shows_its_estimated_start_or_why_there_is_none(plane: Plane, page: Any) -> None:
    from playwright.sync_api import expect

    qo.create_flavor_and_queues(plane.kube, {"team-a": ("cq-a", "1"), "team-b": ("cq-b", "1")})
    timed = qo.workload("timed", "team-a", "queue", "1")
    timed["spec"]["maximumExecutionTimeSeconds"] = RUN_S
    plane.kube.create(kinds.WORKLOAD, timed)
    plane.kube.create(kinds.RAYCLUSTER, qo.raycluster("open-ended", "team-b", cpu="1"))  # no known end

    def admitted(namespace: str, name: str | None = None) -> bool:
        for wl in plane.kube.list(kinds.WORKLOAD, namespace):
            if (name is None or wl["metadata"]["name"] == name) and (wl.get("status") or {}).get("admission"):
                return True
        return False

    wait_for(lambda: admitted("team-a", "timed") and admitted("team-b"), 30, what="the first two admitted")
    plane.kube.create(kinds.RAYCLUSTER, qo.raycluster("behind-timed", "team-a", cpu="1"))
    plane.kube.create(kinds.RAYCLUSTER, qo.raycluster("behind-open", "team-b", cpu="1"))

    page.goto(plane.admin.url)
    behind_timed = page.locator('tr[data-key="RayCluster/team-a/behind-timed"]')
    expect(behind_timed.locator(".estimate")).to_have_text(re.compile(r"in ~(9|10) min"), timeout=WAIT_MS)
    expect(behind_timed.locator(".after")).to_have_text("after timed")
    behind_open = page.locator('tr[data-key="RayCluster/team-b/behind-open"]')
    expect(behind_open.locator(".estimate")).to_have_text(
        "no estimate: waits behind work of unknown length", timeout=WAIT_MS
    )
    expect(behind_open.locator(".after")).to_contain_text("open-ended")
    screenshot(page, "work-estimates")

    page.get_by_role("link", name="Queues").click()
    pending = page.locator('#cq-cq-a tr[data-workload^="team-a/"] .estimate')
    expect(pending).to_have_text(re.compile(r"in ~(9|10) min"), timeout=WAIT_MS)
    expect(pending).to_have_attribute("title", re.compile("if submissions go on as in the last hour"))
