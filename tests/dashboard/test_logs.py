"""The log view follows a running RayJob's output, from real Ray processes (local mode's agent).

The job prints a numbered line every half second; the page shows lines as they are printed,
streamed from the Ray dashboard's log tail through the dashboard (the browser talks only to it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import kinds
from tests.dashboard.conftest import screenshot
from tests.dashboard.harness import DashboardProcess
from tests.local.conftest import LocalPlane, start_plane, stop_plane
from tests.support import local_agent as la

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

PRINTER = (
    "import time; [print(f'step {i} of the printer', flush=True) or time.sleep(0.5) for i in range(240)]"
)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalPlane, DashboardProcess]]:
    base = tmp_path_factory.mktemp("logs")
    plane = start_plane(base)
    dashboard = DashboardProcess(plane.server.kubeconfig, base / "dash").start()
    try:
        yield plane, dashboard
    finally:
        dashboard.stop()
        for obj in plane.kube.list(kinds.RAYJOB, "default"):
            plane.kube.delete(kinds.RAYJOB, obj["metadata"]["name"], "default")
        stop_plane(plane)


def test_the_log_view_shows_the_lines_of_a_running_job(
    local: tuple[LocalPlane, DashboardProcess], page: Any
) -> None:
    from playwright.sync_api import expect

    plane, dashboard = local
    plane.kube.create(kinds.RAYCLUSTER, la.raycluster("logs", workers=0))
    plane.wait_ready("logs", timeout=300)  # a loaded 2-core machine starts Ray slowly
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "printer", "namespace": "default"},
        "spec": {"entrypoint": f'python -c "{PRINTER}"', "clusterSelector": {"ray.io/cluster": "logs"}},
    }
    plane.kube.create(kinds.RAYJOB, job)

    page.goto(dashboard.url)
    printer = page.locator('tr[data-key="RayJob/default/printer"]')
    expect(printer.locator(".state")).to_have_text("Running", timeout=180_000)
    printer.get_by_role("link", name="logs").click()
    log = page.locator("#log")
    expect(log).to_contain_text("step 2 of the printer", timeout=60_000)
    seen = log.inner_text().count("of the printer")
    expect(log).to_contain_text(f"step {seen + 3} of the printer", timeout=30_000)  # still following
    screenshot(page, "logs")
    assert plane.kube.find(kinds.RAYJOB, "printer", "default") is not None
    Path(dashboard.log_path).read_text()  # the dashboard kept running: its log is readable
