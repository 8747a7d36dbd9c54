"""The metrics tests wait on instead of sleeping: reconcile and cycle counters, watch progress.

``codeflare_caught_up_resource_version`` must never claim a change was acted on while it is still
waiting or in progress, or a test that waits on it would assert "nothing happened" too early.
"""

from __future__ import annotations

from types import SimpleNamespace

from codeflare.operator.metrics import OperatorMetrics, WatchProgress


def changed(version: int) -> dict[str, object]:
    return {"metadata": {"resourceVersion": str(version)}}


def test_progress_stays_behind_the_oldest_change_still_waiting_or_in_progress() -> None:
    progress = WatchProgress()
    progress.seen("Node", changed(5), "a")
    progress.seen("Node", changed(7), "b")
    assert progress.caught_up() == {"Node": 4}
    progress.start("a")
    progress.seen("Node", changed(9), "a")  # arrives while "a" is being worked on
    assert progress.caught_up() == {"Node": 4}
    progress.finish("a")
    assert progress.caught_up() == {"Node": 6}  # b (7) still waits
    progress.start("b")
    progress.finish("b")
    assert progress.caught_up() == {"Node": 8}  # a's second change (9) still waits
    progress.start("a")
    progress.finish("a")
    assert progress.caught_up() == {"Node": 9}


def test_a_failed_pass_leaves_its_changes_waiting_and_changes_needing_no_work_count_at_once() -> None:
    progress = WatchProgress()
    progress.seen("Pod", changed(3))  # nothing to do: acted on as seen
    assert progress.caught_up() == {"Pod": 3}
    progress.seen("Pod", changed(4), "k")
    progress.start("k")
    progress.finish("k", done=False)
    assert progress.caught_up() == {"Pod": 3}
    progress.seen("Pod", {"metadata": {"resourceVersion": "opaque"}}, "k")  # not tracked
    progress.start("k")
    progress.finish("k")
    assert progress.caught_up() == {"Pod": 4}


def test_the_counters_and_the_progress_are_served_as_prometheus_text() -> None:
    metrics = OperatorMetrics()
    metrics.reconciled("raycluster")
    queue = SimpleNamespace(reconciles=2)
    metrics.count_reconciles("appwrapper", queue)
    queue.reconciles = 3  # read when scraped
    metrics.scheduling_cycles.inc()
    metrics.watch_progress("scheduler").seen("Workload", changed(12))
    text = metrics.render().decode()
    assert 'codeflare_reconcile_total{controller="raycluster"} 1.0' in text
    assert 'codeflare_reconcile_total{controller="appwrapper"} 3.0' in text
    assert "codeflare_scheduling_cycles_total 1.0" in text
    assert 'codeflare_caught_up_resource_version{controller="scheduler",kind="Workload"} 12.0' in text
