"""The prepared GPU check (benchmarks/gpu_check.py) against stand-in ``nvidia-smi`` commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"


def _fake_smi(tmp_path: Path, listed: int, queried: int) -> dict[str, str]:
    """An ``nvidia-smi`` whose ``-L`` lists ``listed`` H200s and whose CSV query reports ``queried``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listing = "\n".join(f'echo "GPU {i}: NVIDIA H200 (UUID: GPU-{i})"' for i in range(listed))
    query = "\n".join('echo "NVIDIA H200, 143771 MiB"' for _ in range(queried))
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\nif [ "$1" = "-L" ]; then\n{listing}\nelse\n{query}\nfi\n')
    smi.chmod(0o755)
    # no torch witness here: python -S keeps site-packages (and any torch) out of the script
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "--no-write"], env=env, capture_output=True, text=True, timeout=60
    )


def test_the_node_reports_the_gpus_the_machine_has(tmp_path: Path) -> None:
    result = _run(_fake_smi(tmp_path, listed=2, queried=2))

    assert result.returncode == 0, result.stderr
    assert "| Node `allocatable[\"nvidia.com/gpu\"]` / labels | 2 | NVIDIA-H200 |" in result.stdout
    assert "| nvidia-smi -L | 2 | NVIDIA H200 |" in result.stdout
    assert "`nvidia.com/gpu.product=NVIDIA-H200`" in result.stdout
    assert "matches the machine's" in result.stdout


def test_a_count_the_machine_does_not_have_fails_the_check(tmp_path: Path) -> None:
    result = _run(_fake_smi(tmp_path, listed=2, queried=1))

    assert result.returncode == 1
    assert "DOES NOT match" in result.stdout
