"""codeflare-sdk's guided-demo flows, ported to our SDK (examples/guided/), run against local mode.

Each notebook runs through a real Jupyter kernel (nbclient) against one local mode shared by the
module (started once: the notebooks assume it is up, as a user's ``codeflare local up``); each
names the codeflare-sdk notebook it ports (project-codeflare/codeflare-sdk
demo-notebooks/guided-demos, v0.40.x). The assertions read what the notebook printed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.sdk.conftest import Local, local

__all__ = ["local"]

pytestmark = pytest.mark.ray

GUIDED = Path(__file__).resolve().parents[1] / "examples" / "guided"

# notebook -> what its output must show (ported flow in the notebook's first cell)
EXPECTED = {
    "0_basic_cluster.ipynb": ["status: CodeFlareClusterStatus.READY", "dashboard: http://127.0.0.1:",
                              "listed: ['raytest']", "raytest down"],
    "1_cluster_job_client.ipynb": ["epoch 2", "status: SUCCEEDED", "listed: 1", "jobtest done"],
    "2_interactive.ipynb": ["squares: 285", "interactivetest down"],
    "3_autoscaling.ipynb": ["workers at start: 1", "workers while the job runs: 2",
                            "job: SUCCEEDED ran on 3 nodes", "workers when idle: 1", "autoscaled down"],
    "4_rayjob_existing_cluster.ipynb": ["nodes 2", "final: Complete SUCCEEDED", "cluster still there:"],
    "5_rayjob_own_cluster.ipynb": ["final: Complete SUCCEEDED", "cluster gone: True", "kept logs: True"],
    "6_single_entrypoint.ipynb": ["before: []", "details: entrypoint-demo", "job: Complete SUCCEEDED True",
                                  "same cluster: CodeFlareClusterStatus.READY", "entrypoint-demo down"],
    "7_checkpointing.ipynb": ["saved step 2", "resumed: SUCCEEDED True True", "ckpt down"],
}


def _run(path: Path, cwd: Path) -> str:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=400, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return "\n".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.get("outputs", []) if output.get("output_type") == "stream"
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_guided_notebook_runs(name: str, local: Local, tmp_path: Path) -> None:
    started = time.monotonic()
    text = _run(GUIDED / name, tmp_path)
    for expected in EXPECTED[name]:
        assert expected in text, text
    print(f"{name}: {time.monotonic() - started:.0f}s")
