"""What the pages carry: every API value escaped, actions that confirm, no credential."""

from __future__ import annotations

from codeflare.dashboard import pages
from codeflare.dashboard.work import WorkRow


def test_values_from_the_api_are_escaped() -> None:
    row = WorkRow(
        "RayCluster",
        "ns",
        "<script>alert(1)</script>",
        "Queued",
        reason="x",
        message='"><img src=x onerror=alert(1)>',
    )
    html = pages.work_view([row], 0.0)
    assert "<script>alert(1)" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&quot;&gt;&lt;img" in html


def test_each_action_is_a_confirmed_post_to_its_own_path() -> None:
    html = pages.work_view([WorkRow("RayJob", "team a", "j/1", "Running")], 0.0)
    assert 'hx-post="/actions/stop/RayJob/team%20a/j%2F1"' in html
    assert 'hx-post="/actions/delete/RayJob/team%20a/j%2F1"' in html
    assert html.count("hx-confirm=") == 2


def test_the_layout_carries_the_csrf_token_and_nothing_else_secret() -> None:
    page = pages.layout("work", "My work", "<p>body</p>", "", csrf="csrf-value")
    assert "csrf-value" in page and "token" not in page.lower().replace("x-csrf-token", "")
    assert 'sse-connect="/events/work"' in page and 'aria-current="page"' in page


def test_a_refusal_is_shown_with_the_servers_code_and_words() -> None:
    html = pages.outcome(False, 403, 'rayclusters "a" is forbidden: User "alice" cannot delete')
    assert "Forbidden (403)" in html and "User &quot;alice&quot; cannot delete" in html
