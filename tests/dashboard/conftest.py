"""Fixtures for the dashboard's browser tests: API server with token users, operator, dashboards, Chromium.

One module-scoped control plane: a real API server whose users come from a tokens file (alice
may only ``view`` team-a), the real operator (queueing on, in a thread), a dashboard with the
admin's kubeconfig and one with alice's. Playwright drives Debian's Chromium, headless.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from tests.dashboard.harness import SCREENSHOTS, DashboardProcess, chromium, user_kubeconfig
from tests.support.apiserver import ServerProcess, serving_with_tokens
from tests.support.control_plane import ThreadedOperator, ensure_namespace

TOKENS = 'alice-token,alice,1001,"ml"\n'
OPERATOR = {"queueing": {"backoffTime": "1s", "capacityCheck": False}, "appwrapper": {"enabled": False}}


@dataclass
class Plane:
    server: ServerProcess
    kube: Kube
    admin: DashboardProcess
    alice: DashboardProcess


def bind_view(kube: Kube, namespace: str, user: str) -> None:
    kube.create(
        kinds.Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
        {
            "metadata": {"name": f"{user}-view", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        },
        namespace,
    )


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    base = tmp_path_factory.mktemp("dashboard")
    with serving_with_tokens(base / "state", TOKENS) as server:
        operator = ThreadedOperator(server, OPERATOR).start()
        kube = Kube(config.from_kubeconfig(server.kubeconfig))
        for ns in ("team-a", "team-b"):
            ensure_namespace(kube, ns)
        bind_view(kube, "team-a", "alice")
        alice_config = user_kubeconfig(server, "alice-token", "team-a", base / "alice.kubeconfig")
        admin = DashboardProcess(server.kubeconfig, base / "admin").start()
        alice = DashboardProcess(alice_config, base / "alice").start()
        try:
            yield Plane(server, kube, admin, alice)
        finally:
            admin.stop()
            alice.stop()
            operator.stop()
            kube.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
