"""The dashboard in a real browser (headless Chromium) against a real API server and operator.

Every expectation is what a user sees on the page; changes are made through the API (as the SDK
or kubectl would) and must appear without a reload, pushed over server-sent events. Screenshots
of each view are saved under build/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

from codeflare.kube import kinds
from tests.dashboard.conftest import Plane, screenshot
from tests.support import queue_objects as qo
from tests.support.polling import wait_for

WAIT_MS = 20_000


def row(page: Any, kind: str, namespace: str, name: str) -> Any:
    return page.locator(f'tr[data-key="{kind}/{namespace}/{name}"]')


def test_views_load_and_a_queued_cluster_shows_its_reason_and_position(plane: Plane, page: Any) -> None:
    qo.create_flavor_and_queues(plane.kube, {"team-a": ("cq-a", "2")}, cohort="research")
    # created within one second: the engine orders them by name after priority and creation time
    for name in ("a-first", "b-second", "c-third", "d-fourth"):
        plane.kube.create(kinds.RAYCLUSTER, qo.raycluster(name, "team-a", cpu="1"))
    page.goto(plane.admin.url)
    expect = _expect()
    expect(page.get_by_role("heading", name="My work")).to_be_visible()
    third, fourth = (
        row(page, "RayCluster", "team-a", "c-third"),
        row(page, "RayCluster", "team-a", "d-fourth"),
    )
    expect(third.locator(".position")).to_have_text("#1 in cq-a", timeout=WAIT_MS)
    expect(fourth.locator(".position")).to_have_text("#2 in cq-a", timeout=WAIT_MS)
    expect(third.locator(".reason")).to_contain_text("insufficient quota for cpu")
    expect(third.locator(".state")).to_have_text("Queued")
    screenshot(page, "work")

    page.get_by_role("link", name="Queues").click()
    expect(page.get_by_role("heading", name="ClusterQueue cq-a")).to_be_visible()
    pending = page.locator('tr[data-workload^="team-a/"]')
    expect(pending).to_have_count(2, timeout=WAIT_MS)
    expect(pending.first.locator("td").first).to_have_text("1")
    bar = page.get_by_role("img", name=re.compile("cpu in flavor default: nominal 2, in use 2"))
    expect(bar).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("ul.tree")).to_contain_text("research")
    screenshot(page, "queues")

    page.get_by_role("link", name="Nodes").click()
    expect(page.get_by_role("heading", name="Nodes")).to_be_visible()
    expect(page.get_by_role("heading", name="GPUs by product")).to_be_visible()
    screenshot(page, "nodes")


def test_an_admission_and_a_new_worker_appear_without_a_reload(plane: Plane, page: Any) -> None:
    page.goto(plane.admin.url)
    expect = _expect()
    third = row(page, "RayCluster", "team-a", "c-third")
    expect(third.locator(".state")).to_have_text("Queued", timeout=WAIT_MS)
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))

    plane.kube.delete(kinds.RAYCLUSTER, "a-first", "team-a")  # frees quota: "c-third" is next
    expect(third.locator(".state")).not_to_have_text("Queued", timeout=WAIT_MS)
    expect(row(page, "RayCluster", "team-a", "d-fourth").locator(".position")).to_have_text("#1 in cq-a")

    plane.kube.create(
        kinds.RAYCLUSTER, {**qo.raycluster("workers", "team-b", cpu="1", queue=None, workers=2)}
    )
    plane.kube.patch(kinds.RAYCLUSTER, "workers", {"spec": {"suspend": False}}, "team-b")
    workers = row(page, "RayCluster", "team-b", "workers")
    expect(workers.locator("td").nth(6)).to_have_text("0/2", timeout=WAIT_MS)
    plane.kube.patch(
        kinds.RAYCLUSTER, "workers", {"status": {"readyWorkerReplicas": 1}}, "team-b", status=True
    )
    expect(workers.locator("td").nth(6)).to_have_text("1/2", timeout=WAIT_MS)
    assert navigations == [], f"the page reloaded: {navigations}"


def test_a_namespace_limited_user_sees_only_her_namespace_and_a_clear_refusal(
    plane: Plane, page: Any
) -> None:
    page.goto(plane.alice.url)
    expect = _expect()
    expect(row(page, "RayCluster", "team-a", "b-second")).to_be_visible(timeout=WAIT_MS)
    assert wait_for(
        lambda: plane.kube.find(kinds.RAYCLUSTER, "workers", "team-b"), 10, what="team-b's cluster"
    )
    expect(page.locator('tr[data-key*="/team-b/"]')).to_have_count(0)
    assert "team-b" not in page.content()

    down = row(page, "RayCluster", "team-a", "b-second").get_by_role("button", name=re.compile("^down"))
    expect(down).to_have_text("down (not permitted)", timeout=WAIT_MS)  # her SelfSubjectAccessReview
    page.once("dialog", lambda dialog: dialog.accept())
    down.click()  # still a real call: the server's answer is what counts
    refusal = page.locator("#action-result .error")
    expect(refusal).to_contain_text("Forbidden (403)", timeout=WAIT_MS)
    expect(refusal).to_contain_text('User "alice" cannot delete resource "rayclusters"')
    assert plane.kube.find(kinds.RAYCLUSTER, "b-second", "team-a") is not None
    screenshot(page, "refused")

    page.get_by_role("link", name="Queues").click()
    expect(page.locator(".refused")).to_contain_text("ClusterQueues")


def test_the_keyboard_reaches_the_content_and_an_action_which_asks_first(plane: Plane, page: Any) -> None:
    page.goto(plane.admin.url)
    expect = _expect()
    expect(row(page, "RayCluster", "team-a", "b-second")).to_be_visible(timeout=WAIT_MS)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    labels = []
    for _ in range(40):
        page.keyboard.press("Tab")
        labels.append(page.evaluate("document.activeElement.getAttribute('aria-label') || ''"))
        if labels[-1].startswith("down RayCluster team-a/"):
            break
    assert labels[-1].startswith("down RayCluster team-a/"), labels
    dialogs: list[str] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.keyboard.press("Enter")
    wait_for(lambda: dialogs, 10, what="the confirmation")
    assert labels[-1].removeprefix("down RayCluster ") in dialogs[0]
    expect(page.locator("#action-result")).to_have_text("")  # dismissed: nothing was sent


def test_an_allowed_action_is_confirmed_and_carried_out(plane: Plane, page: Any) -> None:
    page.goto(plane.admin.url)
    expect = _expect()
    target = row(page, "RayCluster", "team-a", "b-second")
    expect(target).to_be_visible(timeout=WAIT_MS)
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    down = target.get_by_role("button", name=re.compile("^down"))
    expect(down).to_have_text("down")
    down.click()
    expect(page.locator("#action-result .ok")).to_contain_text("deleted RayCluster team-a/b-second")
    assert dialogs and "team-a/b-second" in dialogs[0]
    expect(target).to_have_count(0, timeout=WAIT_MS)


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect
