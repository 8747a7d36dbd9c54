"""A real HTTP server on 127.0.0.1 that answers the client with scripted Kubernetes responses.

The client layer's unit tests talk to it through the real transport (lightkube over httpx), so
what they check is what goes over the wire: each request is recorded (method, path, query, body),
and each answer is the next one scripted for its method and path (the last one repeats). The
server runs on its own event loop in a daemon thread, so synchronous callers (``Kube``) and
asyncio tests alike can use it. It keeps no objects and implements no API semantics: a test
scripts exactly the answers it wants, which is what lets it produce any status, reason or body.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Answer:
    """One scripted HTTP response: a JSON body (a dict), raw text, or a list of watch events."""

    status: int
    body: dict[str, Any] | str | list[dict[str, Any]] = field(default_factory=dict)
    content_type: str = "application/json"


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    at: float = field(default=0.0, compare=False)  # time.monotonic() when the server read it


def status_answer(code: int, reason: str = "", message: str = "", **details: Any) -> Answer:
    """A Kubernetes ``Status`` failure body; ``message`` defaults to ``scripted <code>``."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message or f"scripted {code}",
    }
    if details:
        body["details"] = details
    return Answer(code, body)


def watch_answer(*events: tuple[str, dict[str, Any]]) -> Answer:
    """A watch stream: one JSON event a line (``{"type": ..., "object": ...}``), then the end."""
    return Answer(200, [{"type": kind, "object": obj} for kind, obj in events])


class ScriptedAPI:
    """Answers ``(method, path)`` with its scripted answers, else those scripted for the method."""

    def __init__(self, default: Answer | None = None) -> None:
        self.default = default or status_answer(404, "NotFound", "nothing scripted")
        self.received: list[Received] = []
        self._script: dict[tuple[str, str | None], list[Answer]] = {}
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, method: str, *answers: Answer, path: str | None = None) -> None:
        """Answer ``method`` (on ``path`` only, when given) with ``answers`` in turn, the last repeating."""
        self._script[(method, path)] = list(answers)

    def sent(self, method: str | None = None) -> list[Received]:
        """The requests received so far (of ``method`` only, when given)."""
        return [r for r in self.received if method is None or r.method == method]

    def methods(self) -> list[str]:
        return [r.method for r in self.received]

    def _next(self, method: str, path: str) -> Answer:
        answers = self._script.get((method, path)) or self._script.get((method, None))
        if not answers:
            return self.default
        return answers.pop(0) if len(answers) > 1 else answers[0]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        self.received.append(
            Received(request.method, request.path, dict(request.query), body, time.monotonic())
        )
        answer = self._next(request.method, request.path)
        if isinstance(answer.body, list):
            text = "".join(json.dumps(event) + "\n" for event in answer.body)
        elif isinstance(answer.body, str):
            text = answer.body
        else:
            text = json.dumps(answer.body)
        # the header exactly as written (aiohttp would append a charset to content_type=)
        headers = {"Content-Type": answer.content_type}
        return web.Response(status=answer.status, body=text.encode(), headers=headers)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server: Any = site._server
        self.port = int(server.sockets[0].getsockname()[1])

    @contextmanager
    def serving(self) -> Iterator[ScriptedAPI]:
        """Serve on a free loopback port until the block ends."""
        thread = threading.Thread(target=self._loop.run_forever, name="scripted-api", daemon=True)
        thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
            yield self
        finally:
            if self._runner is not None:
                asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(10)
            self._loop.close()
