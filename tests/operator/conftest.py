"""Fixtures shared by the operator tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeflare.kube import config
from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess


@pytest.fixture
def kube(fresh_apiserver: ServerProcess) -> Iterator[Kube]:
    """A client of the test's own API server."""
    client = Kube(config.from_kubeconfig(fresh_apiserver.kubeconfig))
    try:
        yield client
    finally:
        client.close()
