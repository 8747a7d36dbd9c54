"""Kubernetes' own CEL rule cases hold here: what passes there passes, what fails fails alike.

The data is :mod:`cel_cases`, ported from upstream ``TestValidationExpressions``; each rule is
put on the case's schema node and evaluated against the case's object as the API server would.
"""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.k8s.schema.rules import compile_tree, evaluate
from codeflare.k8s.schema.tests.cel_cases import CASES, Case
from codeflare.k8s.schema.tests.samples import messages


def _run(case: Case, rule: str) -> list[str]:
    schema: dict[str, Any] = {**case.schema, "x-kubernetes-validations": [{"rule": rule}]}
    tree = compile_tree(schema, resource_root=case.is_root)
    assert tree is not None
    return messages(evaluate(tree, case.obj, case.old))


VALID = [(case, rule) for case in CASES for rule in case.valid]
FAILING = [(case, rule, text) for case in CASES for rule, text in case.errors.items()]


@pytest.mark.parametrize(("case", "rule"), VALID, ids=[f"{c.name}: {r}" for c, r in VALID])
def test_rule_holds(case: Case, rule: str) -> None:
    assert _run(case, rule) == []


@pytest.mark.parametrize(("case", "rule", "text"), FAILING, ids=[f"{c.name}: {r}" for c, r, _ in FAILING])
def test_rule_fails_with_kubernetes_words(case: Case, rule: str, text: str) -> None:
    errors = _run(case, rule)
    assert errors, f"{rule} should fail"
    for message in errors:
        assert text in message
        assert f"evaluating rule: {rule}" in message


@pytest.mark.parametrize("case", [c for c in CASES if c.skipped], ids=lambda c: c.name)
def test_transition_rule_without_an_old_value_is_not_evaluated(case: Case) -> None:
    assert _run(case, "oldSelf != oldSelf") == []  # a rule that fails whenever it runs
