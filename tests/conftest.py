"""Shared fixtures for cross-component tests: a real embedded API server process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.apiserver import ServerProcess


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server per test module (starting one takes about a second)."""
    server = ServerProcess(tmp_path_factory.mktemp("apiserver")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_apiserver(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of the test's own, for tests that restart or kill it."""
    server = ServerProcess(tmp_path / "state").start()
    try:
        yield server
    finally:
        server.stop()
