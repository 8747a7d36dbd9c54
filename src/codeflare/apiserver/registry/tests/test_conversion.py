"""Pure parts of CRD conversion: what survives of a webhook's metadata, the Warning text, spec checks.

The metadata rule is kube-apiserver's (apiextensions-apiserver conversion/webhook_converter.go,
restoreObjectMeta): everything but labels and annotations comes from the original object.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.apiserver.registry.conversion import (
    ConversionFailed,
    _checked,
    deprecation_warning,
    parse_conversion,
)

_text = st.text(alphabet="abcxyz-./", min_size=1, max_size=8)
_strings = st.dictionaries(_text, _text, max_size=3)
_meta_extras = st.dictionaries(
    st.sampled_from(["generation", "resourceVersion", "finalizers", "creationTimestamp", "ownerReferences"]),
    st.one_of(st.integers(), _text, st.lists(_text, max_size=2)),
    max_size=4,
)


def _original(labels: dict[str, str], extras: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "w", "namespace": "ns", "uid": "u-1", **extras}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "g.example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1}}


@given(_strings, _meta_extras, _strings, _strings, _meta_extras)
def test_only_labels_and_annotations_come_from_the_webhook(
    labels: dict[str, str],
    extras: dict[str, Any],
    new_labels: dict[str, str],
    new_annotations: dict[str, str],
    changed: dict[str, Any],
) -> None:
    original = _original(labels, extras)
    meta = dict(original["metadata"], **changed, labels=new_labels, annotations=new_annotations)
    converted = {
        "apiVersion": "g.example.com/v2",
        "kind": "Widget",
        "metadata": meta,
        "spec": {"dimension": 1},
    }
    out = _checked(original, converted, "g.example.com/v2", 0)
    expected = dict(original["metadata"], labels=new_labels, annotations=new_annotations)
    assert out["metadata"] == expected
    assert out["spec"] == {"dimension": 1}


@given(_strings)
def test_labels_the_webhook_drops_are_dropped(labels: dict[str, str]) -> None:
    original = _original(labels, {})
    converted = {
        "apiVersion": "g.example.com/v2",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u-1"},
    }
    assert "labels" not in _checked(original, converted, "g.example.com/v2", 0)["metadata"]


# (what the webhook changed, what the error says) - webhook_converter.go's validateConvertedObject
BAD = [
    ({"kind": "Gadget"}, "must have the same kind"),
    ({"apiVersion": "g.example.com/v1"}, "invalid apiVersion"),
    ({"metadata": {"name": "other", "namespace": "ns", "uid": "u-1"}}, "must have the same name"),
    ({"metadata": {"name": "w", "namespace": "other", "uid": "u-1"}}, "must have the same namespace"),
    ({"metadata": {"name": "w", "namespace": "ns", "uid": "u-2"}}, "must have the same uid"),
    ({"metadata": "nope"}, "missing metadata"),
    (
        {"metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "labels": {"a": 1}}},
        "invalid metadata.labels",
    ),
]


@pytest.mark.parametrize(("change", "why"), BAD)
def test_converted_objects_are_checked(change: dict[str, Any], why: str) -> None:
    original = _original({}, {})
    converted = {**original, "apiVersion": "g.example.com/v2", **change}
    with pytest.raises(ConversionFailed, match=why):
        _checked(original, converted, "g.example.com/v2", 3)


def test_deprecation_warning_default_and_custom_text() -> None:
    assert deprecation_warning("g.example.com", "Widget", {"name": "v1"}) == ""
    assert deprecation_warning("g.example.com", "Widget", {"name": "v1", "deprecated": True}) == (
        "g.example.com/v1 Widget is deprecated"
    )
    custom = {"name": "v1", "deprecated": True, "deprecationWarning": "use v2"}
    assert deprecation_warning("g.example.com", "Widget", custom) == "use v2"


def test_review_version_is_the_first_one_the_server_speaks() -> None:
    hook = {"clientConfig": {"url": "https://h/"}, "conversionReviewVersions": ["v9", "v1beta1", "v1"]}
    parsed = parse_conversion({"conversion": {"strategy": "Webhook", "webhook": hook}})
    assert parsed is not None and parsed.review_version == "v1beta1" and parsed.url == "https://h/"
    assert parse_conversion({"conversion": {"strategy": "None"}}) is None
    assert parse_conversion({}) is None
