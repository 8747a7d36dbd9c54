"""Kueue's controller and scheduler integration cases, black-box through the real server and operator.

One embedded API server and one operator (in a thread) per module; every case of
:mod:`tests.conformance.controller_cases` runs in its own namespace with its own queue names
(see :mod:`tests.conformance.controller_runner`), created and checked with the official
``kubernetes`` client. The operator runs with Kueue's defaults where they matter here: no node
capacity check (Kueue has none), a short backoff. docs/conformance/controllers.md lists every
case with its Kueue source and, where we differ, why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s

from tests.conformance.controller_cases import CASES
from tests.conformance.controller_runner import operator_client, run_case, unlisted
from tests.support.apiserver import ServerProcess

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance" / "controllers.md"
OPERATOR = {"queueing": {"backoffTime": "1s", "capacityCheck": False}, "appwrapper": {"enabled": False}}


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[k8s.ApiClient]:
    with operator_client(apiserver, OPERATOR) as client:
        yield client


@pytest.mark.parametrize("key", list(CASES), ids=[f"c{i:02d}" for i in range(len(CASES))])
def test_kueue_case(api: k8s.ApiClient, key: str) -> None:
    tag = f"c{list(CASES).index(key):02d}"
    run_case(api, tag, CASES[key])


def test_the_suite_ports_at_least_fifty_cases_each_citing_its_source_and_listed_in_the_docs() -> None:
    assert len(CASES) >= 50
    assert all(".go" in key.split(":")[0] for key in CASES)
    assert unlisted(CASES, DOC) == []
