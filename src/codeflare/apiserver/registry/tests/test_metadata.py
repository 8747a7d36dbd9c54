"""ObjectMeta update rules: immutable identity, deletion fields, no new finalizers while deleting."""

from __future__ import annotations

from typing import Any

import pytest

from codeflare.apiserver.registry.metadata import validate_meta_update
from codeflare.k8s.schema.field import ErrorType, FieldError


def fields(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


# --- updates ---------------------------------------------------------------------------------------

STORED = {
    "name": "demo",
    "namespace": "team-a",
    "uid": "u1",
    "creationTimestamp": "2026-11-30T10:00:00Z",
    "resourceVersion": "5",
    "finalizers": ["a.io/x"],
}


def test_mutable_fields_may_change() -> None:
    new = dict(STORED, labels={"a": "b"}, resourceVersion="6", generateName="x-")
    assert validate_meta_update(STORED, new) == []


def test_system_fields_left_empty_count_as_unchanged() -> None:
    new = {"name": "demo", "namespace": "team-a"}
    assert validate_meta_update(STORED, new) == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("name", "other"),
        ("namespace", "team-b"),
        ("uid", "u2"),
        ("creationTimestamp", "2020-01-01T00:00:00Z"),
        ("deletionTimestamp", "2026-11-30T11:00:00Z"),
        ("deletionGracePeriodSeconds", 0),
    ],
)
def test_immutable_fields(key: str, value: Any) -> None:
    errs = validate_meta_update(STORED, dict(STORED, **{key: value}))
    assert [e.message() for e in errs] == [
        f"metadata.{key}: Invalid value: {_json(value)}: field is immutable"
    ]


def _json(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def test_no_new_finalizers_while_deleting() -> None:
    deleting = dict(STORED, deletionTimestamp="2026-11-30T11:00:00Z")
    assert validate_meta_update(deleting, dict(deleting, finalizers=[])) == []
    errs = validate_meta_update(deleting, dict(deleting, finalizers=["a.io/x", "b.io/y"]))
    assert fields(errs) == [(ErrorType.FORBIDDEN, "metadata.finalizers")]
    assert "b.io/y" in errs[0].detail
