"""The ``codeflare`` command: one entry point with a subcommand per concern.

Subcommands register themselves from small modules so that ``codeflare --help`` stays fast:
each module's heavy imports happen only when its command runs. Exit codes: 0 success,
1 failure reported by the system, 2 usage error, 3 timeout, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from codeflare.cli.output import EXIT_USAGE

# subcommand -> module exposing register(subparsers)
COMMANDS = {
    "server": "codeflare.cli.server_cmd",
    "operator": "codeflare.cli.operator_cmd",
    "local": "codeflare.cli.local_cmd",
    "demo": "codeflare.cli.demo_cmd",
    "cluster": "codeflare.cli.cluster_cmd",
    "job": "codeflare.cli.job_cmd",
    "queue": "codeflare.cli.queue_cmd",
    "dashboard": "codeflare.cli.dashboard_cmd",
}

EXIT_INTERRUPTED = 130  # as a shell reports SIGINT; the other exit codes live in cli.output


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codeflare",
        description="Run distributed ML workloads (Ray clusters and jobs) on shared Kubernetes capacity.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        importlib.import_module(module).register(subparsers, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        result: int = args.func(args)
        return result
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
