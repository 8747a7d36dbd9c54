"""Resource amounts the codeflare-sdk way: CPUs as cores, memory as GiB, Ray's whole CPUs."""

from __future__ import annotations

import pytest

from codeflare.api.amounts import cpu_amount, memory_amount, ray_num_cpus, whole_count
from codeflare.k8s.quantity import QuantityError


def test_cpu_and_memory_amounts_follow_codeflare_sdk() -> None:
    assert cpu_amount(0.5) == "500m" and cpu_amount("2000m") == "2" and cpu_amount(2) == "2"
    assert memory_amount(8) == "8Gi" and memory_amount(0.5) == "512Mi" and memory_amount("8G") == "8G"
    assert memory_amount("1024Mi") == "1Gi"
    with pytest.raises(QuantityError):
        memory_amount(True)


def test_ray_cpus_and_whole_counts() -> None:
    assert ray_num_cpus("1500m") == 1 and ray_num_cpus("500m") == 1 and ray_num_cpus("500m", minimum=0) == 0
    assert whole_count("2") == 2
    with pytest.raises(QuantityError, match="whole number"):
        whole_count("1500m")
