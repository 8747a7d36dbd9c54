"""A stopped API server or operator shows as a banner, and the page recovers when they are back.

Its own API server, operator and dashboard (the test stops and restarts them); the browser page
is loaded once and never reloaded: what changes arrives over the event stream, which the
browser reopens by itself after the dashboard's watches recover.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.dashboard.conftest import OPERATOR, screenshot
from tests.dashboard.harness import DashboardProcess
from tests.support import queue_objects as qo
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import OperatorProcess, ensure_namespace, install_crds, write_operator_config

WAIT_MS = 45_000


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[tuple[ServerProcess, OperatorProcess, DashboardProcess]]:
    server = ServerProcess(tmp_path / "state").start()
    port = free_port()
    with Kube(config.from_kubeconfig(server.kubeconfig)) as kube:
        install_crds(kube)
        health = {"health": {"bindAddress": f"127.0.0.1:{port}"}, "metrics": {"bindAddress": "0"}}
        write_operator_config(kube, {**OPERATOR, **health, "instascale": {"enabled": False}})
    operator = OperatorProcess(server.kubeconfig, tmp_path / "operator.log").start()
    probe = ["--operator-health", f"http://127.0.0.1:{port}/readyz"]
    dashboard = DashboardProcess(server.kubeconfig, tmp_path / "dash", probe).start()
    try:
        yield server, operator, dashboard
    finally:
        dashboard.stop()
        operator.stop()
        server.stop()


def test_a_stopped_api_server_and_operator_show_as_a_banner_until_they_are_back(
    restartable: tuple[ServerProcess, OperatorProcess, DashboardProcess], page: Any
) -> None:
    from playwright.sync_api import expect

    server, operator, dashboard = restartable
    page.goto(dashboard.url)
    banner = page.locator("#banner")
    expect(page.get_by_role("heading", name="My work")).to_be_visible()
    expect(banner).to_have_text("", timeout=WAIT_MS)  # the operator became ready

    operator.stop()
    expect(banner).to_contain_text("operator not ready", timeout=WAIT_MS)
    operator.start()
    expect(banner).not_to_contain_text("operator not ready", timeout=WAIT_MS)

    server.stop()
    expect(banner).to_contain_text("Kubernetes API unreachable", timeout=WAIT_MS)
    screenshot(page, "banner")
    server.start()
    expect(banner).to_have_text("", timeout=WAIT_MS)
    with Kube(config.from_kubeconfig(server.kubeconfig)) as kube:
        ensure_namespace(kube, "after")
        kube.create(kinds.RAYCLUSTER, qo.raycluster("after-restart", "after", queue=None))
    expect(page.locator('tr[data-key="RayCluster/after/after-restart"]')).to_be_visible(timeout=WAIT_MS)
