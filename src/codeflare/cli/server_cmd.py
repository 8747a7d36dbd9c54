"""``codeflare server``: run the embedded Kubernetes-compatible API server in the foreground."""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path
from typing import Any


def register(subparsers: Any, name: str) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help="run the embedded Kubernetes-compatible API server",
        description="Run the embedded API server in the foreground. Once it serves, STATE_DIR/kubeconfig "
        "holds a context for kubectl, the kubernetes client and lightkube.",
    )
    parser.add_argument(
        "--state-dir", required=True, type=Path, help="where state.db, certificates and the kubeconfig live"
    )
    parser.add_argument("--port", type=int, default=6443, help="port to listen on (0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--insecure-http", action="store_true", help="serve plain HTTP instead of HTTPS")
    parser.add_argument("--tokens-file", type=Path, help='static tokens CSV: token,user,uid,"group1,group2"')
    parser.add_argument(
        "--authorization",
        choices=("rbac", "always-allow"),
        default="rbac",
        help="rbac (default: Roles/ClusterRoles and bindings decide; the admin token is system:masters) "
        "or always-allow (every authenticated request is allowed)",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=20_000,
        help="changes kept for watch resumption; older resourceVersions get 410 Gone (default 20000)",
    )
    parser.add_argument(
        "--bookmark-interval",
        type=float,
        default=15.0,
        help="seconds between BOOKMARK events on watches that allow them (default 15)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util
    import sys

    from codeflare.apiserver.server import ApiServer
    from codeflare.cli.output import EXIT_FAILURE

    for module, what in (
        ("cel", "the CEL evaluator for CRD x-kubernetes-validations"),
        ("re2", "RE2 for CRD patterns"),
    ):
        if importlib.util.find_spec(module) is None:
            # Refused before serving: a server that could not evaluate CRD validation rules would
            # either accept what a cluster refuses or fail writes that it should judge, and one
            # without RE2 would run client-supplied patterns on a backtracking engine.
            print(
                f"codeflare server: {what} is not installed: "
                "pip install 'codeflare[server]' (local mode's 'codeflare[local]' includes it)",
                file=sys.stderr,
            )
            return EXIT_FAILURE

    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    server = ApiServer(
        args.state_dir,
        args.host,
        args.port,
        tls=not args.insecure_http,
        tokens_file=args.tokens_file,
        authorization=args.authorization,
        history=args.history,
        bookmark_interval=args.bookmark_interval,
    )
    print(
        f"codeflare API server: state in {args.state_dir}; kubeconfig will be at {server.kubeconfig_path}",
        flush=True,
    )
    asyncio.run(server.serve_forever())
    return 0
