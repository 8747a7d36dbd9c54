"""The hour of ClusterQueue history the dashboard keeps, and the charts drawn from it."""

from __future__ import annotations

from decimal import Decimal

from codeflare.dashboard.history import History, admissions, polyline
from codeflare.dashboard.queues import ClusterQueueView, QuotaBar


def view(name: str, used: int, admitted: int) -> ClusterQueueView:
    bar = QuotaBar("f", "cpu", nominal=Decimal(4), in_use=Decimal(used))
    return ClusterQueueView(name, "", "BestEffortFIFO", True, "", 0, admitted, (bar,))


def test_one_sample_per_interval_for_an_hour_and_gone_queues_forgotten() -> None:
    history = History(window=3600, interval=15)
    history.record([view("a", 1, 0), view("b", 0, 0)], now=0)
    history.record([view("a", 2, 1), view("b", 0, 0)], now=5)  # too soon: not sampled
    history.record([view("a", 4, 3)], now=20)
    assert [(s.at, s.used_percent, s.admitted) for s in history.of("a")] == [(0, 25.0, 0), (20, 100.0, 3)]
    assert history.of("b") == []
    history.record([view("a", 0, 3)], now=3630)
    assert [s.at for s in history.of("a")] == [3630]  # 0 and 20 are more than an hour old


def test_admissions_are_the_increases_of_the_admitted_count() -> None:
    history = History(interval=1)
    for at, admitted in enumerate([0, 2, 1, 4, 4]):
        history.record([view("a", 0, admitted)], now=at)
    assert admissions(history.of("a")) == 5


def test_polyline_spans_the_window_right_to_left() -> None:
    history = History(interval=1)
    history.record([view("a", 0, 0)], now=0)
    history.record([view("a", 4, 0)], now=3600)
    assert polyline(history.of("a"), "used_percent", 3600, 3600, 100, 10, top=100.0) == "0.0,10.0 100.0,0.0"
    assert polyline([], "used_percent", 0, 3600, 100, 10) == ""
