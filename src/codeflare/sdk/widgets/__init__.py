"""Notebook widgets over the dashboard's data layer: clusters and jobs with actions, queues, live status.

:func:`view_clusters` shows the My work rows (:mod:`codeflare.dashboard.work`) with a button per
action; :func:`view_queues` the Queues view (:mod:`codeflare.dashboard.queues`);
:func:`cluster_widget` apply/down buttons and the state of one :class:`~codeflare.sdk.Cluster`;
:func:`status_display` the live status of a wait (``Cluster.wait_ready``) or of a queued job
(:func:`job_status`: reason, position, workers). Each reads one snapshot through the SDK's
client (one list call per kind), so it shows what the user may see. Inside a notebook with
ipywidgets (extra ``notebook``) they return (and display) widgets; anywhere else the same calls
print rich tables and return the rows. Actions are the SDK's own calls; a refusal is shown with
the server's message. Importing this module imports neither ipywidgets nor rich.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from codeflare.dashboard.queues import QueuesView, queues_view, shown
from codeflare.dashboard.snapshot import Snapshot, read_snapshot
from codeflare.dashboard.work import WorkRow, find_row, work_rows
from codeflare.kube import errors
from codeflare.sdk.client import Client

if TYPE_CHECKING:
    from codeflare.sdk.cluster import Cluster

log = logging.getLogger(__name__)

WORK_COLUMNS = ("Namespace", "Name", "Kind", "State", "Queue", "Waiting", "Workers", "Dashboard")


def in_notebook() -> bool:
    """Whether widgets can be shown: ipywidgets importable and a Jupyter kernel running this code."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def snapshot(client: Client, namespace: str | None = None) -> Snapshot:
    return read_snapshot(client.kube, [namespace or client.namespace], now=time.time())


def _waiting(row: WorkRow) -> str:
    if not row.reason:
        return "-"
    where = f"#{row.position} in {row.cluster_queue}: " if row.position is not None else ""
    return where + (row.message or row.reason)


def _workers(row: WorkRow) -> str:
    return "-" if row.workers_desired is None else f"{row.workers_ready or 0}/{row.workers_desired}"


def work_cells(row: WorkRow) -> tuple[str, ...]:
    return (
        row.namespace,
        row.name,
        row.kind,
        row.state,
        row.queue or "-",
        _waiting(row),
        _workers(row),
        row.dashboard or "-",
    )


def _print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for cells in rows:
        table.add_row(*cells)
    Console().print(table)


def _say(text: str) -> None:
    from rich.console import Console

    Console().print(text, markup=False, highlight=False)


def _display(widget: Any) -> Any:
    from IPython.display import display

    display(widget)
    return widget


# -- actions: the dashboard's, with this client's credentials --------------------------------------
def act(client: Client, row: WorkRow, action: str) -> str:
    """Carry out ``action`` on ``row``'s object; the outcome in words (a refusal as the server said it).

    Runs :func:`codeflare.dashboard.actions.perform` on a loop of its own in a worker thread, so it
    works in a notebook whose own loop is running."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from codeflare.dashboard.actions import perform
    from codeflare.kube.client import AsyncKube

    async def run() -> str:
        async with AsyncKube(client.connection) as kube:
            outcome = await perform(kube, action, row.kind, row.namespace, row.name)
        return outcome.message if outcome.ok else f"Refused ({outcome.code}): {outcome.message}"

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


# -- views ------------------------------------------------------------------------------------------
def view_clusters(namespace: str | None = None, client: Client | None = None) -> Any:
    """Clusters, jobs and AppWrappers with their state and actions (a widget, or a printed table)."""
    client = client or Client.default()
    rows = work_rows(snapshot(client, namespace))
    if not in_notebook():
        _print_table("My work", WORK_COLUMNS, [work_cells(r) for r in rows])
        return rows
    return _display(work_widget(client, rows, lambda: work_rows(snapshot(client, namespace))))


def work_widget(client: Client, rows: Sequence[WorkRow], reread: Callable[[], Sequence[WorkRow]]) -> Any:
    import ipywidgets as w

    outcome = w.HTML(value="", layout=w.Layout(min_height="1.5em"))
    box = w.VBox()

    def build(current: Sequence[WorkRow]) -> None:
        for line in box.children:  # the rows drawn before: their models go, not only their view
            if line is not outcome:
                _close(line)
        header = w.HBox([w.HTML(f"<b>{c}</b>", layout=w.Layout(width="11%")) for c in WORK_COLUMNS])
        lines = [header]
        for row in current:
            cells = [w.HTML(_escape(c), layout=w.Layout(width="11%")) for c in work_cells(row)]
            buttons = [_button(row, action, what) for action, what in row.actions.items()]
            lines.append(w.HBox([*cells, *buttons]))
        if not current:
            lines.append(w.HTML("No RayClusters, RayJobs or AppWrappers you can see."))
        box.children = [*lines, outcome]

    def _button(row: WorkRow, action: str, what: str) -> Any:
        button = w.Button(description=action, tooltip=f"{action} {row.namespace}/{row.name}: {what}")

        def clicked(_: Any) -> None:
            outcome.value = _escape(act(client, row, action))
            build(reread())

        button.on_click(clicked)
        return button

    build(rows)
    return box


def _close(widget: Any) -> None:
    for child in getattr(widget, "children", ()):
        _close(child)
    widget.close()


def _escape(text: str) -> str:
    from html import escape

    return escape(text)


def queue_rows(view: QueuesView) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for cq in view.cluster_queues:
        for bar in cq.bars:
            out.append(
                (
                    cq.name,
                    cq.cohort or "-",
                    bar.flavor,
                    bar.resource,
                    shown(bar.nominal, bar.resource),
                    shown(bar.in_use, bar.resource),
                    shown(bar.borrowed, bar.resource),
                    shown(bar.lent, bar.resource),
                    str(cq.pending),
                    str(cq.admitted),
                )
            )
    return out


QUEUE_COLUMNS = (
    "ClusterQueue",
    "Cohort",
    "Flavor",
    "Resource",
    "Nominal",
    "In use",
    "Borrowed",
    "Lent",
    "Pending",
    "Admitted",
)


def view_queues(namespace: str | None = None, client: Client | None = None) -> Any:
    """ClusterQueues with quota per flavor and resource, and pending workloads in order."""
    client = client or Client.default()
    view = queues_view(snapshot(client, namespace))
    rows = queue_rows(view)
    pending = [
        (str(p.position or "-"), p.cluster_queue, f"{p.namespace}/{p.name}", p.message)
        for cq in view.cluster_queues
        for p in cq.waiting
    ]
    if not in_notebook():
        _print_table("Queues", QUEUE_COLUMNS, rows)
        _print_table("Pending workloads", ("Position", "ClusterQueue", "Workload", "Reason"), pending)
        return view
    import ipywidgets as w

    def table(columns: Sequence[str], body: Sequence[Sequence[str]]) -> Any:
        head = "".join(f"<th>{_escape(c)}</th>" for c in columns)
        cells = "".join("<tr>" + "".join(f"<td>{_escape(c)}</td>" for c in r) + "</tr>" for r in body)
        return w.HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")

    quota = w.IntProgress
    bars = [
        quota(value=int(b.percent(b.in_use)), max=100, description=f"{cq.name} {b.resource}"[:20])
        for cq in view.cluster_queues
        for b in cq.bars
    ]
    return _display(
        w.VBox(
            [
                table(QUEUE_COLUMNS, rows),
                *bars,
                table(("Position", "ClusterQueue", "Workload", "Reason"), pending),
            ]
        )
    )


# -- one cluster, one job ---------------------------------------------------------------------------
def cluster_widget(cluster: Cluster) -> Any:
    """Apply and down buttons with the cluster's state (a printed line outside notebooks)."""
    state = cluster.status().name.lower()
    if not in_notebook():
        _say(f"{cluster.namespace}/{cluster.name}: {state}")
        return state
    import ipywidgets as w

    label = w.HTML(f"<b>{_escape(cluster.namespace)}/{_escape(cluster.name)}</b>: {state}")
    outcome = w.HTML("")

    def run(action: str) -> None:
        try:
            cluster.apply() if action == "apply" else cluster.down()
            outcome.value = f"{action}: done"
        except errors.KubeError as exc:
            outcome.value = _escape(f"{action}: {exc.reason or 'Refused'} ({exc.status}): {exc.message}")
        label.value = (
            f"<b>{_escape(cluster.namespace)}/{_escape(cluster.name)}</b>: {cluster.status().name.lower()}"
        )

    apply_button, down_button = w.Button(description="apply"), w.Button(description="down")
    apply_button.on_click(lambda _: run("apply"))
    down_button.on_click(lambda _: run("down"))
    return _display(w.VBox([label, w.HBox([apply_button, down_button]), outcome]))


class WidgetStatus:
    """:class:`~codeflare.sdk.progress.StatusDisplay`'s interface, drawn as a live widget."""

    def __init__(self, subject: str) -> None:
        import ipywidgets as w

        self.subject = subject
        self.widget = w.HTML(f"<b>{_escape(subject)}</b>: starting")
        self.state, self.detail = "starting", ""

    def __enter__(self) -> WidgetStatus:
        _display(self.widget)
        return self

    def update(self, state: str, detail: str = "") -> None:
        self.state, self.detail = state, detail
        extra = f" - {_escape(detail)}" if detail else ""
        self.widget.value = f"<b>{_escape(self.subject)}</b>: {_escape(state)}{extra}"

    def __exit__(self, *exc: object) -> None:
        return None


def status_display(subject: str, enabled: bool = True) -> Any:
    """A widget in notebooks, else the SDK's terminal display; for ``wait_ready`` and job waits."""
    if enabled and in_notebook():
        return WidgetStatus(subject)
    from codeflare.sdk.progress import StatusDisplay

    return StatusDisplay(subject, enabled)


def job_status(name: str, namespace: str | None = None, client: Client | None = None) -> Any:
    """A queued (or running) RayJob's state, reason, position and workers, from the same rows."""
    client = client or Client.default()
    ns = namespace or client.namespace
    row = find_row(work_rows(snapshot(client, ns)), "RayJob", ns, name)
    if row is None:
        raise errors.NotFound(f'RayJob "{name}" not found', kind="RayJob", name=name, namespace=ns)
    text = f"{row.state} - {_waiting(row)} - workers {_workers(row)}"
    if not in_notebook():
        _say(f"{ns}/{name}: {text}")
        return row
    import ipywidgets as w

    return _display(w.HTML(f"<b>{_escape(ns)}/{_escape(name)}</b>: {_escape(text)}"))
