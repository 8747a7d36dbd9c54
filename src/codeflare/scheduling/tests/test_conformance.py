"""Kueue's own scheduler test cases (ported as data, see ``conformance/``) run against the engine.

Every case of ``flavorassigner_test.go``, ``preemption_test.go`` (with ``preemption_hierarchical_test.go``
and ``preemption_fair_test.go``) and ``scheduler_test.go`` (v0.14.8)
that the extraction could read is in the YAML files. Runnable cases must decide as Kueue does;
a case that uses a Kueue feature we do not implement carries its reason and must be listed in
``docs/conformance/engine.md``, which must also agree with what the runnable cases do now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codeflare.scheduling.tests.conformance.driver import load_cases, render_docs, run

CASES = load_cases()
DOCS = Path(__file__).resolve().parents[4] / "docs" / "conformance" / "engine.md"


def test_enough_cases_are_ported() -> None:
    assert len(CASES) >= 150
    assert len({case["id"] for case, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("case", "shared"),
    [
        pytest.param(case, shared, id=f"{case['id']} {case['name'][:60]}")
        for case, shared, _ in CASES
        if case["status"] == "run"
    ],
)
def test_case_decides_as_kueue(case: dict, shared: dict) -> None:
    assert run(case, shared) == []


def test_every_case_is_listed_with_its_status() -> None:
    differing = [case for case, _, _ in CASES if case["status"] != "run"]
    assert all(case.get("reason") for case in differing)
    assert DOCS.read_text() == render_docs(), (
        "regenerate: python -m codeflare.scheduling.tests.conformance.driver"
    )
