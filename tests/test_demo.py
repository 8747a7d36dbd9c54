"""``codeflare demo`` runs end to end, as a newcomer runs it, in a home of its own.

Checks what the newcomer sees: exit 0, the second job waiting with an "insufficient quota"
reason, and two pi estimates in the results table.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codeflare.local.mode import LocalMode
from tests.sdk.conftest import venv_path

pytestmark = pytest.mark.ray


def test_demo(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "PATH": venv_path(), "COLUMNS": "160", "CODEFLARE_HOME": str(home)}
    try:
        result = subprocess.run([sys.executable, "-m", "codeflare.cli.main", "demo", "--home", str(home)],
                                env=env, capture_output=True, text=True, timeout=600, check=False)
    finally:
        if (home / "processes.json").exists():
            LocalMode(home).down()

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert re.search(r"pi-second waits in the queue: .*insufficient quota", output), output
    estimates = re.findall(r"\b3\.\d{3,}\b", result.stdout)
    assert len(estimates) >= 2, output
    assert all(abs(float(e) - 3.1416) < 0.1 for e in estimates[:2]), estimates
