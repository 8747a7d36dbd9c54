"""What every controller of the operator shares: configuration, API client, events, metrics, clock.

It also holds the shared informers (one watch per kind) and the API discovery cache (which
resource serves a wrapped kind).

One :class:`OperatorContext` is built at startup and handed to each controller's ``register``;
there is no module-level state, so two operators can run in one process (as tests do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from codeflare.kube.client import AsyncKube
from codeflare.kube.config import Connection
from codeflare.kube.discovery import Discovery
from codeflare.kube.informer import SharedInformers
from codeflare.operator.config import OperatorConfig
from codeflare.operator.events import EventRecorder
from codeflare.operator.metrics import OperatorMetrics


@dataclass
class OperatorContext:
    """Shared, read-mostly state of one operator process."""

    config: OperatorConfig
    connection: Connection
    kube: AsyncKube
    namespace: str
    events: EventRecorder
    metrics: OperatorMetrics
    clock: Callable[[], float] = time.time
    ready: dict[str, bool] = field(default_factory=dict)
    informers: SharedInformers = field(init=False)
    discovery: Discovery = field(init=False)

    def __post_init__(self) -> None:
        self.informers = SharedInformers(self.kube)
        self.discovery = Discovery(self.kube)

    def mark_ready(self, component: str, value: bool = True) -> None:
        self.ready[component] = value

    @property
    def is_ready(self) -> bool:
        return bool(self.ready) and all(self.ready.values())
