"""The examples run as users run them: the script as a process, the notebook through a kernel.

Both start their own local mode in a temporary home; the tests point ``TMPDIR`` at the test's
directory so that, if an example fails midway, teardown finds that home and stops local mode.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeflare.local.mode import LocalMode
from tests.sdk.conftest import venv_path

pytestmark = pytest.mark.ray

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """TMPDIR and PATH for the example; afterwards stop any local mode it left running."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PATH", venv_path())
    monkeypatch.delenv("CODEFLARE_HOME", raising=False)
    try:
        yield tmp_path
    finally:
        for record in tmp_path.glob("codeflare-home-*/processes.json"):
            LocalMode(record.parent).down()


def _results(text: str) -> list[str]:
    return [line for line in text.splitlines() if "pi = 3." in line and "SUCCEEDED" in line]


def test_quickstart_script(tmpdir_env: Path) -> None:
    result = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")], env=dict(os.environ),
                            capture_output=True, text=True, timeout=600, check=False)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "pi-second waits: WaitingForQuota: insufficient quota" in result.stdout
    assert len(_results(result.stdout)) == 2, result.stdout
    assert "cleaned up" in result.stdout
    assert not list(tmpdir_env.glob("codeflare-home-*")), "the example left its home behind"


def test_quickstart_notebook(tmpdir_env: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(EXAMPLES / "quickstart.ipynb", as_version=4)
    resources = {"metadata": {"path": str(tmpdir_env)}}
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources=resources).execute()

    text = "\n".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.get("outputs", []) if output.get("output_type") == "stream"
    )
    assert "pi-second waits: WaitingForQuota: insufficient quota" in text
    assert len(_results(text)) == 2, text
    assert "cleaned up" in text
