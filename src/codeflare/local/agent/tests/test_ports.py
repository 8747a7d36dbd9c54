"""Port reservations: disjoint across owners and processes, released on demand."""

from __future__ import annotations

import multiprocessing
import socket
from pathlib import Path

import pytest

from codeflare.local.agent.ports import PortAllocator, PortsExhaustedError


def _reserve_many(state_dir: str, owner: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    allocator = PortAllocator(Path(state_dir))
    ports: list[int] = []
    for i in range(5):
        ports += allocator.reserve_node_ports(f"{owner}-{i}", head=True, worker_ports=8).all_ports()
    queue.put(ports)


def test_node_ports_are_distinct_and_cover_every_ray_port(tmp_path: Path) -> None:
    allocator = PortAllocator(tmp_path)
    head = allocator.reserve_node_ports("c1/head", head=True, worker_ports=16)
    worker = allocator.reserve_node_ports("c1/w-0", head=False, worker_ports=16)

    assert head.gcs and head.dashboard and head.client_server
    assert worker.gcs is None and worker.dashboard is None
    assert head.max_worker - head.min_worker == 15
    all_ports = head.all_ports() + worker.all_ports()
    assert len(all_ports) == len(set(all_ports)) == 11 + 16 + 6 + 16


def test_two_processes_never_get_the_same_port(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_reserve_many, args=(str(tmp_path), f"p{i}", queue)) for i in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert not set(results[0]) & set(results[1])
    assert len(PortAllocator(tmp_path).reservations()) == 10


def test_release_returns_ports_for_reuse(tmp_path: Path) -> None:
    allocator = PortAllocator(tmp_path, port_range=(21000, 21009))
    first = allocator.reserve("a", 10)
    with pytest.raises(PortsExhaustedError):
        allocator.reserve("b", 1)
    assert sorted(allocator.release("a")) == first
    assert allocator.reserve("b", 10) == first


def test_a_port_someone_listens_on_is_skipped(tmp_path: Path) -> None:
    block = PortAllocator(tmp_path / "probe", port_range=(24000, 24999)).reserve("probe", 4, contiguous=True)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", block[0]))
        busy.listen()
        allocator = PortAllocator(tmp_path / "real", port_range=(block[0], block[-1]))
        assert allocator.reserve("a", 3) == block[1:]


def test_release_prefix_frees_a_whole_cluster(tmp_path: Path) -> None:
    allocator = PortAllocator(tmp_path)
    allocator.reserve_node_ports("uid-a/head", head=True, worker_ports=4)
    allocator.reserve_node_ports("uid-a/small-0", head=False, worker_ports=4)
    allocator.reserve_node_ports("uid-b/head", head=True, worker_ports=4)

    assert sorted(allocator.release_prefix("uid-a/")) == ["uid-a/head", "uid-a/small-0"]
    assert list(allocator.reservations()) == ["uid-b/head"]
