"""What the ``cluster``, ``job`` and ``queue`` commands share: connection options, output, exit codes.

Connection: ``--home DIR`` picks local mode in DIR, ``--kubeconfig FILE`` a kubeconfig, neither
:meth:`Client.default` (in-cluster, ``$KUBECONFIG``/~/.kube/config, then local mode).
Output: a rich table for people (``-o table``, the default) or ``-o json|yaml`` for scripts.
Errors: :func:`guarded` turns every error the SDK raises on purpose into a message on stderr and
an exit code (never a traceback): 2 for input the SDK or the server refused (the message names
the field), 3 for a timeout, 1 for everything else the system reported (the server's words).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeflare.errors import CodeFlareError, WaitTimeout

if TYPE_CHECKING:
    from codeflare.sdk.client import Client

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_TIMEOUT = 0, 1, 2, 3

Command = Callable[[argparse.Namespace], int]


class UsageError(CodeFlareError):
    """Options that do not go together (exit 2)."""


def common_options() -> argparse.ArgumentParser:
    """A parent parser with the connection, namespace and output options every action takes."""
    parent = argparse.ArgumentParser(add_help=False)
    where = parent.add_argument_group("connection")
    pick = where.add_mutually_exclusive_group()
    pick.add_argument("--home", type=Path, help="use local mode in this home directory")
    pick.add_argument("--kubeconfig", type=Path, help="use this kubeconfig file")
    where.add_argument("-n", "--namespace", help="namespace (default: the connection's, usually 'default')")
    parent.add_argument(
        "-o", "--output", choices=("table", "json", "yaml"), default="table",
        help="table for people (default), json or yaml for scripts",
    )
    return parent


def add_wait_options(parser: argparse.ArgumentParser, until: str, timeout: float) -> None:
    """``--wait`` (until ``until``) and ``--timeout``, the seconds it waits at most (exit 3 after)."""
    parser.add_argument("--wait", action="store_true", help=f"wait until {until}")
    help_text = f"seconds --wait waits (default {timeout:g})"
    parser.add_argument("--timeout", type=float, default=timeout, help=help_text)


def action_group(
    subparsers: Any, name: str, doc: str | None, *, summary: str, description: str
) -> tuple[Any, argparse.ArgumentParser]:
    """Add the command group ``codeflare NAME ACTION`` (epilog: ``doc`` after its first paragraph);
    return its action subparsers and the :func:`common_options` parent every action takes."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=doc.split("\n\n", 1)[1] if doc else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)
    return sub, common_options()


def connect(args: argparse.Namespace) -> Client:
    """The one client every SDK call of this command uses."""
    from codeflare.sdk.auth import KubeConfigFileAuthentication, LocalAuthentication
    from codeflare.sdk.client import Client

    try:
        if getattr(args, "home", None) is not None:
            return LocalAuthentication(args.home).login()
        if getattr(args, "kubeconfig", None) is not None:
            return KubeConfigFileAuthentication(args.kubeconfig).login()
        return Client.default()
    except (OSError, ValueError) as exc:
        raise ConnectionProblem(f"cannot connect: {exc}") from exc


class ConnectionProblem(CodeFlareError):
    """No usable connection (local mode not running, unreadable kubeconfig): exit 1."""


def namespace_of(args: argparse.Namespace, client: Client) -> str:
    return str(args.namespace or client.namespace)


def _is_validation(exc: BaseException) -> bool:
    from codeflare.kube import errors

    if isinstance(exc, (UsageError, ValueError)) and not isinstance(exc, errors.KubeError):
        return True  # ConfigurationError, ManifestError (both ValueErrors) and our own usage errors
    return isinstance(exc, (errors.Invalid, errors.BadRequest))


def exit_code_for(exc: CodeFlareError) -> int:
    if isinstance(exc, WaitTimeout):
        return EXIT_TIMEOUT
    if _is_validation(exc):
        return EXIT_USAGE
    return EXIT_FAILURE


def error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def guarded(command: Command) -> Command:
    """Run ``command``; report expected errors as one message on stderr and an exit code."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except CodeFlareError as exc:
            error(_message(exc))
            return exit_code_for(exc)

    return run


def _message(exc: CodeFlareError) -> str:
    from codeflare.kube import errors

    text = str(exc)
    if isinstance(exc, errors.KubeError) and exc.causes:
        fields = "; ".join(f"{c.get('field', '')}: {c.get('message', '')}".strip(": ") for c in exc.causes)
        if fields and fields not in text:
            text = f"{text} ({fields})"
    return text


# -- output -------------------------------------------------------------------------------------
def emit(args: argparse.Namespace, data: Any, table: Callable[[], None]) -> None:
    """``data`` as json/yaml when asked, else whatever ``table`` prints for people."""
    if args.output == "json":
        print(json.dumps(data, indent=2, default=str))
    elif args.output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=False, default_flow_style=False), end="")
    else:
        table()


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plain-looking rich table (wide enough not to wrap in pipes and CI logs)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, box=None, header_style="bold", pad_edge=False, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("-" if cell in (None, "") else str(cell) for cell in row))
    Console(width=max(120, Console().width), highlight=False).print(table)


Column = str | Callable[[dict[str, Any]], Any]


def emit_rows(
    args: argparse.Namespace, rows: list[dict[str, Any]], columns: Mapping[str, Column], empty: str
) -> None:
    """``rows`` as json/yaml when asked, else a table or ``empty`` when there are none.

    ``columns`` maps each header to the row key it shows (or to a function of the row).
    """

    def cell(row: dict[str, Any], column: Column) -> Any:
        return row[column] if isinstance(column, str) else column(row)

    def table() -> None:
        if not rows:
            say(args, empty)
            return
        print_table(None, tuple(columns), ([cell(row, c) for c in columns.values()] for row in rows))

    emit(args, rows, table)


def print_fields(pairs: Iterable[tuple[str, Any]]) -> None:
    """``key: value`` lines for one object (``describe``/``status``)."""
    items = list(pairs)
    width = max((len(key) for key, _ in items), default=0)
    for key, value in items:
        print(f"{key + ':':<{width + 1}} {'-' if value in (None, '') else value}")


def say(args: argparse.Namespace, message: str) -> None:
    """A progress line for people; stays off stdout when the output is for scripts."""
    print(message, file=sys.stderr if args.output != "table" else sys.stdout)
