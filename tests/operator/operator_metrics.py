"""What an operator's ``/metrics`` says, for tests that must show that *nothing happened*.

A negative ("the second workload is not admitted", "no Workload was created") is only worth
asserting once the operator has demonstrably looked: :meth:`OperatorMetricsReader.wait_caught_up`
waits until a controller has acted on every change of a kind up to an object's resourceVersion
(``codeflare_caught_up_resource_version``), and :meth:`OperatorMetricsReader.wait_passes` until a
controller has completed more passes (``codeflare_reconcile_total``) than before, for decisions
that hang on time rather than on a change. Neither ever sleeps a fixed time.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from codeflare.kube.kinds import Kind
from tests.support.apiserver import free_port
from tests.support.control_plane import wait_for

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class OperatorMetricsReader:
    """Reads one operator's ``/metrics``; :attr:`bind` is what its configuration's ``metrics`` takes."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.bind = {"bindAddress": f"127.0.0.1:{self.port}"}

    def scrape(self) -> Samples | None:
        """Every sample, or None while the operator does not answer (starting, restarting)."""
        url = f"http://127.0.0.1:{self.port}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                text = answer.read().decode()
        except (urllib.error.URLError, OSError):
            return None
        return {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    def value(self, name: str, **labels: str) -> float | None:
        """One sample's value: 0 when the operator has not reported it, None when it does not answer."""
        samples = self.scrape()
        if samples is None:
            return None
        return samples.get((name, frozenset(labels.items())), 0.0)

    def passes(self, controller: str) -> float | None:
        return self.value("codeflare_reconcile_total", controller=controller)

    def caught_up(self, controller: str, kind: Kind) -> float | None:
        return self.value("codeflare_caught_up_resource_version", controller=controller, kind=kind.kind)

    def wait_caught_up(self, controller: str, kind: Kind, obj: dict[str, Any], timeout: float = 30.0) -> None:
        """Until ``controller`` has acted on every change of ``kind`` up to ``obj``'s resourceVersion."""
        version = int(obj["metadata"]["resourceVersion"])
        wait_for(
            lambda: (self.caught_up(controller, kind) or 0) >= version,
            timeout,
            what=f"{controller} to act on {kind.kind} changes up to resourceVersion {version}",
        )

    def wait_passes(
        self, controller: str, more: int = 2, since: float | None = None, timeout: float = 30.0
    ) -> None:
        """Until ``controller`` has completed ``more`` passes after ``since`` (a :meth:`count`; default: now).

        With ``more=2`` at least one complete pass started after ``since``; use it for controllers
        that pass periodically. A controller that is idle may not pass at all: make a change it must
        act on after :meth:`count` and wait for one pass.
        """
        before = self.count(controller, timeout) if since is None else since
        wait_for(
            lambda: (self.passes(controller) or 0) >= before + more,
            timeout,
            what=f"{more} more {controller} passes after {before:g}",
        )

    def count(self, controller: str, timeout: float = 30.0) -> float:
        """``controller``'s completed passes now (waiting for the endpoint to answer)."""

        def answered() -> tuple[float] | None:
            value = self.passes(controller)
            return None if value is None else (value,)

        (value,) = wait_for(answered, timeout, what="the operator's metrics endpoint")
        return value
