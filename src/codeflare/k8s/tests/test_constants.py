"""Shared keys are valid Kubernetes qualified names, and none is defined twice."""

from __future__ import annotations

from codeflare.k8s import constants
from codeflare.k8s.names import is_qualified_name

KEYS = {name: value for name, value in vars(constants).items()
        if name.endswith(("_LABEL", "_ANNOTATION", "_FINALIZER"))}


def test_every_key_is_a_qualified_name() -> None:
    assert KEYS
    assert {name: is_qualified_name(value) for name, value in KEYS.items() if is_qualified_name(value)} == {}


def test_no_key_is_defined_twice() -> None:
    assert len(set(KEYS.values())) == len(KEYS)
