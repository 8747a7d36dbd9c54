"""``codeflare local up|down|status`` (and the ``agent`` the ``up`` command starts)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any, name: str) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help="run the control plane locally (API server, operator, node agent with real Ray)",
        description="Local mode: the same system on one machine, Ray clusters as real Ray processes.",
    )
    sub = parser.add_subparsers(dest="local_command", metavar="ACTION", required=True)
    for action, text in (
        ("up", "start local mode (idempotent) and wait until it is ready"),
        ("down", "stop everything local mode started (objects are kept); fails naming what survives"),
        ("status", "show what runs and where"),
    ):
        p = sub.add_parser(action, help=text, description=text)
        p.add_argument(
            "--home", type=Path, help="local mode home (default $CODEFLARE_HOME or ~/.codeflare/local)"
        )
        if action == "status":
            p.add_argument("-o", "--output", choices=["table", "json"], default="table")
        p.set_defaults(func=globals()[f"_{action}"])
    agent = sub.add_parser("agent", help="run the node agent in the foreground (started by `local up`)")
    agent.add_argument("--home", type=Path)
    agent.add_argument("--kubeconfig", type=Path)
    agent.set_defaults(func=_agent)


def _up(args: argparse.Namespace) -> int:
    from codeflare.local.mode import LocalMode

    mode = LocalMode(args.home)
    mode.up()
    print(f"local mode is up (home {mode.home})")
    print(f"  dashboard: {mode.dashboard_url() or '-'}")
    print(f"  kubectl:  export KUBECONFIG={mode.kubeconfig}")
    print("  SDK:      from codeflare.sdk import Cluster, ClusterConfiguration  # uses local mode by default")
    print("  stop:     codeflare local down")
    return 0


def _down(args: argparse.Namespace) -> int:
    from codeflare.local.mode import LocalMode

    report = LocalMode(args.home).down()
    for line in report.lines():
        print(line)
    if not report.results:
        print("nothing was running")
    if not report.ok:
        names = ", ".join(r.what for r in report.survivors)
        print(f"error: still running after `local down`: {names}", file=sys.stderr)
        return 1
    return 0


def _status(args: argparse.Namespace) -> int:
    from codeflare.local.mode import LocalMode

    status = LocalMode(args.home).status()
    status["storage"] = _storage(Path(status["kubeconfig"])) if status["kubeconfig"] else None
    if args.output == "json":
        print(json.dumps(status, indent=2))
    else:
        print(f"home:       {status['home']}")
        print(f"kubeconfig: {status['kubeconfig'] or '-'}")
        print(f"dashboard:  {status['dashboard'] or '-'}")
        print(f"storage:    {status['storage'] or '-'}")
        for name, comp in status["components"].items():
            state = f"running (pid {comp['pid']})" if comp["running"] else "stopped"
            print(f"{name:<10}  {state:<22} {comp['log'] or ''}")
    return 0 if all(c["running"] for c in status["components"].values()) else 1


def _storage(kubeconfig: Path, timeout: float = 3.0) -> str:
    """The API server's storage condition from its ``/readyz/storage`` check: ``ok``, the reason
    it fails (a full disk, naming the state directory), or ``unknown: ...`` when it cannot say."""
    import base64
    import ssl
    import urllib.error
    import urllib.request

    import yaml

    try:
        cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
        url = str(cluster["server"]).rstrip("/") + "/readyz/storage"
        context = None
        if url.startswith("https:"):
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            context = ssl.create_default_context(cadata=ca)
        with urllib.request.urlopen(url, timeout=timeout, context=context):
            return "ok"
    except urllib.error.HTTPError as exc:
        reason = exc.read().decode(errors="replace").strip().removeprefix("internal server error: ")
        return reason if exc.code == 503 else f"unknown: /readyz/storage answered {exc.code}"
    except (OSError, ValueError, KeyError, IndexError, TypeError, yaml.YAMLError) as exc:
        return f"unknown: {exc}"


def _agent(args: argparse.Namespace) -> int:
    from codeflare.kube import config
    from codeflare.kube.client import AsyncKube
    from codeflare.kube.config import local_home
    from codeflare.local.agent.node_agent import FIELD_MANAGER, NodeAgent

    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    for noisy in ("httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    home = local_home(args.home)
    kubeconfig = args.kubeconfig or home / "kubeconfig"

    async def main() -> None:
        kube = AsyncKube(config.from_kubeconfig(kubeconfig), field_manager=FIELD_MANAGER)
        agent = NodeAgent(kube, home)
        task = asyncio.create_task(agent.run())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await agent.shutdown()
        await kube.aclose()

    asyncio.run(main())
    return 0
