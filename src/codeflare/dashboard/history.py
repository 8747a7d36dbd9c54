"""The last hour of each ClusterQueue, kept by the dashboard while it runs (for the Queues charts).

A :class:`History` holds, per ClusterQueue, samples of (time, share of nominal quota in use,
admitted workloads, pending workloads), one at most every ``interval`` seconds, and forgets
samples older than ``window``. The dashboard samples its own store on a timer (no API call); the
operator's metrics would give longer history, this gives an hour without depending on them.
Nothing is persisted: a restarted dashboard starts an empty chart. Pure: time is passed in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from codeflare.dashboard.queues import ZERO, ClusterQueueView

WINDOW_S = 3600.0
INTERVAL_S = 15.0


@dataclass(frozen=True)
class Sample:
    at: float
    used_percent: float  # the fullest resource's share of its nominal quota
    admitted: int
    pending: int


def sample_of(view: ClusterQueueView, at: float) -> Sample:
    shares = [float(b.in_use * 100 / b.nominal) for b in view.bars if b.nominal > ZERO]
    return Sample(at, max(shares, default=0.0), view.admitted, view.pending)


@dataclass
class History:
    window: float = WINDOW_S
    interval: float = INTERVAL_S
    series: dict[str, deque[Sample]] = field(default_factory=dict)

    def record(self, views: Iterable[ClusterQueueView], now: float) -> None:
        """Add a sample per queue (unless its last is younger than ``interval``); drop old ones and
        queues that no longer exist."""
        names = set()
        for view in views:
            names.add(view.name)
            samples = self.series.setdefault(view.name, deque())
            if samples and now - samples[-1].at < self.interval:
                continue
            samples.append(sample_of(view, now))
        for name in [n for n in self.series if n not in names]:
            del self.series[name]
        for samples in self.series.values():
            while samples and now - samples[0].at > self.window:
                samples.popleft()

    def of(self, name: str) -> list[Sample]:
        return list(self.series.get(name, ()))


def polyline(
    samples: Iterable[Sample],
    value: str,
    now: float,
    window: float,
    width: int,
    height: int,
    top: float | None = None,
) -> str:
    """SVG ``points`` for ``value`` of each sample over the window ending ``now`` (``top``: the value
    at the chart's top; the largest sample's when None)."""
    points = [(s.at, float(getattr(s, value))) for s in samples]
    if not points:
        return ""
    scale = top if top is not None else max(max(v for _, v in points), 1.0)
    out = []
    for at, v in points:
        x = width * (1 - min(max(now - at, 0.0), window) / window)
        y = height * (1 - min(v, scale) / scale) if scale else height
        out.append(f"{x:.1f},{y:.1f}")
    return " ".join(out)


def admissions(samples: Iterable[Sample]) -> int:
    """Admissions seen over the samples: the sum of increases of the admitted count."""
    total, last = 0, None
    for s in samples:
        if last is not None and s.admitted > last:
            total += s.admitted - last
        last = s.admitted
    return total
