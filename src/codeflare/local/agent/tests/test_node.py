"""The Node the agent registers: allocatable from the host's capacity, written as Kubernetes writes it."""

from __future__ import annotations

import pytest

from codeflare.local.agent import node_info
from codeflare.local.agent.node import node_object


@pytest.mark.parametrize(
    ("memory_bytes", "written"),
    [(24 << 30, "24Gi"), ((24 << 30) + 4096, "25165828Ki"), (3 << 20, "3Mi")],
)
def test_memory_is_written_in_binary_units(
    memory_bytes: int, written: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEFLARE_LOCAL_CPU_OVERCOMMIT", "4")
    gpu = node_info.GpuInfo(name="NVIDIA A100-SXM4-40GB", memory_mib=40960)
    node = node_object("host", node_info.NodeCapacity(cpus=2, memory_bytes=memory_bytes, gpus=[gpu]), "T")

    status = node["status"]
    assert status["allocatable"] == status["capacity"]
    assert status["allocatable"] == {"cpu": "8", "memory": written, "pods": "110", "nvidia.com/gpu": "1"}
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB"
    assert node["metadata"]["labels"]["codeflare.dev/local-agent"] == "true"
    assert [c["type"] for c in status["conditions"]] == ["Ready", "MemoryPressure", "DiskPressure"]
    assert all(c["lastHeartbeatTime"] == "T" for c in status["conditions"])
