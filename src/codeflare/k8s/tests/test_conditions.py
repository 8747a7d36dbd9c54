"""metav1 condition semantics: lastTransitionTime moves only with the status; changes are reported."""

from __future__ import annotations

from codeflare.k8s.conditions import (
    condition_status,
    conditions_of,
    find_condition,
    is_condition_true,
    set_condition,
)
from codeflare.k8s.types import Obj

T0, T1 = "2024-01-01T00:00:00Z", "2024-01-01T00:05:00Z"


def test_new_condition_is_added_with_the_time() -> None:
    conditions: list[Obj] = []
    assert set_condition(conditions, "Ready", True, "Up", "all good", T0, observed_generation=3)
    assert conditions == [{"type": "Ready", "status": "True", "reason": "Up", "message": "all good",
                           "lastTransitionTime": T0, "observedGeneration": 3}]


def test_transition_time_moves_only_when_the_status_changes() -> None:
    conditions: list[Obj] = []
    set_condition(conditions, "Ready", "False", "Starting", "wait", T0)
    assert set_condition(conditions, "Ready", "False", "Pulling", "images", T1)
    assert find_condition(conditions, "Ready") == {
        "type": "Ready", "status": "False", "reason": "Pulling", "message": "images",
        "lastTransitionTime": T0,
    }
    assert set_condition(conditions, "Ready", "True", "Up", "ok", T1)
    assert find_condition(conditions, "Ready")["lastTransitionTime"] == T1  # type: ignore[index]


def test_setting_the_same_condition_again_changes_nothing() -> None:
    conditions: list[Obj] = []
    set_condition(conditions, "Ready", True, "Up", "ok", T0, 1)
    before = [dict(c) for c in conditions]
    assert not set_condition(conditions, "Ready", "True", "Up", "ok", T1, 1)
    assert conditions == before
    assert set_condition(conditions, "Ready", "True", "Up", "ok", T1, 2)  # a new generation is a change
    assert conditions[0]["observedGeneration"] == 2 and conditions[0]["lastTransitionTime"] == T0


def test_other_conditions_and_extra_keys_are_kept() -> None:
    conditions: list[Obj] = [{"type": "A", "status": "True"}, {"type": "B", "status": "False", "x": 1}]
    set_condition(conditions, "B", "False", "R", "m", T0)
    assert conditions[0] == {"type": "A", "status": "True"}
    assert conditions[1]["x"] == 1 and conditions[1]["lastTransitionTime"] == T0  # was missing


def test_getters() -> None:
    obj: Obj = {"status": {"conditions": [{"type": "Ready", "status": "True"},
                                          {"type": "X", "status": "Unknown"}]}}
    conditions = conditions_of(obj)
    assert is_condition_true(conditions, "Ready") and not is_condition_true(conditions, "X")
    assert condition_status(conditions, "X") == "Unknown" and condition_status(conditions, "Y") is None
    assert find_condition(None, "Ready") is None and conditions_of({}) == []
