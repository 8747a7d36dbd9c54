"""``codeflare operator``: run the operator (every controller, one process, one configuration)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any, name: str) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help="run the CodeFlare operator",
        description="Run the operator: queueing and quota admission, AppWrapper lifecycle, RayCluster "
        "exposure and node scale-out, configured by one ConfigMap (created with defaults when missing). "
        "A changed ConfigMap restarts the process cleanly to apply it.",
    )
    parser.add_argument(
        "--config", default="codeflare-operator-config", help="name of the configuration ConfigMap"
    )
    parser.add_argument(
        "--namespace",
        default=os.environ.get("POD_NAMESPACE", "codeflare-system"),
        help="namespace of the ConfigMap and the leader Lease (default codeflare-system)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="kubeconfig file (default: in-cluster, then $KUBECONFIG, then local mode)",
    )
    parser.add_argument("--identity", help="leader-election identity (default host-pid-random)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from codeflare.kube import config
    from codeflare.operator.main import RESTART, run_operator

    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    for noisy in ("kopf", "httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    connection = config.auto(args.kubeconfig)
    status = asyncio.run(run_operator(connection, args.namespace, args.config, args.identity))
    if status == RESTART:
        os.execv(sys.executable, [sys.executable, "-m", "codeflare.cli.main", *sys.argv[1:]])
    return status
