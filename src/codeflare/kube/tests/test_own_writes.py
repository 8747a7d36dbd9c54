"""OwnWrites: our writes win over older informer copies, and never outlive the object."""

from __future__ import annotations

from typing import Any

from codeflare.kube import kinds
from codeflare.kube.informer import OwnWrites

KEY = ("ns", "a")


def obj(rv: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": "a", "resourceVersion": rv}}


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_write_is_read_until_the_cache_catches_up() -> None:
    own = OwnWrites()
    own.remember(kinds.POD, obj("5"))

    assert own.get(kinds.POD, KEY, obj("4"))["metadata"]["resourceVersion"] == "5"  # cache behind
    assert own.get(kinds.POD, KEY, None)["metadata"]["resourceVersion"] == "5"  # cache has none yet
    assert own.get(kinds.CONFIGMAP, KEY, obj("4"))["metadata"]["resourceVersion"] == "4"  # other kind
    assert own.get(kinds.POD, KEY, obj("7"))["metadata"]["resourceVersion"] == "7"  # caught up
    assert own.get(kinds.POD, KEY, obj("4"))["metadata"]["resourceVersion"] == "4"  # entry gone


def test_events_drop_the_write_once_seen_or_deleted() -> None:
    own = OwnWrites()
    own.remember(kinds.POD, obj("5"))
    own.seen(kinds.POD, "MODIFIED", obj("4"))  # an older event: keep ours
    assert own.overlay(kinds.POD, {KEY: obj("4")})[KEY]["metadata"]["resourceVersion"] == "5"
    own.seen(kinds.POD, "DELETED", obj("4"))  # deleted: never resurrect it
    assert own.overlay(kinds.POD, {}) == {}


def test_a_write_never_reported_expires() -> None:
    clock = Clock()
    own = OwnWrites(ttl=30.0, clock=clock)
    own.remember(kinds.POD, obj("5"))
    clock.now = 29.0
    assert KEY in own.overlay(kinds.POD, {})
    clock.now = 30.0
    assert own.overlay(kinds.POD, {}) == {}


def test_opaque_resource_versions_trust_the_cache() -> None:
    own = OwnWrites()
    own.remember(kinds.POD, obj("b"))
    assert own.get(kinds.POD, KEY, obj("a"))["metadata"]["resourceVersion"] == "a"
