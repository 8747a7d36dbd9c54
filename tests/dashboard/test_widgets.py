"""The notebook widgets, executed in a real Jupyter kernel (nbclient) against a real API server.

The notebook builds the widgets as a user would and clicks one button; the test then reads the
widget models the kernel left in the notebook's widget state (what a browser would render) and
asserts on them. Outside a notebook the same calls print tables: tested here in-process.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from codeflare.kube import config, kinds
from codeflare.kube.client import Kube
from codeflare.sdk.client import Client
from tests.support import queue_objects as qo
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import ensure_namespace, install_crds

CELLS = [
    "from codeflare.kube import config\nfrom codeflare.sdk.client import Client\n"
    "client = Client(config.from_kubeconfig({kubeconfig!r}))",
    "from codeflare.sdk.widgets import in_notebook, view_clusters, view_queues\nassert in_notebook()\n"
    "work = view_clusters('team-w', client)",
    "queues = view_queues('team-w', client)",
    "from codeflare.sdk.widgets import status_display\n"
    "with status_display('job team-w/kept') as live:\n"
    "    live.update('queued', 'insufficient quota for cpu')",
    "row = next(r for r in work.children if 'doomed' in str([getattr(c, 'value', '') for c in r.children]))\n"
    "down = [c for c in row.children if getattr(c, 'description', '') == 'down'][0]\ndown.click()",
]


@pytest.fixture(scope="module")
def kube(apiserver: ServerProcess) -> Iterator[Kube]:
    with Kube(config.from_kubeconfig(apiserver.kubeconfig)) as k:
        install_crds(k)
        ensure_namespace(k, "team-w")
        k.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
        k.create(kinds.CLUSTER_QUEUE, qo.cluster_queue("cq-w", "3", cohort="lab"))
        k.create(kinds.LOCAL_QUEUE, qo.local_queue("queue", "team-w", "cq-w"))
        for name in ("kept", "doomed"):
            k.create(kinds.RAYCLUSTER, qo.raycluster(name, "team-w", cpu="1"))
        yield k


def widget_models(notebook: Any, cell: int) -> list[dict[str, Any]]:
    """The models of the widget cell ``cell`` displayed, as they are now: its root and every model
    its ``children`` reach (closed ones, drawn before a redraw, are no longer reachable)."""
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    shown = [
        o
        for o in notebook.cells[cell].outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    todo = [shown[0]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]]
    out = []
    while todo:
        model = state[todo.pop(0)]
        out.append(model["state"] | {"_model": model["model_name"]})
        todo.extend(ref.removeprefix("IPY_MODEL_") for ref in model["state"].get("children", []))
    return out


def test_widgets_in_a_notebook_show_clusters_queues_and_carry_out_an_action(
    apiserver: ServerProcess, kube: Kube
) -> None:
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(c.format(kubeconfig=str(apiserver.kubeconfig))) for c in CELLS
    ]
    NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=True).execute()

    models = widget_models(notebook, 1)
    html = " ".join(m.get("value", "") for m in models if m["_model"] == "HTMLModel")
    assert "kept" in html and "Queued" in html
    buttons = [m["description"] for m in models if m["_model"] == "ButtonModel"]
    assert buttons == ["down"]  # redrawn after the click: only the cluster that is left
    assert "deleted RayCluster team-w/doomed" in html
    assert "doomed" not in html.replace("deleted RayCluster team-w/doomed", "")
    (live,) = widget_models(notebook, 3)  # what Cluster.wait_ready and RayJob.wait draw in a notebook
    assert live["_model"] == "HTMLModel" and "queued - insufficient quota for cpu" in live["value"]
    queue_models = widget_models(notebook, 2)
    bars = [m for m in queue_models if m["_model"] == "IntProgressModel"]
    assert [b["description"] for b in bars] == ["cq-w cpu"] and bars[0]["max"] == 100
    queue_html = " ".join(m.get("value", "") for m in queue_models if m["_model"] == "HTMLModel")
    assert "cq-w" in queue_html and "lab" in queue_html
    assert kube.find(kinds.RAYCLUSTER, "doomed", "team-w") is None
    assert kube.find(kinds.RAYCLUSTER, "kept", "team-w") is not None


def test_outside_a_notebook_the_same_calls_print_tables(
    apiserver: ServerProcess, kube: Kube, capsys: pytest.CaptureFixture[str]
) -> None:
    from codeflare.sdk.widgets import view_clusters, view_queues

    with Client(config.from_kubeconfig(apiserver.kubeconfig)) as client:
        rows = view_clusters("team-w", client)
        view = view_queues("team-w", client)
    printed = capsys.readouterr().out
    assert "kept" in [r.name for r in rows if r.kind == "RayCluster"]
    assert "My work" in printed and "kept" in printed and "Queued" in printed
    assert "Queues" in printed and "cq-w" in printed
    assert [cq.name for cq in view.cluster_queues] == ["cq-w"]
