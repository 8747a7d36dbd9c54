"""Kueue's admission fair sharing integration cases, black-box through the real server and an
operator with ``queueing.admissionFairSharing`` (half-life 1 s, sampling 1 s: Kueue's suite) and
fair sharing on, as Kueue's fairsharing suite configures its manager.

Same runner as :mod:`tests.conformance.test_controllers`; the cases are
:mod:`tests.conformance.cases_admission_fairsharing`, listed in docs/conformance/controllers.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s

from tests.conformance.cases_admission_fairsharing import AFS_CASES
from tests.conformance.controller_runner import operator_client, run_case, unlisted
from tests.support.apiserver import ServerProcess

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance" / "controllers.md"
OPERATOR = {
    "queueing": {
        "backoffTime": "1s",
        "capacityCheck": False,
        "fairSharing": {"enable": True},
        "admissionFairSharing": {"usageHalfLifeTime": "1s", "usageSamplingInterval": "1s"},
    },
    "appwrapper": {"enabled": False},
}


@pytest.fixture(scope="module")
def api(apiserver: ServerProcess) -> Iterator[k8s.ApiClient]:
    with operator_client(apiserver, OPERATOR) as client:
        yield client


@pytest.mark.parametrize("key", list(AFS_CASES), ids=[f"afs{i:02d}" for i in range(len(AFS_CASES))])
def test_kueue_admission_fair_sharing_case(api: k8s.ApiClient, key: str) -> None:
    run_case(api, f"afs{list(AFS_CASES).index(key):02d}", AFS_CASES[key])


def test_every_admission_fair_sharing_case_cites_its_source_and_is_listed() -> None:
    assert all(key.startswith("fair_sharing_test.go: ") for key in AFS_CASES)
    assert unlisted(AFS_CASES, DOC) == []
