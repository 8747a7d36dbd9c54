"""HTML of the Queues view: quota bars, the cohort tree, pending workloads in order, hour charts.

A quota bar is an SVG (geometry in attributes, so the strict Content-Security-Policy holds) with
an ``aria-label`` saying every number it draws, and the same numbers in the table beside it: the
picture never carries information the text does not. Charts show the last hour the dashboard
has kept (:mod:`.history`). Escaping as in :mod:`.pages`.
"""

from __future__ import annotations

from codeflare.dashboard.history import WINDOW_S, History, admissions, polyline
from codeflare.dashboard.pages import e, estimate_cell, refused, thead
from codeflare.dashboard.queues import ClusterQueueView, QueuesView, QuotaBar, shown

CHART_W, CHART_H = 240, 48


def _bar(bar: QuotaBar) -> str:
    use = min(bar.in_use, bar.nominal)
    label = (
        f"{bar.resource} in flavor {bar.flavor}: nominal {shown(bar.nominal, bar.resource)}, in use "
        f"{shown(bar.in_use, bar.resource)}, borrowed {shown(bar.borrowed, bar.resource)}, lent "
        f"{shown(bar.lent, bar.resource)}, reserved {shown(bar.reserved, bar.resource)}"
    )
    nominal_at = bar.percent(bar.nominal)
    return (
        '<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" '
        f'aria-label="{e(label)}">'
        f'<rect class="nominal" x="0" y="0" width="{nominal_at:.2f}" height="10"/>'
        f'<rect class="reserved" x="0" y="0" width="{bar.percent(bar.reserved):.2f}" height="10"/>'
        f'<rect class="in-use" x="0" y="2" width="{bar.percent(use):.2f}" height="6"/>'
        f'<rect class="borrowed" x="{nominal_at:.2f}" y="2" '
        f'width="{bar.percent(bar.borrowed):.2f}" height="6"/>'
        f'<rect class="lent" x="{max(0.0, nominal_at - bar.percent(bar.lent)):.2f}" y="8" '
        f'width="{bar.percent(bar.lent):.2f}" height="2"/></svg>'
    )


def _bars(cq: ClusterQueueView) -> str:
    if not cq.bars:
        return '<p class="empty">No quota defined.</p>'
    rows = "".join(
        f'<tr><th scope="row">{e(b.flavor)}</th><td>{e(b.resource)}</td><td class="bar-cell">{_bar(b)}</td>'
        + "".join(
            f"<td>{e(shown(v, b.resource))}</td>"
            for v in (b.nominal, b.in_use, b.reserved, b.borrowed, b.lent, b.borrowing_limit, b.lending_limit)
        )
        + "</tr>"
        for b in cq.bars
    )
    head = thead(
        "Flavor",
        "Resource",
        "Quota",
        "Nominal",
        "In use",
        "Reserved",
        "Borrowed",
        "Lent",
        "Borrowing limit",
        "Lending limit",
    )
    return f'<div class="scroll"><table class="quota">{head}<tbody>{rows}</tbody></table></div>'


def _waiting(cq: ClusterQueueView) -> str:
    if not cq.waiting:
        return '<p class="empty">No pending workloads.</p>'
    rows = "".join(
        f'<tr data-workload="{e(p.namespace)}/{e(p.name)}">'
        f"<td>{'-' if p.position is None else p.position}</td><td>{e(p.namespace)}</td>"
        f'<th scope="row">{e(p.name)}</th><td>{e(p.owner or "-")}</td><td>{e(p.local_queue)}</td>'
        f'<td>{p.priority}</td><td><span class="reason" title="{e(p.reason)}">{e(p.message)}</span></td>'
        f"<td>{estimate_cell(p.estimate)}</td></tr>"
        for p in cq.waiting
    )
    return (
        '<table class="pending"><caption>Pending workloads in admission order</caption>'
        + thead("Position", "Namespace", "Workload", "Job", "LocalQueue", "Priority", "Reason", "Est. start")
        + f"<tbody>{rows}</tbody></table>"
    )


def _charts(cq: ClusterQueueView, history: History, now: float) -> str:
    samples = history.of(cq.name)
    usage = polyline(samples, "used_percent", now, WINDOW_S, CHART_W, CHART_H, top=100.0)
    admitted = polyline(samples, "admitted", now, WINDOW_S, CHART_W, CHART_H)
    last = samples[-1].used_percent if samples else 0.0
    return (
        '<div class="charts">'
        f'<figure><svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="usage over the last hour, '
        f'now {last:.0f}% of nominal quota"><polyline class="line" points="{usage}"/></svg>'
        f"<figcaption>Usage, last hour (fullest resource, % of nominal; now {last:.0f}%)"
        "</figcaption></figure>"
        f'<figure><svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="admitted workloads over the '
        f'last hour, {admissions(samples)} admissions"><polyline class="line" points="{admitted}"/></svg>'
        f"<figcaption>Admitted workloads, last hour ({admissions(samples)} admissions)"
        "</figcaption></figure></div>"
    )


def _cohorts(view: QueuesView) -> str:
    if not view.cohorts:
        return '<p class="empty">No cohorts: every ClusterQueue stands alone.</p>'
    items = "".join(
        f'<li><span class="cohort">{e(name)}</span><ul>'
        + "".join(f'<li><a href="#cq-{e(m)}">{e(m)}</a></li>' for m in members)
        + "</ul></li>"
        for name, members in view.cohorts.items()
    )
    return f'<ul class="tree" aria-label="cohort tree">{items}</ul>'


def queues_view(view: QueuesView, history: History, now: float) -> str:
    parts = ["<h1>Queues</h1>"]
    if view.cluster_queues_refused:
        parts.append(refused("ClusterQueues"))
    for cq in view.cluster_queues:
        state = "Active" if cq.active else "Inactive"
        parts.append(
            f'<section class="cq" id="cq-{e(cq.name)}" aria-labelledby="cq-{e(cq.name)}-h">'
            f'<h2 id="cq-{e(cq.name)}-h">ClusterQueue {e(cq.name)}</h2>'
            f'<p class="meta"><span class="state state-{state.lower()}">{state}</span> '
            f"{e(cq.active_message)} - cohort {e(cq.cohort or '-')} - {e(cq.strategy)} - "
            f"pending {cq.pending} - admitted {cq.admitted}</p>"
            f"{_bars(cq)}{_charts(cq, history, now)}{_waiting(cq)}</section>"
        )
    parts.append("<h2>Cohorts</h2>" + _cohorts(view))
    lq_rows = "".join(
        f'<tr><td>{e(q.namespace)}</td><th scope="row">{e(q.name)}{" (default)" if q.default else ""}</th>'
        f"<td>{e(q.cluster_queue)}</td><td>{q.pending}</td><td>{q.admitted}</td></tr>"
        for q in view.local_queues
    )
    parts.append(
        "<h2>LocalQueues</h2><table>"
        + thead("Namespace", "Name", "ClusterQueue", "Pending", "Admitted")
        + f"<tbody>{lq_rows}</tbody></table>"
        if lq_rows
        else '<h2>LocalQueues</h2><p class="empty">No LocalQueues you can see.</p>'
    )
    return "".join(parts)
