"""HTML of the dashboard: the page layout, the My work and Nodes views, the banner.

Pages are server-rendered fragments that htmx swaps in when the server pushes a new version
over server-sent events (``sse-swap``); the browser runs no application code of ours. Every
value from the API is escaped here (:func:`e`), styles come only from the packaged stylesheet
and geometry from SVG attributes (the Content-Security-Policy allows no inline style or script),
and no credential is ever written into a page: only the per-process CSRF token, which grants
nothing without the browser's same-origin request. The Queues view lives in :mod:`.queue_pages`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from html import escape
from urllib.parse import quote, urlencode

from codeflare.dashboard.estimates import StartEstimate
from codeflare.dashboard.nodes import SHOWN_RESOURCES, NodesView
from codeflare.dashboard.queues import ZERO, shown
from codeflare.dashboard.work import VERBS, WorkRow

VIEWS = (("work", "/", "My work"), ("queues", "/queues", "Queues"), ("nodes", "/nodes", "Nodes"))


def e(value: object) -> str:
    return escape(str(value), quote=True)


def layout(
    view: str, title: str, body: str, banner: str, csrf: str, namespace: str = "", events: str = ""
) -> str:
    """A whole page; its ``main`` and banner are replaced by what ``events`` (``/events/<view>``) pushes."""
    query = f"?{urlencode({'namespace': namespace})}" if namespace else ""
    events = events or f"/events/{view}{query}"
    current = ' aria-current="page"'
    nav = "".join(
        f'<a href="{path}{query}"{current if name == view else ""}>{label}</a>' for name, path, label in VIEWS
    )
    headers = e(json.dumps({"X-CSRF-Token": csrf}))
    config = e(json.dumps({"includeIndicatorStyles": False, "allowEval": False, "allowScriptTags": False}))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="{config}">
<title>{e(title)} - CodeFlare dashboard</title>
<link rel="stylesheet" href="/static/dashboard.css">
<script src="/static/htmx.min.js"></script><script src="/static/htmx-ext-sse.min.js"></script>
</head><body hx-headers="{headers}">
<a class="skip" href="#main">Skip to content</a>
<header><span class="brand">CodeFlare</span><nav aria-label="Views">{nav}</nav></header>
<div hx-ext="sse" sse-connect="{e(events)}">
<div id="banner" sse-swap="banner" role="status" aria-live="polite">{banner}</div>
<main id="main" sse-swap="view" tabindex="-1">{body}</main>
</div>
<div id="action-result" role="alert" aria-live="assertive"></div>
</body></html>"""


def thead(*names: str) -> str:
    """A table head row of column headers."""
    return "<thead><tr>" + "".join(f'<th scope="col">{e(n)}</th>' for n in names) + "</tr></thead>"


def banner(problems: Iterable[str]) -> str:
    items = "".join(f"<p>{e(p)}</p>" for p in problems)
    return f'<div class="banner" data-problems="1">{items}</div>' if items else ""


def refused(what: str) -> str:
    return f'<p class="refused">You may not read {e(what)}: the API server refused (403 Forbidden).</p>'


def _workers(row: WorkRow) -> str:
    if row.workers_desired is None:
        return "-"
    ready = "-" if row.workers_ready is None else row.workers_ready
    return f"{ready}/{row.workers_desired}"


def _action_buttons(row: WorkRow, permissions: Mapping[tuple[str, str, str], bool]) -> str:
    out = []
    for action, what in row.actions.items():
        allowed = permissions.get((row.namespace, row.kind, VERBS[action]))
        note = "" if allowed is not False else " (not permitted)"
        mark = "" if allowed is not False else ' data-allowed="false" title="your RBAC does not allow this"'
        path = "/actions/" + "/".join(quote(p, safe="") for p in (action, row.kind, row.namespace, row.name))
        confirm = f"{action} {row.kind} {row.namespace}/{row.name}: {what}?"
        out.append(
            f'<button type="button" class="action" hx-post="{e(path)}" hx-target="#action-result" '
            f'hx-confirm="{e(confirm)}" '
            f'aria-label="{e(action)} {e(row.kind)} {e(row.namespace)}/{e(row.name)}{note}"{mark}'
            f">{e(action)}{note}</button>"
        )
    return " ".join(out)


def _links(row: WorkRow) -> str:
    links = []
    if row.dashboard:
        url = row.dashboard if "://" in row.dashboard else f"http://{row.dashboard}"
        links.append(f'<a href="{e(url)}" rel="noopener noreferrer" target="_blank">Ray dashboard</a>')
    if row.kind == "RayJob":
        links.append(f'<a href="/logs/{quote(row.namespace, safe="")}/{quote(row.name, safe="")}">logs</a>')
    return " ".join(links) or "-"


def estimate_cell(estimate: StartEstimate) -> str:
    """The estimated start and what it waits for (the exact time and basis on hover); ``-`` for none."""
    if not estimate.words:
        return "-"
    after = f' <span class="after">after {e(estimate.waiting_for)}</span>' if estimate.waiting_for else ""
    return f'<span class="estimate" title="{e(estimate.title)}">{e(estimate.words)}</span>{after}'


def work_view(
    rows: Iterable[WorkRow],
    now: float,
    refused_kinds: Iterable[str] = (),
    permissions: Mapping[tuple[str, str, str], bool] | None = None,
) -> str:
    """The My work table; ``permissions`` ((namespace, kind, verb) -> allowed) marks actions the
    user's RBAC refuses (they stay pressable: the server's answer is shown)."""
    body = []
    for row in rows:
        waiting = ""
        if row.reason:
            where = f" in {e(row.cluster_queue)}" if row.cluster_queue else ""
            waiting = f'<span class="reason" title="{e(row.reason)}">{e(row.message or row.reason)}</span>'
            if row.position is not None:
                waiting = f'<span class="position">#{row.position}{where}</span> {waiting}'
        body.append(
            f'<tr data-key="{e(row.key)}"><td>{e(row.namespace)}</td><th scope="row">{e(row.name)}</th>'
            f'<td>{e(row.kind)}</td><td><span class="state state-{e(row.state.lower())}">'
            f"{e(row.state)}</span></td>"
            f"<td>{e(row.queue or '-')}</td><td>{waiting or '-'}</td><td>{estimate_cell(row.estimate)}</td>"
            f"<td>{e(_workers(row))}</td><td>{e(row.age(now))}</td><td>{_links(row)}</td>"
            f"<td>{_action_buttons(row, permissions or {})}</td></tr>"
        )
    notes = "".join(refused(k) for k in refused_kinds)
    if not body:
        return (
            f'<h1>My work</h1>{notes}<p class="empty">No RayClusters, RayJobs or AppWrappers you can see.</p>'
        )
    head = thead(
        "Namespace",
        "Name",
        "Kind",
        "State",
        "Queue",
        "Waiting",
        "Est. start",
        "Workers",
        "Age",
        "Links",
        "Actions",
    )
    return (
        f'<h1>My work</h1>{notes}<div class="scroll"><table class="work"><caption>RayClusters, RayJobs and '
        f"AppWrappers in the namespaces you can read</caption>{head}"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _resources(values: Mapping[str, Decimal]) -> str:
    return ", ".join(f"{r} {shown(values.get(r, ZERO), r)}" for r in SHOWN_RESOURCES if r in values) or "-"


def nodes_view(view: NodesView) -> str:
    if view.nodes_refused:
        return "<h1>Nodes</h1>" + refused("Nodes")
    rows = "".join(
        f'<tr><th scope="row">{e(n.name)}</th><td>{"Ready" if n.ready else "NotReady"}'
        f"{'' if n.schedulable else ', SchedulingDisabled'}</td><td>{e(_resources(n.allocatable))}</td>"
        f"<td>{e(_resources(n.allocated))}</td><td>{n.pods}</td><td>{e(n.gpu_product or '-')}</td>"
        f"<td>{e(n.reserved_for or '-')}</td></tr>"
        for n in view.nodes
    )
    gpus = "".join(
        f'<tr><th scope="row">{e(product)}</th><td>{shown(total)}</td><td>{shown(used)}</td></tr>'
        for product, (total, used) in view.gpus_by_product.items()
    )
    scale = "".join(
        f'<tr><th scope="row">{e(r.group)}</th><td>{e(r.workload)}</td><td>{r.nodes}</td>'
        f"<td>{e(r.requested_at)}</td><td>{e(r.released_at or '-')}</td></tr>"
        for r in view.scale_out
    )
    nodes_head = thead(
        "Node", "Status", "Allocatable", "Allocated (pod requests)", "Pods", "GPU product", "Reserved for"
    )
    gpu_head = thead("Product", "Allocatable", "Allocated")
    scale_head = thead("Node group", "Workload", "Nodes", "Requested", "Released")
    return (
        '<h1>Nodes</h1><div class="scroll"><table><caption>Capacity and allocation per node</caption>'
        f"{nodes_head}<tbody>{rows}</tbody></table></div><h2>GPUs by product</h2>"
        + (
            f"<table>{gpu_head}<tbody>{gpus}</tbody></table>"
            if gpus
            else '<p class="empty">No GPUs on the nodes you can see.</p>'
        )
        + "<h2>Scale-out requests in flight</h2>"
        + (f"<table>{scale_head}<tbody>{scale}</tbody></table>" if scale else '<p class="empty">None.</p>')
    )


def log_page(namespace: str, name: str, csrf: str) -> str:
    stream = f"/logs/{quote(namespace, safe='')}/{quote(name, safe='')}/stream"
    body = (
        f'<h1>Logs of RayJob {e(namespace)}/{e(name)}</h1><div hx-ext="sse" sse-connect="{e(stream)}">'
        f'<pre id="log" class="log" sse-swap="output" hx-swap="beforeend" tabindex="0" '
        f'aria-label="job output" aria-live="off"></pre><p id="log-end" sse-swap="end"></p></div>'
    )
    return layout("work", f"logs {namespace}/{name}", body, "", csrf, events="/events/banner")


def outcome(ok: bool, code: int, message: str) -> str:
    if ok:
        return f'<p class="ok">{e(message)}</p>'
    label = "Forbidden" if code == 403 else "Refused"
    return f'<p class="error" data-code="{code}"><strong>{label} ({code}):</strong> {e(message)}</p>'
