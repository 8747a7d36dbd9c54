"""What this host offers to the cluster: CPUs, memory and NVIDIA GPUs, as a Node would show them.

The agent publishes the result as the Node's ``capacity``/``allocatable`` (Kubernetes quantity
strings) and labels (``nvidia.com/gpu.product``, ``nvidia.com/gpu.count``). GPUs are found with
``nvidia-smi`` on PATH, or NVML through ``pynvml`` when that is importable; no GPU is a normal
answer, never an error. This module imports only the standard library (it must load on a GPU
host where Ray is absent) and it decides nothing about scheduling.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
_NVIDIA_SMI_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as the driver reports it."""

    name: str
    memory_mib: int | None = None


@dataclass(frozen=True)
class NodeCapacity:
    """The host's resources and the labels describing them."""

    cpus: int
    memory_bytes: int
    gpus: list[GpuInfo] = field(default_factory=list)

    @property
    def allocatable(self) -> dict[str, str]:
        """Kubernetes quantity strings: ``{"cpu": "2", "memory": "25769803776", "nvidia.com/gpu": "1"}``
        (memory in bytes: this module formats no quantities; the Node writes it in binary units)."""
        result = {"cpu": str(self.cpus), "memory": str(self.memory_bytes), "pods": "110"}
        if self.gpus:
            result[GPU_RESOURCE] = str(len(self.gpus))
        return result

    @property
    def labels(self) -> dict[str, str]:
        """GPU feature-discovery style labels (empty without GPUs)."""
        if not self.gpus:
            return {}
        labels = {
            GPU_PRODUCT_LABEL: gpu_product_label(self.gpus[0].name),
            GPU_COUNT_LABEL: str(len(self.gpus)),
        }
        if self.gpus[0].memory_mib is not None:
            labels[GPU_MEMORY_LABEL] = str(self.gpus[0].memory_mib)
        return labels


def detect_node_capacity(use_nvml: bool = True) -> NodeCapacity:
    """CPUs usable by this process, memory (cgroup limit if lower than RAM), and GPUs."""
    return NodeCapacity(cpus=detect_cpus(), memory_bytes=detect_memory_bytes(), gpus=detect_gpus(use_nvml))


def cpu_overcommit() -> int:
    """How many Ray CPUs local mode offers per host core (``$CODEFLARE_LOCAL_CPU_OVERCOMMIT``, default 4).

    Local Ray clusters are host processes sharing the cores, and Ray's CPUs are logical: a
    laptop with 2 cores can run a head and two workers of 1 CPU each. The Node and the default
    ClusterQueue advertise ``cores x overcommit`` so the capacity check still applies, just to
    logical CPUs. Set it to 1 for strict physical accounting.
    """
    raw = os.environ.get("CODEFLARE_LOCAL_CPU_OVERCOMMIT", "4")
    try:
        return max(1, int(raw))
    except ValueError:
        return 4


def detect_cpus() -> int:
    """CPUs this process may run on, bounded by a cgroup v2 CPU quota when one is set."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_limit()
    if quota is not None:
        cpus = min(cpus, max(1, int(quota)))
    return max(1, cpus)


def detect_memory_bytes() -> int:
    """Physical memory, bounded by a cgroup v2 memory limit when one is set."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = _read_int(Path("/sys/fs/cgroup/memory.max"))
    return min(total, limit) if limit else total


def detect_gpus(use_nvml: bool = True) -> list[GpuInfo]:
    """NVIDIA GPUs via ``nvidia-smi`` on PATH, else NVML; empty when neither finds any."""
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        gpus = _gpus_from_nvidia_smi(smi)
        if gpus is not None:
            return gpus
    if use_nvml:
        return _gpus_from_nvml()
    return []


def gpu_product_label(name: str) -> str:
    """A label-safe product name: ``"NVIDIA H100 80GB HBM3"`` -> ``"NVIDIA-H100-80GB-HBM3"``."""
    value = re.sub(r"\s+", "-", name.strip())
    value = re.sub(r"[^A-Za-z0-9_.-]", "", value)
    return value[:63].strip("-_.")


# -- internals ---------------------------------------------------------------------------------


def _gpus_from_nvidia_smi(smi: str) -> list[GpuInfo] | None:
    try:
        result = subprocess.run(
            [smi, "--query-gpu=name,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=_NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("nvidia-smi at %s failed to run: %s", smi, exc)
        return None
    if result.returncode != 0:
        # No driver loaded, no device: a host without usable GPUs.
        logger.info("nvidia-smi exited %d: %s", result.returncode, result.stderr.strip()[:200])
        return []
    return _parse_smi_csv(result.stdout)


def _parse_smi_csv(text: str) -> list[GpuInfo]:
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, memory = line.partition(",")
        digits = re.match(r"\s*(\d+)", memory)
        gpus.append(GpuInfo(name=name.strip(), memory_mib=int(digits.group(1)) if digits else None))
    return gpus


def _gpus_from_nvml() -> list[GpuInfo]:
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError: no driver or no device
        logger.info("NVML unavailable: %s", exc)
        return []
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            device = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(device)
            if isinstance(name, bytes):
                name = name.decode()
            memory = pynvml.nvmlDeviceGetMemoryInfo(device).total // (1 << 20)
            gpus.append(GpuInfo(name=str(name), memory_mib=int(memory)))
        return gpus
    finally:
        pynvml.nvmlShutdown()


def _cgroup_cpu_limit() -> float | None:
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return int(quota) / int(period)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
