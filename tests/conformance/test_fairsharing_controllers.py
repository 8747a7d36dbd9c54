"""Kueue's fair-sharing integration cases, black-box through the real server and an operator with
``queueing.fairSharing.enable`` (as Kueue's fairsharing suite configures its manager).

Same runner as :mod:`tests.conformance.test_controllers` (each case in its own namespace with
prefixed cluster-scoped names); the cases are :mod:`tests.conformance.cases_fairsharing`, listed
in docs/conformance/controllers.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s

from tests.conformance.cases_fairsharing import FAIR_CASES
from tests.conformance.controller_runner import operator_client, run_case, unlisted
from tests.support.apiserver import ServerProcess

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance" / "controllers.md"
OPERATOR = {
    "queueing": {"backoffTime": "1s", "capacityCheck": False, "fairSharing": {"enable": True}},
    "appwrapper": {"enabled": False},
}


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[k8s.ApiClient]:
    with operator_client(apiserver, OPERATOR) as client:
        yield client


@pytest.mark.parametrize("key", list(FAIR_CASES), ids=[f"fs{i:02d}" for i in range(len(FAIR_CASES))])
def test_kueue_fair_sharing_case(api: k8s.ApiClient, key: str) -> None:
    run_case(api, f"fs{list(FAIR_CASES).index(key):02d}", FAIR_CASES[key])


def test_every_fair_sharing_case_cites_its_source_and_is_listed() -> None:
    assert all(key.startswith("fair_sharing_test.go: ") for key in FAIR_CASES)
    assert unlisted(FAIR_CASES, DOC) == []
