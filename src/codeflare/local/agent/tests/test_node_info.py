"""Host capacity: CPUs and memory always, NVIDIA GPUs from nvidia-smi when it is on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codeflare.local.agent import node_info


@pytest.fixture()
def fake_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "bin" / "nvidia-smi"
    script.parent.mkdir()
    line = "echo 'NVIDIA Made Up 40GB, 40960 MiB'\n"
    script.write_text("#!/bin/sh\n" + line + line)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    return script


def test_fake_nvidia_smi_gpus_become_resource_and_labels(fake_nvidia_smi: Path) -> None:
    capacity = node_info.detect_node_capacity(use_nvml=False)

    assert capacity.allocatable["nvidia.com/gpu"] == "2"
    assert capacity.labels == {
        "nvidia.com/gpu.product": "NVIDIA-Made-Up-40GB",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.memory": "40960",
    }


def test_no_nvidia_smi_means_no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no nvidia-smi

    capacity = node_info.detect_node_capacity(use_nvml=False)

    assert capacity.gpus == []
    assert "nvidia.com/gpu" not in capacity.allocatable
    assert capacity.labels == {}
    assert int(capacity.allocatable["cpu"]) >= 1
    assert capacity.memory_bytes > 0
    assert int(capacity.allocatable["memory"]) == capacity.memory_bytes


def test_failing_nvidia_smi_means_no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))

    assert node_info.detect_gpus(use_nvml=False) == []


def test_module_imports_without_ray_or_other_codeflare_modules() -> None:
    code = (
        "import sys, codeflare.local.agent.node_info; "
        "heavy = [m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'psutil'))]; "
        "ours = [m for m in sys.modules if m.startswith('codeflare.') and m not in "
        "('codeflare.local', 'codeflare.local.agent', 'codeflare.local.agent.node_info')]; "
        "assert not heavy and not ours, (heavy, ours)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
