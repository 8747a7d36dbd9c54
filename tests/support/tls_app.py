"""An aiohttp app served over TLS on 127.0.0.1 from a thread of its own (webhooks, backends in tests).

Subclasses say what they serve (:meth:`ThreadedTLSApp.app`) and with which TLS settings
(:meth:`ThreadedTLSApp.ssl_context`); starting, serving and stopping live here once.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Self

from aiohttp import web

from tests.support.apiserver import free_port


class ThreadedTLSApp:
    """Serves :meth:`app` over :meth:`ssl_context` on ``127.0.0.1:port`` until :meth:`stop`."""

    def __init__(self) -> None:
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def app(self) -> web.Application:
        raise NotImplementedError

    def ssl_context(self) -> ssl.SSLContext:
        raise NotImplementedError

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        runner = web.AppRunner(self.app())
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=self.ssl_context())
        self._loop.run_until_complete(site.start())
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def start(self) -> Self:
        self._thread.start()
        assert self._started.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
