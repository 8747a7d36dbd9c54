"""``codeflare dashboard``: serve the web dashboard with the user's own Kubernetes credentials."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any, name: str) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help="serve the web dashboard (queues, positions, clusters, jobs, nodes; live)",
        description="Serve the dashboard in the foreground. It reads the Kubernetes API with your "
        "kubeconfig's "
        "credentials, so it shows exactly what you may see. Bound to 127.0.0.1 by default; bound elsewhere "
        "it requires a token (printed in its URL).",
    )
    parser.add_argument("--port", type=int, default=8686, help="port to listen on (0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--kubeconfig", type=Path, help="kubeconfig (default $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        help="namespace to watch where you may not list across namespaces (repeatable; default the "
        "kubeconfig's namespace)",
    )
    parser.add_argument(
        "--token",
        help="token the browser must present (default: none on loopback, "
        "a generated one elsewhere); also $CODEFLARE_DASHBOARD_TOKEN",
    )
    parser.add_argument("--operator-health", default="", help="operator readiness URL, for the banner")
    parser.add_argument(
        "--url-file", type=Path, help="write the dashboard's URL to this file once it listens"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from codeflare.cli.output import EXIT_USAGE
    from codeflare.dashboard.server import Settings, serve
    from codeflare.k8s.files import write_private
    from codeflare.kube import config
    from codeflare.kube.client import AsyncKube

    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    for noisy in ("httpx", "httpx2", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from lightkube.core.exceptions import ConfigError

    try:
        connection = config.from_kubeconfig(args.kubeconfig, args.context)
    except (OSError, ValueError, ConfigError) as exc:
        print(f"error: --kubeconfig: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print(f"error: --port {args.port}: must be 0..65535", file=sys.stderr)
        return EXIT_USAGE
    settings = Settings(
        host=args.host,
        port=args.port,
        token=args.token or os.environ.get("CODEFLARE_DASHBOARD_TOKEN") or None,
        namespaces=tuple(args.namespace),
        operator_health=args.operator_health,
    )

    def started(url: str) -> None:
        print(f"dashboard: {url}", flush=True)
        if args.url_file:
            write_private(args.url_file, url + "\n")

    async def main() -> None:
        kube = AsyncKube(connection, field_manager="codeflare-dashboard")
        task = asyncio.create_task(serve(kube, settings, started))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        finally:
            await kube.aclose()

    try:
        asyncio.run(main())
    except OSError as exc:  # the port is taken, the address is not ours
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0
