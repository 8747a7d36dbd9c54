"""A small progress display for waits: a live spinner line in terminals and notebooks (rich),
plain log lines elsewhere (CI, pipes). Only changes are shown.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

log = logging.getLogger(__name__)


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class StatusDisplay:
    """``with StatusDisplay("ns/name") as d: d.update("queued", "reason")``."""

    def __init__(self, subject: str, enabled: bool = True) -> None:
        self.subject = subject
        self.enabled = enabled
        self._status: Any = None
        self._last: tuple[str, str] | None = None
        self._start = time.monotonic()

    def __enter__(self) -> StatusDisplay:
        if self.enabled and _interactive():
            from rich.console import Console

            self._status = Console(stderr=True).status(f"{self.subject}: starting")
            self._status.start()
        return self

    def update(self, state: str, detail: str = "") -> None:
        if (state, detail) == self._last:
            return
        self._last = (state, detail)
        elapsed = time.monotonic() - self._start
        text = f"{self.subject}: {state}" + (f" - {detail}" if detail else "") + f" ({elapsed:.0f}s)"
        if self._status is not None:
            self._status.update(text)
        elif self.enabled:
            log.info("%s", text)

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            if self._last is not None:
                from rich.console import Console

                state, detail = self._last
                Console(stderr=True).print(f"{self.subject}: {state}" + (f" - {detail}" if detail else ""))
