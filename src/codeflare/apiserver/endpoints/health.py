"""``/livez``, ``/readyz`` and ``/healthz``: the server's health checks, as kube-apiserver lists them.

Two checks: ``ping`` (the server answers) and ``storage`` (the last write did not find the disk
full). ``/livez`` holds ``ping`` only - a full disk is no reason to restart the server; ``/readyz``
and ``/healthz`` hold both. ``/<endpoint>/<check>`` answers one check, ``?verbose`` lists every
check as ``[+]name ok`` / ``[-]name failed: reason``, and a failing endpoint is 503. This is
what ``codeflare local status`` reads to report a full disk. Decides nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from codeflare.apiserver.storage.store import ObjectStore

_CHECKS = {"livez": ("ping",), "readyz": ("ping", "storage"), "healthz": ("ping", "storage")}


def _failure(check: str, ready: bool, store: ObjectStore) -> str:
    """Why ``check`` fails; "" when it passes."""
    if check == "ping":
        return "" if ready else "the server is shutting down"
    if store.full:
        return (
            f"storage full: no space left on the device of {store.directory}; "
            "writes are refused (DELETE works)"
        )
    return ""


def answer(path: str, query: Mapping[str, str], ready: bool, store: ObjectStore) -> web.Response:
    """The plain-text answer to a health path."""
    endpoint, _, only = path.strip("/").partition("/")
    checks = _CHECKS.get(endpoint, ())
    if only:
        if only not in checks:
            return web.Response(text="404 page not found\n", status=404)
        why = _failure(only, ready, store)
        return web.Response(
            text=f"internal server error: {why}\n" if why else "ok", status=503 if why else 200
        )
    failures = {c: _failure(c, ready, store) for c in checks}
    failed = any(failures.values())
    if "verbose" not in query and not failed:
        return web.Response(text="ok")
    lines = [f"[-]{c} failed: {why}" if why else f"[+]{c} ok" for c, why in failures.items()]
    lines.append(f"{endpoint} check failed" if failed else f"{endpoint} check passed")
    return web.Response(text="\n".join(lines) + "\n", status=503 if failed else 200)
